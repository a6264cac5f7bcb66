"""`probe leaderboard`: one table of the runs under a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors


@user_errors
def command(
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
