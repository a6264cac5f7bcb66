"""`probe leaderboard`: one table of the runs under a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors
from tacit.core.errors import TacitError


@user_errors
def command(
    folder: Annotated[Path, typer.Argument(help="A sweep's folder (or any folder of runs).")],
    n_props: Annotated[
        int | None,
        typer.Option("--n-props", help="Retrieval: MRR at this many properties (default: most)."),
    ] = None,
) -> None:
    """One table across the runs of a folder: a row per model, a column per probe and cell
    settings (retrieval MRR, elicitation mAP); written as leaderboard.csv and leaderboard.md.
    For a sweep over training checkpoints, also the metric against the step, a line per model:
    by_step.csv and by_step.png."""
    from tacit.core.files import table_text, write_files
    from tacit.results.leaderboard import leaderboard as build
    from tacit.results.leaderboard import markdown

    table = build(folder, n_props=n_props)
    try:
        write_files(
            folder, {"leaderboard.csv": table_text(table), "leaderboard.md": markdown(table)}
        )
    except OSError as err:
        raise TacitError(f"{folder}: cannot write the leaderboard ({err.strerror})") from None
    typer.echo(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    typer.echo(f"written to {folder / 'leaderboard.csv'} and leaderboard.md")
    from tacit.results.steps import has_steps

    if has_steps(folder):  # a sweep over training checkpoints: the metric by step too
        _by_step(folder, n_props)


def _by_step(folder: Path, n_props: int | None) -> None:
    """by_step.csv and by_step.png: the primary metric against the training step."""
    from tacit.core.files import table_text, write_files
    from tacit.probes.figures import figure_bytes
    from tacit.results.steps import by_step, steps_figure

    table = by_step(folder, n_props=n_props)
    figure = figure_bytes(steps_figure(table))
    try:
        write_files(folder, {"by_step.csv": table_text(table), "by_step.png": figure})
    except OSError as err:
        raise TacitError(f"{folder}: cannot write the table by step ({err.strerror})") from None
    shown = table.pivot_table(index=["model", "step"], columns="cell", values="value")
    typer.echo(shown.to_string(float_format=lambda x: f"{x:.4f}"))
    typer.echo(f"by training step: written to {folder / 'by_step.csv'} and by_step.png")
