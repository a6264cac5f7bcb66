"""`probe sweep` and `probe leaderboard`: a grid of runs into one folder, and one table of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors

app = typer.Typer()


@app.command()
@user_errors
def sweep(
    file: Annotated[Path, typer.Argument(help="The sweep file (TOML; see docs/scaling.md).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="The sweep's folder (default: results/<stem>).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the cells and their state; run nothing.")
    ] = False,
) -> None:
    """Run a grid (models x probes x norm sets x options), one run directory per cell.

    Cells already complete are skipped and an interrupted cell resumes, so running the same
    sweep again goes on where it stopped.
    """
    from tacit.sweep import run_sweep

    folder = out or Path("results") / file.stem
    cells = run_sweep(file, folder, dry_run=dry_run)
    typer.echo(cells.to_string(index=False))
    done = int((cells["state"] == "complete").sum())
    if dry_run:
        typer.echo(f"{len(cells)} cell(s), {done} complete, {len(cells) - done} to run in {folder}")
    else:
        typer.echo(f"{len(cells)} cell(s) in {folder}: {len(cells) - done} run now, {done} "
                   "already complete")  # fmt: skip


@app.command()
@user_errors
def leaderboard(
    folder: Annotated[Path, typer.Argument(help="A sweep's folder (or any folder of runs).")],
    n_props: Annotated[
        int | None,
        typer.Option("--n-props", help="Retrieval: MRR at this many properties (default: most)."),
    ] = None,
) -> None:
    """One table across the runs of a folder: a row per model, a column per probe and cell
    settings (retrieval MRR, elicitation mAP); written as leaderboard.csv and leaderboard.md."""
    from tacit.core.errors import TacitError
    from tacit.core.files import table_text, write_files
    from tacit.sweep import leaderboard as build
    from tacit.sweep import markdown

    table = build(folder, n_props=n_props)
    try:
        write_files(
            folder, {"leaderboard.csv": table_text(table), "leaderboard.md": markdown(table)}
        )
    except OSError as err:
        raise TacitError(f"{folder}: cannot write the leaderboard ({err.strerror})") from None
    typer.echo(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    typer.echo(f"written to {folder / 'leaderboard.csv'} and leaderboard.md")
