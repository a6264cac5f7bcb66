"""PragmEval summaries: configurations averaged into the paper's 11 tasks, beside reference
numbers, as a table and a bar plot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from tacit.core.errors import TacitError
from tacit.core.files import regular_file
from tacit.probes.report import Report

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome
    from tacit.probes.pragmeval.options import PragmevalManifest, PragmevalModelRecord

from pathlib import Path

import numpy as np
import pandas as pd

from tacit.core.option_names import option
from tacit.pragmatics.pragmeval import PAPER_BERT_AVERAGE, task_of

AVERAGE = "average"


def read_reference(path: str | Path) -> pd.DataFrame:
    """A CSV of reference numbers in percent: `task, bert, human` (either number may be
    empty), e.g. the paper's fine-tuned BERT row and its human estimates."""
    path = Path(path)
    try:
        regular_file(path, f"{option('--reference')} {path}", missing_ok=True)
        table = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as err:
        raise TacitError(f"{option('--reference')} {path}: cannot read it as CSV ({err})") from None
    missing = {"task", "bert", "human"} - set(table.columns)
    if missing:
        raise TacitError(
            f"{option('--reference')} {path}: missing column(s) {', '.join(sorted(missing))}"
        )
    for column in ("bert", "human"):
        values = pd.to_numeric(table[column], errors="coerce")
        bad = table[column].notna() & values.isna()
        if bad.any():
            line = int(np.flatnonzero(bad)[0]) + 2
            raise TacitError(f"{option('--reference')} {path}:{line}: {column} is not a number")
        table[column] = values
    return table[["task", "bert", "human"]]


def summarize_pragmeval(
    configs: pd.DataFrame, reference: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per model and task: the mean test score of its configurations (percent), then the
    average over the tasks run; with the reference's numbers beside them. The paper's BERT
    average (61.8, over all 11 tasks) is given for the average row when all 11 were run."""
    rows = []
    for model, per_model in configs.groupby("model", sort=False):
        per_task = per_model.assign(task=per_model["config"].map(task_of))
        tasks = per_task.groupby("task", sort=True)
        for task, group in tasks:
            rows.append(
                {
                    "model": model,
                    "task": task,
                    "configs": len(group),
                    "metric": group["metric"].iloc[0],
                    "score": 100 * group["test"].mean(),
                    "dev": 100 * group["dev"].mean(),
                }
            )
        scores = [r["score"] for r in rows if r["model"] == model]
        devs = [r["dev"] for r in rows if r["model"] == model]
        rows.append(
            {
                "model": model,
                "task": AVERAGE,
                "configs": len(per_model),
                "metric": f"mean of {tasks.ngroups} task(s)",
                "score": float(np.mean(scores)),
                "dev": float(np.mean(devs)),
            }
        )
    summary = pd.DataFrame(rows)
    summary["paper_bert"] = np.nan
    summary["human"] = np.nan
    if reference is not None:
        known = reference.set_index("task")
        summary["paper_bert"] = summary["task"].map(known["bert"])
        summary["human"] = summary["task"].map(known["human"])
    # the paper's average is over all 11 tasks: beside ours only when ours is too
    complete = summary.groupby("model")["task"].transform(lambda t: (t != AVERAGE).sum() == 11)
    average = (summary["task"] == AVERAGE) & complete
    summary.loc[average & summary["paper_bert"].isna(), "paper_bert"] = PAPER_BERT_AVERAGE
    return summary


def format_pragmeval(summary: pd.DataFrame, mode: str) -> str:
    """The summary as a table; says what ours is (a frozen-model probe) and what the paper's is."""
    kind = (
        "linear probe on frozen representations"
        if mode == "linear"
        else "zero-shot cloze, frozen model"
    )
    lines = [f"PragmEval, {kind} (NOT fine-tuning); paper: BERT-base fine-tuned."]
    for model, rows in summary.groupby("model", sort=False):
        lines.append(f"== {model}")
        lines.append(f"  {'task':<26} {'metric':<20} {'ours':>6} {'paper BERT':>11} {'human':>6}")
        for row in rows.itertuples(index=False):
            paper = "" if pd.isna(row.paper_bert) else f"{row.paper_bert:.1f}"
            human = "" if pd.isna(row.human) else f"{row.human:.1f}"
            lines.append(
                f"  {row.task:<26} {row.metric:<20} {row.score:6.1f} {paper:>11} {human:>6}"
            )
    return "\n".join(lines)


def pragmeval_report(summary: pd.DataFrame, manifest: PragmevalManifest) -> tuple[str, list[str]]:
    """The table, and notes on configurations skipped, texts cut and the feature cache."""
    from tacit.probes.run_notes import run_notes

    lines = [format_pragmeval(summary, str(manifest["mode"]))]
    notes = run_notes(manifest)
    notes += [f"note: {name} skipped: {why}" for name, why in manifest["skipped_configs"].items()]
    for record in cast("list[PragmevalModelRecord]", manifest["models"]):
        if record["texts_cut_to_fit"]:
            notes.append(
                f"note: {record['name']}: {record['texts_cut_to_fit']} text(s) longer "
                "than the model allows, cut around the mask"
            )
        cache = record["feature_cache"]
        if cache:
            lines.append(
                f"features: {cache['hits']} split(s) from the cache, {cache['misses']} "
                f"encoded ({cache['directory']})"
            )
            if cache.get("not_written"):
                notes.append(
                    f"warning: {record['name']}: features not cached ({cache['not_written']})"
                )
    return "\n".join(lines), notes


def pragmeval_figure(summary: pd.DataFrame) -> bytes:
    """pragmeval.png: draw_pragmeval's figure as PNG bytes."""
    from tacit.probes.figures import figure_bytes

    return figure_bytes(draw_pragmeval(summary), "png")


def draw_pragmeval(summary: pd.DataFrame) -> Any:
    """Bar plot of each task's score per model, with the reference BERT numbers as markers."""
    from matplotlib.figure import Figure

    from tacit.core.labels import model_label

    tasks = list(dict.fromkeys(summary["task"]))
    models = list(dict.fromkeys(summary["model"]))
    figure = Figure(figsize=(max(6, 0.7 * len(tasks) + 2), 4), layout="tight")
    axis = figure.subplots()
    width = 0.8 / max(1, len(models))
    positions = np.arange(len(tasks))
    for n, model in enumerate(models):
        scores = summary[summary["model"] == model].set_index("task")["score"]
        axis.bar(
            positions + n * width,
            [scores.get(t, np.nan) for t in tasks],
            width,
            label=model_label(model),
        )
    paper = summary.drop_duplicates("task").set_index("task")["paper_bert"]
    if paper.notna().any():
        axis.scatter(
            positions + 0.4 - width / 2,
            [paper.get(t, np.nan) for t in tasks],
            marker="_",
            s=300,
            color="black",
            label="paper: BERT fine-tuned",
            zorder=3,
        )
    axis.set_xticks(positions + 0.4 - width / 2, tasks, rotation=45, ha="right")
    axis.set_ylabel("test score (%)")
    axis.legend(fontsize="small")
    return figure


class PragmevalReport(Report):
    """How pragmeval runs are shown."""

    sample_columns = (None, None)
    rows_file = "configs.csv"

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        return pragmeval_report(outcome.summary, cast("PragmevalManifest", manifest))

    def figures(
        self,
        runs: Sequence[tuple[str, pd.DataFrame, Manifest]],
        *,
        kind: str = "auto",
        caption: str = "",
    ) -> list[tuple[str, Any]]:
        from tacit.probes.figures import say_under
        from tacit.probes.pragmeval.report import draw_pragmeval

        drawn = [(f"PragmEval: {name}", draw_pragmeval(summary)) for name, summary, _ in runs]
        for _, figure in drawn:
            say_under(figure, caption)
        return drawn
