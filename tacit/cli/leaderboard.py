"""`probe leaderboard`: the runs under a folder, a row per model of each run, ranked like for
like."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tacit.cli.common import user_errors, warnings_said
from tacit.cli.table import Format

if TYPE_CHECKING:
    import pandas as pd

EXTENSIONS = {".csv": "csv", ".md": "markdown", ".tex": "latex", ".txt": "text"}


@user_errors
def command(
    folder: Annotated[
        Path, typer.Argument(help="A folder of runs, read at any depth (results/, a sweep's).")
    ] = Path("results"),
    n_props: Annotated[
        int | None,
        typer.Option(
            "--n-props",
            help="Retrieval: MRR at this many properties (default: the "
            "most a run has; a run with fewer shows its most).",
        ),
    ] = None,
    conditions: Annotated[
        bool,
        typer.Option(
            "--conditions",
            help="Also every other condition of a run (an ablation's "
            "other orderings or categories, elicitation without the prefix or per "
            "relation), a column each.",
        ),
    ] = False,
    format: Format = "text",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Also write it to this file, in the format its "
            "extension names: .csv, .md, .tex or .txt. Nothing is written otherwise.",
        ),
    ] = None,
) -> None:
    """A row per model of every run under a folder: its probe's primary metric at the run's
    main condition with its 95% interval, as in the run's summary.csv (retrieval: MRR at the
    largest number of properties, an ablation at top/decreasing/all; elicitation: mAP with the
    prefix over every relation). Runs are ranked within groups that are like for like (the
    same vocabulary or candidates, norms, concepts, span scoring) and show the same
    condition; groups are never ranked together. Printed; written only with --out. For a
    sweep over training checkpoints, also the metric against the step, a line per model
    (with --out, by_step.csv and by_step.png beside it)."""
    from tacit.core.display import render
    from tacit.core.errors import TacitError
    from tacit.core.files import table_text, write_atomic
    from tacit.results.leaderboard import leaderboard, leaderboard_tables

    if out is not None and out.suffix.lower() not in EXTENSIONS:
        raise TacitError(
            f"--out {out}: the extension says the format: one of {', '.join(EXTENSIONS)}"
        )
    with warnings_said():
        table = leaderboard(folder, n_props=n_props, conditions=conditions)
    tables, warnings = leaderboard_tables(table)

    def shown(chosen: str, width: int | None = None) -> str:
        """CSV: every column of the leaderboard, to read back; else its tables, group by group."""
        return table_text(table) if chosen == "csv" else render(tables, chosen, width=width)

    typer.echo(shown(format), nl=False)
    for warning in warnings:
        typer.echo(warning, err=True)
    if out is not None:
        text = shown(EXTENSIONS[out.suffix.lower()], width=100)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(out, text)
        except OSError as err:
            raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None
        typer.echo(f"written to {out}", err=True)
    from tacit.results.steps import has_steps

    if has_steps(folder):  # a sweep over training checkpoints: the metric by step too
        _by_step(folder, table, None if out is None else out.parent)


def _by_step(folder: Path, board: pd.DataFrame, beside: Path | None) -> None:
    """The primary metric against the training step: printed, and with --out, written as
    by_step.csv and by_step.png in its folder."""
    from tacit.core.errors import TacitError
    from tacit.core.files import table_text, write_files
    from tacit.probes.figures import figure_bytes
    from tacit.results.steps import by_step, steps_figure

    table = by_step(folder, board=board)
    shown = table.pivot_table(index=["model", "step"], columns="cell", values="value")
    typer.echo("\nby training step:\n" + shown.to_string(float_format=lambda x: f"{x:.4f}"))
    if beside is None:
        return
    figure = figure_bytes(steps_figure(table))
    try:
        write_files(beside, {"by_step.csv": table_text(table), "by_step.png": figure})
    except OSError as err:
        raise TacitError(f"{beside}: cannot write the table by step ({err.strerror})") from None
    typer.echo(f"by training step: written to {beside / 'by_step.csv'} and by_step.png", err=True)
