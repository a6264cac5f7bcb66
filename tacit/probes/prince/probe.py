"""The prince probe (PrinceProbe): its declaration and how it plans and finishes a run
(tacit.probes.prince says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.params import Options
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe, Work
from tacit.probes.manifest_keys import RankedManifest, RankingCounts
from tacit.templates import TEMPLATES

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import RunOptions
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

    def plan(self, models: Sequence[RunModel], values: PrinceOptions, run: RunOptions) -> Plan:
        from tacit.ask.candidates import Candidates
        from tacit.ask.paraphrase import ITEM, paraphrased
        from tacit.probes.prince.scoring import WORD_NEEDS, prince_prompts, score_prince
        from tacit.templates import load_templates

        templates = load_templates(values.templates)
        candidates = Candidates.shared_vocabulary(models, run, WORD_NEEDS, self.name)
        vocab = candidates.vocab
        prompts = prince_prompts(vocab, templates)
        work = Work(
            prompts,
            ITEM if paraphrased(prompts) else "prompt",
            lambda scorer, rows, bar: score_prince(
                rows, scorer, vocab, progress=bar, offset=len(prompts)
            ),
            needs=WORD_NEEDS,
        )
        return Plan(work, values, candidates, state=(candidates, templates))

    def finish(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: RunOptions
    ) -> Outcome:
        from tacit.ask.paraphrase import TEMPLATE, paraphrase_columns, paraphrased

        candidates, templates = plan.state
        added = dict(candidates.record(manifest["models"]))
        added["templates"] = templates.record()
        keys = ["model", "direction", *([TEMPLATE] if paraphrased(rows) else [])]
        summary = rows[[*keys, "rank", "target_prob", "ap_vocab"]]
        if paraphrased(rows):
            summary = paraphrase_columns(summary, rows, ["model", "direction"], "ap_vocab")
        return Outcome(rows, summary, added, vocab=candidates.vocabulary)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """The property direction (how well her list of a country's properties is recovered)
        first, then the concept direction."""
        directions = sorted(dict.fromkeys(summary["direction"]), key=lambda d: d != "property")
        return [(f"{d} direction", summary[summary["direction"] == d]) for d in directions]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        from tacit.probes.run_notes import scored_over

        over = scored_over(manifest)
        return {"vocabulary": over["vocabulary"], "templates": over["templates"]}
