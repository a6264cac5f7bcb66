"""What a retrieval run says about itself: the MRR table, what was kept and dropped, and the
notes a reader must see (prompts naming their own target, concepts short of --max-props)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.probes.report import Report

if TYPE_CHECKING:
    from tacit.core.display import Table
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome


import pandas as pd

from tacit.ask.base import asked_by
from tacit.core.display import render
from tacit.probes.retrieve.summary import retrieval_tables
from tacit.probes.run_notes import describe_drops, listed, ranked_among, run_notes


def retrieval_report(
    summary: pd.DataFrame, dropped: pd.DataFrame, manifest: Manifest
) -> tuple[str, list[str]]:
    """The MRR table, what was kept and dropped, and notes on prompts naming their target and
    concepts short of --max-props."""
    counts = manifest["counts"]
    tables = retrieval_tables(summary)
    note = asked_by(manifest).probability_note  # where the way of asking gives none at all
    for table in tables if note else []:
        table.note = note
    text = "\n".join(
        [
            render(tables).rstrip(),
            "",
            describe_drops(dropped, counts["concepts"]),
            f"prompts: {counts['prompts_per_model']} per model ({counts['unique_prompt_texts']} "
            f"distinct texts) x {len(manifest['models'])} model(s); " + ranked_among(manifest),
        ]
    )
    notes = run_notes(manifest)
    naming = counts["prompts_naming_their_target"]
    if naming["prompts"]:
        notes.append(
            f"note: {naming['prompts']} prompt(s) name their own target among the properties "
            f"(kept, as in the paper): {listed(naming['concepts'])}"
        )
    max_props = manifest["options"]["max_props"]
    for category, short in counts["concepts_with_fewer_properties_than_max_props"].items():
        notes.append(
            f"note: {len(short)} concept(s) have fewer than {max_props} {category} properties "
            f"and get prompts up to what they have (n_prompts in summary.csv): {listed(short)}"
        )
    return text, notes


class RetrieveReport(Report):
    """How retrieve runs are shown."""

    figure_kinds = ("auto", "models", "category", "ordering")  # the paper's Figures 2, 3a, 3b
    extra_tables = {
        "dropped.csv": "Concepts left out, and why",
        "tokens.csv": "The target and top candidates' tokens and their log-probabilities",
    }

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        """The MRR table, what was kept and dropped, and its notes (retrieval_report); with
        several templates, their ensemble's table too."""
        from tacit.ask.paraphrase import format_paraphrases, paraphrased

        text, notes = retrieval_report(outcome.summary, outcome.extra["dropped"], manifest)
        if paraphrased(outcome.rows):
            text += "\n\n" + format_paraphrases(
                outcome.summary, ["selection", "order", "category", "n_props"], "mrr", "MRR"
            )
        return text, notes

    def brief(self, manifest: Manifest) -> list[tuple[str, str]]:
        from tacit.probes.run_notes import norms_brief

        return norms_brief(manifest)

    def left_out(self, manifest: Manifest) -> list[str]:
        from tacit.probes.run_notes import counts_listed

        return counts_listed(manifest, "concepts_dropped_by_reason")

    def verbose(self, summary: pd.DataFrame, manifest: Manifest) -> str | None:
        """Every metric by condition; None for a run of one condition (its printed summary
        is all of it)."""
        from tacit.core.display import render
        from tacit.probes.retrieve.summary import CONDITION, retrieval_tables

        if summary[CONDITION].drop_duplicates().shape[0] < 2:
            return None
        return render(retrieval_tables(summary, verbose=True))

    def table(
        self,
        summary: pd.DataFrame,
        manifest: Manifest | None = None,
        *,
        n_props: str | None = None,
        **_: Any,
    ) -> list[Table]:
        """Every metric at the chosen numbers of properties (`1,5,10`; default every one), a
        row per run, model, condition and number of properties."""
        from tacit.ask.paraphrase import ensemble_rows
        from tacit.probes.retrieve.summary import retrieval_table

        summary = ensemble_rows(summary)  # with several templates, their ensemble's

        try:
            wanted = (
                [int(n) for n in n_props.split(",")]
                if n_props is not None
                else sorted(set(summary["n_props"]))
            )
        except ValueError:
            raise TacitError(f"--n-props {n_props!r}: numbers separated by commas") from None
        table = summary[summary["n_props"].isin(wanted)]
        if table.empty:
            raise TacitError(f"--n-props {n_props}: no run has prompts with that many properties")
        shown = retrieval_table(
            table, "Concept retrieval (P@1: target ranked first; hits@10: among the first 10)"
        )
        absent = [str(n) for n in wanted if n not in set(table["n_props"])]
        if absent:
            shown.note = "; ".join(
                filter(
                    None,
                    [
                        f"no prompts with {' or '.join(absent)} properties in these runs "
                        f"(the most: {int(summary['n_props'].max())})",
                        shown.note,
                    ],
                )
            )
        return [shown]

    def figures(
        self,
        runs: Sequence[tuple[str, pd.DataFrame, Manifest]],
        *,
        kind: str = "auto",
        caption: str = "",
    ) -> list[tuple[str, Any]]:
        """The paper's Figure 2 (a line per model), 3a (per category) or 3b (per selection x
        order), from what the runs hold; runs that call for different ones get one each."""
        import pandas as pd

        from tacit.ask.paraphrase import ensemble_rows
        from tacit.probes.retrieve.figures import figure_kind, retrieval_figure
        from tacit.probes.retrieve.summary import WHY_NO_PROBABILITY, why_no_probability

        frames = []
        for name, summary, manifest in runs:
            reasons = why_no_probability(manifest)
            frame = ensemble_rows(summary).assign(run=name)
            frames.append(frame.assign(**{WHY_NO_PROBABILITY: frame["model"].map(reasons)}))
        kinds = [figure_kind(frame) for frame in frames]
        distinct = list(dict.fromkeys(kinds))
        if kind == "auto" and len(distinct) > 1 and set(distinct) - {"models"}:
            groups = [[f for f, k in zip(frames, kinds) if k == each] for each in distinct]
        else:
            groups = [frames]
        figures = []
        for group in groups:
            shown = pd.concat(group, ignore_index=True)
            drawn = figure_kind(shown) if kind == "auto" else kind
            names = ", ".join(dict.fromkeys(shown["run"]))
            title = (
                f"MRR and mean target probability by number of properties ({drawn}: "
                f"{names}; bands: 95% bootstrap interval over concepts)"
            )
            figures.append((title, retrieval_figure(shown, kind=kind, caption=caption)))
        return figures

    def figure_kind(self, runs: Sequence[tuple[str, pd.DataFrame, Manifest]], kind: str) -> str:
        """`models`, `category` or `ordering`: the one the runs call for, where `auto`."""
        from tacit.ask.paraphrase import ensemble_rows
        from tacit.probes.retrieve.figures import figure_kind

        if kind != "auto":
            return kind
        kinds = {figure_kind(ensemble_rows(summary)) for _, summary, _ in runs}
        return kinds.pop() if len(kinds) == 1 else "figure"
