"""Summaries of NLI runs: each suite's breakdowns per model and seed, then over seeds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from tacit.probes.report import Report

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome
    from tacit.probes.nli.options import NLIManifest, NLIModelRecord

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from tacit.core.labels import short_labels

KEY = ["section", "breakdown", "group", "metric"]


def summarize_nli(
    items: pd.DataFrame,
    summarize: Callable[[pd.DataFrame], list[dict[str, Any]]],
    paper: Mapping[tuple[str, str, str], float] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, by_seed): the suite's report rows for each model and seed, and their mean and
    sample standard deviation over seeds (sd is empty with one seed). `paper` (the paper's
    numbers, in percent as printed there) adds a column `paper_value` beside the rows it
    reports, in the unit of `value`: a fraction for accuracies and shares."""
    by_seed = []
    for (model, seed), group in items.groupby(["model", "seed"], sort=False):
        rows = pd.DataFrame(summarize(group.reset_index(drop=True)))
        by_seed.append(rows.assign(model=model, seed=seed))
    by_seed_table = pd.concat(by_seed, ignore_index=True)[["model", "seed", *KEY, "value", "n"]]
    summary = (
        by_seed_table.groupby(["model", *KEY], sort=False)
        .agg(
            value=("value", "mean"),
            sd=("value", lambda v: v.std(ddof=1) if len(v) > 1 else np.nan),
            n=("n", "max"),
            n_seeds=("seed", "nunique"),
        )
        .reset_index()
    )
    if paper is not None:
        summary["paper_value"] = [
            paper.get((s, g, m), np.nan) / 100
            for s, g, m in summary[["section", "group", "metric"]].itertuples(index=False)
        ]
    return summary, by_seed_table


COMPACT_ROWS = 12  # breakdowns longer than this are printed only with --verbose


def format_nli_summary(
    summary: pd.DataFrame, paper_label: str | None = None, *, verbose: bool = False
) -> str:
    """The summary as text, one block per model and section, values in percent; breakdowns of
    more than COMPACT_ROWS rows (IMPPRES' paradigms) only when `verbose` (they are all in
    summary.csv)."""
    lines = []
    with_paper = "paper_value" in summary and summary["paper_value"].notna().any()
    labels = short_labels(summary["model"])
    left_out = 0
    for model, per_model in summary.groupby("model", sort=False):
        seeds = int(per_model["n_seeds"].max())
        lines.append(
            f"== {labels[model]}" + (f" (mean ± sd over {seeds} seeds)" if seeds > 1 else "")
        )
        for (section, breakdown), rows in per_model.groupby(["section", "breakdown"], sort=False):
            if len(rows) > COMPACT_ROWS and not verbose:
                left_out += 1
                continue
            lines.append(f"-- {section} [{breakdown}]")
            for row in rows.itertuples(index=False):
                value = "   n/a" if pd.isna(row.value) else f"{_percent(row.metric, row.value)}"
                spread = "" if pd.isna(row.sd) else f" ± {_percent(row.metric, row.sd).strip()}"
                paper = ""
                if with_paper and not pd.isna(row.paper_value):
                    paper = f"   (paper {_percent(row.metric, row.paper_value).strip()})"
                lines.append(
                    f"  {row.group:<48} {row.metric:<30} {value}{spread}  n={row.n}{paper}"
                )
        lines.append("")
    if left_out:
        lines.append(
            f"({left_out} breakdown(s) of more than {COMPACT_ROWS} rows are in "
            "summary.csv; --verbose prints them)"
        )
    if with_paper and paper_label:
        lines.append(f"(paper: {paper_label})")
    return "\n".join(lines).rstrip()


def _percent(metric: str, value: float) -> str:
    """Accuracies and shares in percent; correlations as they are."""
    return f"{value:6.3f}" if metric.startswith("spearman") else f"{100 * value:6.1f}"


def nli_report(summary: pd.DataFrame, manifest: NLIManifest) -> tuple[str, list[str]]:
    """The summary, what was read and sampled, and notes on prompts cut, pairs truncated,
    predictions naming no item and items without a prediction."""
    from tacit.probes.run_notes import run_notes

    data, dropped = manifest["data"], manifest["dropped"]
    lines = [format_nli_summary(summary, manifest["paper_column"]), ""]
    lines.append(f"items: {data['items_loaded']} read from {len(data['files'])} file(s)")
    if dropped["not_sampled"]:
        lines.append(f"--max-items: {data['items_sampled']} sampled, {dropped['not_sampled']} not")
    notes = run_notes(manifest)
    for record in cast("list[NLIModelRecord]", manifest["models"]):
        where = record["name"] + (f" (seed {record['seed']})" if record.get("seed") else "")
        if record.get("prompts_cut_to_fit"):
            notes.append(
                f"note: {where}: {record['prompts_cut_to_fit']} prompt(s) longer than "
                f"{record['max_tokens']} tokens: cut around the mask (the premise loses "
                "its start)"
            )
        if record.get("truncated_pairs"):
            notes.append(
                f"note: {where}: {record['truncated_pairs']} pair(s) longer than "
                f"{record['max_tokens']} tokens: premise cut"
            )
        if record.get("records_not_in_data"):
            notes.append(
                f"note: {where}: {record['records_not_in_data']} prediction(s) name no "
                "item in --data"
            )
    for row in dropped["without_prediction"]:
        seed = f" (seed {row['seed']})" if row["seed"] else ""
        notes.append(
            f"note: {row['model']}{seed}: {row['items']} item(s) without a prediction, left out"
        )
    return "\n".join(lines), notes


class NLIReport(Report):
    """How nli runs are shown."""

    extra_tables = {"summary_by_seed.csv": "Summary per seed"}
    sample_columns = ("prompt", "gold")
    rows_file = "items.csv"

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        return nli_report(outcome.summary, cast("NLIManifest", manifest))

    def brief(self, manifest: Manifest) -> list[tuple[str, str]]:
        nli = cast("NLIManifest", manifest)
        return [(key, str(nli.get(key))) for key in ("suite", "mode") if nli.get(key)]

    def left_out(self, manifest: Manifest) -> list[str]:
        not_sampled = (cast("NLIManifest", manifest).get("dropped") or {}).get("not_sampled")
        return [f"items not sampled (--max-items): {not_sampled}"] if not_sampled else []

    def verbose(self, summary: pd.DataFrame, manifest: Manifest) -> str | None:
        from tacit.probes.nli.report import format_nli_summary

        paper = cast("NLIManifest", manifest).get("paper_column")
        return format_nli_summary(summary, paper, verbose=True)

    def figures(
        self,
        runs: Sequence[tuple[str, pd.DataFrame, Manifest]],
        *,
        kind: str = "auto",
        caption: str = "",
    ) -> list[tuple[str, Any]]:
        from tacit.probes.figures import say_under
        from tacit.probes.nli.figures import draw_nli, nli_panels

        drawn = [
            (f"NLI ({manifest.get('suite')}): {name}", draw_nli(summary))
            for name, summary, manifest in runs
            if nli_panels(summary)[0]
        ]
        for _, figure in drawn:
            say_under(figure, caption)
        return drawn
