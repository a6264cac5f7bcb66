"""`probe report`: a self-contained HTML file of one or more run directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors, warnings_said


@user_errors
def command(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (any probe).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.")] = Path(
        "report.html"
    ),
) -> None:
    """Write one HTML file to look at: each run's manifest in brief, its summary table, its
    figures and what was dropped and why; several runs side by side. It opens without a
    network (styles and figures are inside the file)."""
    from tacit.results.html_report import write_report

    with warnings_said():
        written = write_report(runs, out)
    typer.echo(f"written to {written}")
