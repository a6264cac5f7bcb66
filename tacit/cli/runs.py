"""`probe runs`: the run directories under a folder, with what they are and their state."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors


@user_errors
def command(
    folder: Annotated[
        Path, typer.Argument(help="Where to look (default: results/, where runs go).")
    ] = Path("results"),
) -> None:
    """List the run directories under a folder: probe, models, norms, when it started, size,
    and whether it is complete or interrupted (then `--resume --out RUN` goes on with it)."""
    from tacit.core.display import Table, render
    from tacit.results.runs import list_runs

    found = list_runs(folder)
    if found.empty:
        typer.echo(f"no runs under {folder}")
        return
    typer.echo(render(Table(found)), nl=False)
