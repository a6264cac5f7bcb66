"""The surprisal probe (SurprisalProbe): its declaration and how it plans and finishes a run
(tacit.probes.surprisal says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from tacit.ask.base import Scored, Work
from tacit.core.errors import TacitError
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe
from tacit.probes.surprisal.options import SurprisalManifest, SurprisalModelRecord, SurprisalOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel, Scorer
    from tacit.probes.surprisal.reading import Texts


@dataclass
class State:
    texts: Texts


class SurprisalProbe(Probe[SurprisalOptions]):
    name = "surprisal"
    manifest_keys = SurprisalManifest
    model_keys = SurprisalModelRecord
    description = "Every token's (or word's) log-probability and surprisal in your texts."
    help = """TEXTS, a file, holds one text a line (or CSV / JSON lines with a `text` column
    and an optional `id`).
    Causal models score each token given the start token and the tokens before it; masked
    models give each token's pseudo-log-likelihood (--pll original: the token masked alone;
    within_word_l2r: with the later tokens of its word masked too), as minicons does.
    --by word sums the tokens of each whitespace-separated word.
    Writes surprisal.csv (one row per model, text and token or word: log-probability,
    surprisal in nats and bits), summary.csv (per text and over every text: tokens, total
    log-probability, mean surprisal in bits per token, perplexity) and manifest.json."""
    options = SurprisalOptions
    primary = Metric(
        "mean_surprisal_bits",
        "mean surprisal (bits/token)",
        greater_is_better=False,
        count="n_tokens",
        row="surprisal_bits",
    )
    metrics = (Metric("perplexity", "perplexity", greater_is_better=False, count="n_tokens"),)
    keys = ("model", "text_id")
    report_class = "tacit.probes.surprisal.report:SurprisalReport"
    run_options = frozenset({"resume"})

    def plan(self, models: Sequence[RunModel], values: SurprisalOptions, run: Planning) -> Plan:
        from tacit.models.base import Needs
        from tacit.probes.surprisal.reading import read_texts
        from tacit.probes.surprisal.scoring import score_texts

        if values.texts is None:
            raise TacitError("no texts given (probe surprisal FILE)")
        texts = read_texts(values.texts)
        by, pll = values.by, values.pll

        def score(scorer: Scorer, rows: pd.DataFrame, bar: Any) -> Scored:
            table, counts = score_texts(rows, scorer, by, pll, bar)
            return Scored(table, counts)

        needs = Needs.of("tokens", asks="every token of a text scored")
        work = Work(texts.table, "text", score, needs, unit="text")
        resume = {"texts_sha256": texts.source["sha256"], "by": by, "pll": pll}
        return Plan(work, values, resume_key=resume, state=State(texts))

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        from tacit.probes.surprisal.scoring import summarize

        texts: Texts = plan.state.texts
        values: SurprisalOptions = plan.values
        summary = summarize(rows)
        added: dict[str, Any] = {
            "texts": {
                **texts.source,
                "n_texts": len(texts.table),
                "n_distinct": int(texts.table["text"].nunique()),
                "blank_lines_skipped": texts.blank_lines,
            },
            "options": {"by": values.by, "pll": values.pll},
            "by": values.by,
            "pll": values.pll,
        }
        return Outcome(rows, summary, added)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """Every text together first, one row per model; then each text."""
        from tacit.probes.surprisal.scoring import OVERALL

        ids = summary["text_id"].astype(str)
        found: list[Condition] = [("every text", summary[ids == OVERALL])]
        return found + [
            (f"text {t}", summary[ids == t]) for t in dict.fromkeys(ids) if t != OVERALL
        ]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        texts = cast(SurprisalManifest, manifest).get("texts") or {}
        name = texts.get("name") or texts.get("given")
        return {
            "texts": f"{name} ({str(texts.get('sha256'))[:8]})",
            "rows": f"by {manifest.get('by')}, pll {manifest.get('pll')}",
        }
