"""`probe table`: one table across runs of one probe."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors


@user_errors
def command(
    runs: Annotated[list[Path], typer.Argument(help="Elicitation or retrieval run directories.")],
    n_props: Annotated[
        str,
        typer.Option(
            "--n-props", help="Retrieval: the numbers of properties to show, e.g. 1,5,10."
        ),
    ] = "1,5,10",
) -> None:
    """One table across runs and models.

    Elicitation runs: the paper's Table 1 (and Table 2's changes, for runs with and without
    the prefix of the same models). Retrieval runs: MRR at the chosen numbers of properties,
    a row per run, model and condition. Runs holding the same model are told apart by their
    directory.
    """
    from tacit.results.tables import runs_table

    typer.echo(runs_table(runs, n_props=n_props))
