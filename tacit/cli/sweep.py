"""`probe sweep`: a grid of runs (models x probes x norm sets x options) into one folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors


@user_errors
def command(
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
