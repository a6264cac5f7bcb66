"""The items probe (ItemsProbe): its declaration and how it plans and finishes a run
(tacit.probes.items says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tacit.core.errors import TacitError
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe, Work
from tacit.probes.items.options import ItemsManifest, ItemsOptions
from tacit.probes.manifest_keys import RankingCounts

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import RunOptions
    from tacit.models.base import RunModel, Scorer


@dataclass
class State:
    items: pd.DataFrame
    sha256: str
    hub: dict[str, Any]  # a Hub file's URL and commit (tacit.hub.dataset_files); {} for a path


class ItemsProbe(Probe[ItemsOptions]):
    name = "items"
    manifest_keys = ItemsManifest
    model_keys = RankingCounts
    description = "Your own cloze items: `probe items ITEMS`, each candidate scored in the blank."
    help = """ITEMS, a file, holds one item a line, JSON lines or CSV: a `text` with one blank
    `[Y]`, its `candidates` (spans of any length), the `answer` or answers, an optional `group`
    and `id`.
    Every candidate is scored as a span in the blank (masked or causal models; --span-scoring,
    --normalize as for --candidates) and each item's answers are ranked among its candidates.
    Writes prompts.csv (every candidate's score and rank), summary.csv (accuracy, MRR and P@k per
    group and overall, with bootstrap intervals over items) and manifest.json; with
    --token-scores, tokens.csv (every candidate's tokens and their log-probabilities)."""
    options = ItemsOptions
    primary = Metric("accuracy", "accuracy", True, "accuracy_ci_low", "accuracy_ci_high", "n_items")
    metrics = (Metric("mrr", "MRR", True, "mrr_ci_low", "mrr_ci_high", "n_items"),)
    keys = ("model", "group")
    report_class = "tacit.probes.items.report:ItemsReport"
    run_options = frozenset({"seed", "resume"})

    def plan(self, models: Sequence[RunModel], values: ItemsOptions, run: RunOptions) -> Plan:
        from tacit.ask.candidates import SPAN_NEEDS, token_scores_key, unreadable_spans
        from tacit.hub.dataset_files import local_file
        from tacit.probes.base import Scored
        from tacit.probes.items.reading import read_items, refuse_unreadable
        from tacit.probes.items.scoring import candidate_sets, score_items
        from tacit.ranking import SpanCandidates

        if values.items is None:
            raise TacitError("no items file given (probe items FILE)")
        path, fetched = local_file(values.items, "ITEMS")
        items, sha256 = read_items(path, name=str(values.items))
        problems = unreadable_spans(list(items["candidate"].unique()), models)
        refuse_unreadable(values.items, items, problems)
        scoring, normalize, tokens = values.span_scoring, values.normalize, values.token_scores
        sets, set_of = candidate_sets(items)
        candidates = SpanCandidates(sets, scoring, normalize, tokens=tokens)

        def score(scorer: Scorer, rows: pd.DataFrame, bar: Any) -> Scored:
            table, counts = score_items(rows, scorer, candidates, set_of, bar)
            return Scored(table, counts)

        work = Work(items, "id", score, SPAN_NEEDS, unit="item")
        resume = {
            "items_sha256": sha256,
            "span_scoring": scoring,
            "normalize": normalize,
            **token_scores_key(tokens),
        }
        return Plan(
            work,
            values,
            resume_key=resume,
            state=State(items, sha256, fetched.record() if fetched else {}),
        )

    def finish(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: RunOptions
    ) -> Outcome:
        from tacit.ask.candidates import span_work, token_scores_key
        from tacit.ask.tokens import TOKENS_TABLE, token_table
        from tacit.probes.items.scoring import summarize_items
        from tacit.ranking import record as tie_record

        state: State = plan.state
        values = plan.values
        k = values.k
        items = state.items.drop_duplicates("id")
        added: dict[str, Any] = {
            "items": {
                "file": str(values.items),
                "name": Path(values.items).name,
                "sha256": state.sha256,
                **state.hub,
            },
            "options": {
                "k": k,
                "span_scoring": values.span_scoring,
                "normalize": values.normalize,
            },
            "counts": {
                "items": len(items),
                "candidates": len(state.items),
                "items_by_group": {
                    str(g): int(n) for g, n in items["group"].value_counts(sort=False).items()
                },
            },
            "span_scoring": values.span_scoring,
            "normalize": values.normalize,
            **token_scores_key(values.token_scores),
            "span_work": span_work(manifest["models"]),
            "ties": tie_record(),
        }
        extra = {}
        if values.token_scores:
            rows, extra[TOKENS_TABLE] = token_table(rows, ["id"])
        summary = summarize_items(rows, k, seed=run.seed)
        return Outcome(rows, summary, added, extra)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """Every item together (group `all`) first, one row per model; then each group."""
        from tacit.probes.items.reading import OVERALL

        groups = summary["group"].astype(str)
        found: list[Condition] = [("all items", summary[groups == OVERALL])]
        return found + [
            (f"group {g}", summary[groups == g]) for g in dict.fromkeys(groups) if g != OVERALL
        ]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        from tacit.probes.run_notes import masked_ran

        items = cast(ItemsManifest, manifest).get("items") or {}
        return {
            "items": f"{items.get('name')} ({str(items.get('sha256'))[:8]})",
            "span scoring": str(manifest.get("span_scoring")) if masked_ran(manifest) else "",
            "normalisation": str(manifest.get("normalize")),
        }
