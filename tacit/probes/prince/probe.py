"""The prince probe (PrinceProbe): its declaration and how it plans and finishes a run
(tacit.probes.prince says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.ask.base import AskSpec
from tacit.core.params import Options
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe
from tacit.probes.manifest_keys import RankedManifest, RankingCounts
from tacit.templates import TEMPLATES

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.templates import TemplateSet


@dataclass(frozen=True)
class PrinceOptions(Options):
    """Prince's probe's options."""

    templates: str | Path | TemplateSet = TEMPLATES.field()


class PrinceProbe(Probe[PrinceOptions]):
    name = "prince"
    report_class = "tacit.probes.prince.report:PrinceReport"
    manifest_keys = RankedManifest
    model_keys = RankingCounts
    description = "Prince (1978)'s own examples, both directions (the paper's Figure 4)."
    help = """No norms needed. Concept direction: is `person` named by `A <mask> has parents,
    siblings, relatives, a home, a pet, a car, a spouse, and a job.`? Property direction: how
    well does `Everyone knows that a country has <mask>.` recover her list (leader, duke,
    borders, president, queen, citizens, land, language, history)?"""
    options = PrinceOptions
    primary = Metric("ap_vocab", "AP", row="ap_vocab")
    metrics = (
        Metric("rank", "rank", greater_is_better=False, row="rank"),
        Metric("target_prob", "target probability", row="target_prob"),
    )
    keys = ("model", "direction")
    run_options = frozenset({"vocab"})
    asks = (AskSpec("vocabulary"),)

    def plan(self, models: Sequence[RunModel], values: PrinceOptions, run: Planning) -> Plan:
        from tacit.ask.base import Asking, choose
        from tacit.probes.prince.scoring import COLUMNS, TOP_K, prince_prompts
        from tacit.templates import load_templates

        ask = choose(values, self.asks, self.name)
        templates = load_templates(values.templates)
        ask.prepare(models, ask.needs(templates.retrieval, "", in_place=True), run)
        prompts = prince_prompts(ask.vocabulary, templates)
        asking = Asking(
            answers=lambda rows: [target.split() for target in rows["target"]],
            top_k=TOP_K,
            in_place=True,
        )
        work = ask.work(prompts, asking, COLUMNS)
        return Plan(work, values, ask=ask, state=templates)

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        from tacit.ask.paraphrase import TEMPLATE, paraphrase_columns, paraphrased

        templates, ask = plan.state, plan.asked
        added = dict(ask.finish(rows, manifest["models"]).record)
        added["templates"] = templates.record()
        keys = ["model", "direction", *([TEMPLATE] if paraphrased(rows) else [])]
        summary = rows[[*keys, "rank", "target_prob", "ap_vocab"]]
        if paraphrased(rows):
            summary = paraphrase_columns(summary, rows, ["model", "direction"], "ap_vocab")
        return Outcome(rows, summary, added, vocab=ask.vocabulary)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """The property direction (how well her list of a country's properties is recovered)
        first, then the concept direction."""
        directions = sorted(dict.fromkeys(summary["direction"]), key=lambda d: d != "property")
        return [(f"{d} direction", summary[summary["direction"] == d]) for d in directions]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        from tacit.probes.run_notes import scored_over

        over = scored_over(manifest)
        return {"vocabulary": over["vocabulary"], "templates": over["templates"]}
