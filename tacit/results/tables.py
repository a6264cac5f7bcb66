"""`probe table`: the tables of runs of one probe, laid out by the probe (Probe.table:
elicitation's Table 1, retrieval's metrics at chosen numbers of properties); runs that are not
like for like (tacit.results.like_for_like) in tables of their own, with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.labels import short_labels
from tacit.probes.report import report_of

if TYPE_CHECKING:
    from tacit.core.display import Table
    from tacit.results.result import ProbeResult


def labelled(frames: list[pd.DataFrame], keys: Sequence[str]) -> pd.DataFrame:
    """The runs' rows (each with its `run`) with short model labels, in --model order; a model
    that is in more than one run is labelled with the run's name on every row of it."""
    table = pd.concat(frames, ignore_index=True)
    labels = short_labels(table["model"])
    table["model"] = table["model"].map(labels)
    runs_of = table.groupby("model", sort=False)["run"].nunique()
    shared = table["model"].isin(runs_of[runs_of > 1].index)
    table.loc[shared, "model"] = table.loc[shared, "model"] + " (" + table.loc[shared, "run"] + ")"
    if table.duplicated([*keys]).any():
        raise TacitError("two runs with the same directory name hold the same rows: rename one")
    return table


def runs_tables(
    runs: Sequence[str | Path | ProbeResult], **options: Any
) -> tuple[list[Table], list[str]]:
    """The tables `probe table` prints (see its help), and the warnings to say beside them:
    runs that are not like for like get tables of their own, titled by their group and noting
    what it scored over. `options` are the probe's own (`n_props` for retrieval)."""
    from tacit.results.like_for_like import apart, like_for_like, one_probe, read_runs

    read = read_runs(runs)
    probe = one_probe(read, "table")
    groups, notes = like_for_like(read)
    tables = []
    for number, group in enumerate(groups, start=1):
        summary = labelled([run.summary for run in group.runs], probe.keys)
        shown = report_of(probe).table(summary, group.runs[0].manifest, **options)
        if len(groups) > 1:
            for table in shown:
                table.title = f"Group {number} ({group.names}): {table.title}"
            said = f"group {number} scored over: {group.describe()}"
            shown[-1].note = f"{shown[-1].note}\n{said}".strip()
        tables += shown
    return tables, ([apart(groups, notes, "tables")] if len(groups) > 1 else [])


def runs_table(
    runs: Sequence[str | Path | ProbeResult],
    *,
    format: str = "text",
    width: int | None = None,
    **options: Any,
) -> str:
    """The tables of runs of one probe as text (`format`: text, markdown, latex, csv or html;
    see tacit.core.display), the warning about runs that are not like for like under them.

    Examples:
        >>> print(tacit.table(["results/retrieve/a", "results/retrieve/b"]))  # doctest: +SKIP
    """
    from tacit.core.display import render

    tables, warnings = runs_tables(runs, **options)
    text = render(tables, format, width=width)
    return text if format == "csv" or not warnings else text + "\n" + "\n".join(warnings) + "\n"


table = runs_table  # tacit.table
