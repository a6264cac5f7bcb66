"""The items probe (ItemsProbe): its declaration and how it plans and finishes a run
(tacit.probes.items says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tacit.ask.base import Ask, AskSpec
from tacit.core.errors import TacitError
from tacit.probes.base import Condition, Outcome, Plan, Probe
from tacit.probes.items.options import ACCURACY, MRR, ItemsManifest, ItemsOptions
from tacit.probes.manifest_keys import RankingCounts

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel


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
    --token-scores, tokens.csv (every candidate's tokens and their log-probabilities).
    With --by generation, each item is asked as a multiple-choice question instead: its
    candidates lettered A., B., ... in an order shuffled per item from --seed (prompts.csv's
    `options` and `answer_letter`), the letter or the option's text read from the answer;
    summary.csv holds accuracy with its chance level and the unreadable answers (no option,
    or two: wrong, counted), letters.csv the letters answered against the right ones, and
    answers.csv and messages.jsonl what was asked and said (docs/probes/items.md)."""
    options = ItemsOptions
    primary = ACCURACY
    metrics = (MRR,)
    keys = ("model", "group")
    units = "items"
    report_class = "tacit.probes.items.report:ItemsReport"
    run_options = frozenset({"seed", "resume"})
    asks = (
        AskSpec("spans", recorded=("span_scoring", "normalize"), files="none", records_sets=False),
        AskSpec("words"),
    )

    def plan(self, models: Sequence[RunModel], values: ItemsOptions, run: Planning) -> Plan:
        from tacit.ask.base import Asking, choose
        from tacit.hub.dataset_files import local_file
        from tacit.probes.items.reading import read_items, refuse_unreadable
        from tacit.probes.items.scoring import candidate_sets, item_rows

        if values.items is None:
            raise TacitError("no items file given (probe items FILE)")
        ask = choose(values, self.asks, self.name)
        path, fetched = local_file(values.items, "ITEMS")
        items, sha256 = read_items(path, name=str(values.items))
        ask.prepare(models, ask.needs([], ""), run)
        state = State(items, sha256, fetched.record() if fetched else {})
        if ask.yields == "answers":
            return self._by_generation(ask, values, state, run)
        sets, set_of = candidate_sets(items)
        _, unread = ask.candidate_sets(lambda: sets)
        refuse_unreadable(values.items, items, unread)
        asking = Asking(
            answers=lambda rows: [sets[set_of[str(i)]].spans for i in rows["id"]],
            sets=lambda rows: [set_of[str(i)] for i in rows["id"]],
            top_k=0,
            questions=lambda rows: rows.drop_duplicates("id").assign(prompt=lambda f: f["text"]),
        )
        work = ask.work(items, asking, item_rows(sets, set_of), key="id")
        work = replace(work, unit="item", cost=None)  # an item a unit of work, as it is counted
        return Plan(work, values, ask=ask, resume_key={"items_sha256": sha256}, state=state)

    @staticmethod
    def _by_generation(ask: Ask, values: ItemsOptions, state: State, run: Planning) -> Plan:
        """Each item asked as a multiple-choice question (tacit.probes.items.choice)."""
        from tacit.ask.base import Asking
        from tacit.probes.items.choice import CHOICE_FIELDS, fills, matchers, shuffled

        asking = Asking(
            answers=lambda rows: [list(r) for r in rows["answer_letter"]],
            asks="choice",
            matchers=matchers,
            keys=lambda rows: ["id"],
            fills=fills,
        )
        work = ask.work(shuffled(state.items, run.seed), asking, CHOICE_FIELDS, key="id")
        work = replace(work, unit="item")
        resume = {"items_sha256": state.sha256}
        return Plan(work, values, ask=ask, resume_key=resume, state=state)

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        from tacit.probes.items.choice import (
            choice_counts,
            letter_table,
            shuffle_record,
            summarize_choices,
        )
        from tacit.probes.items.scoring import summarize_items

        state: State = plan.state
        values, ask = plan.values, plan.asked
        done = ask.finish(rows, manifest["models"], keys=["id"])
        items = state.items.drop_duplicates("id")
        added: dict[str, Any] = {
            "items": {
                "file": str(values.items),
                "name": Path(values.items).name,
                "sha256": state.sha256,
                **state.hub,
            },
            "options": {"k": values.k, **done.options},
            "counts": {
                "items": len(items),
                "candidates": len(state.items),
                "items_by_group": {
                    str(g): int(n) for g, n in items["group"].value_counts(sort=False).items()
                },
            },
            **done.record,
        }
        if ask.yields == "answers":
            added["choice"] = {**shuffle_record(run.seed), **choice_counts(done.rows)}
            summary = summarize_choices(done.rows, seed=run.seed)
            extra = {**done.extra, "letters": letter_table(done.rows)}
            return Outcome(done.rows, summary, added, extra, done.files)
        summary = summarize_items(done.rows, values.k, seed=run.seed)
        return Outcome(done.rows, summary, added, done.extra)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """Every item together (group `all`) first, one row per model; then each group."""
        from tacit.probes.items.reading import OVERALL

        groups = summary["group"].astype(str)
        found: list[Condition] = [("all items", summary[groups == OVERALL])]
        return found + [
            (f"group {g}", summary[groups == g]) for g in dict.fromkeys(groups) if g != OVERALL
        ]

    def main_scores(self, rows: pd.DataFrame, manifest: Manifest, **_: Any) -> pd.DataFrame:
        """Each item's accuracy over every item (by scoring: its first answer ranked first; by
        generation: the share of its draws that chose a right letter), the item its unit."""
        from tacit.probes.items.scoring import item_results

        if "generation" not in manifest:
            rows = item_results(rows, int(manifest["options"]["k"]))
        return rows.assign(unit=rows["id"].astype(str), value=rows["correct"])[
            ["model", "unit", "value"]
        ]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        from tacit.ask.spans import masked_ran

        items = cast(ItemsManifest, manifest).get("items") or {}
        if "generation" in manifest:  # by generation: no spans were scored
            return {"items": f"{items.get('name')} ({str(items.get('sha256'))[:8]})"}
        return {
            "items": f"{items.get('name')} ({str(items.get('sha256'))[:8]})",
            "span scoring": str(manifest.get("span_scoring")) if masked_ran(manifest) else "",
            "normalisation": str(manifest.get("normalize")),
        }
