"""`probe table`: one table across runs of one probe."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import choice, user_errors, warnings_said
from tacit.core.display import FORMATS

Format = Annotated[
    str,
    choice(
        "--format",
        choices=[f for f in FORMATS if f != "html"],
        help="text (fitted to the terminal), or a table to paste into a paper or read "
        "back: markdown, latex, csv (every digit, intervals in their own columns).",
    ),
]


@user_errors
def command(
    runs: Annotated[list[Path], typer.Argument(help="Elicitation or retrieval run directories.")],
    n_props: Annotated[
        str,
        typer.Option(
            "--n-props", help="Retrieval: the numbers of properties to show, e.g. 1,5,10."
        ),
    ] = "1,5,10",
    format: Format = "text",
) -> None:
    """One table across runs and models.

    Elicitation runs: the paper's Table 1 a row per model and relation, mAP with its 95%
    interval (and Table 2's changes, for runs with and without the prefix). Retrieval runs:
    MRR with its interval, P@1, hits@10 and the mean target probability at the chosen numbers
    of properties, a row per model, condition and number. Models are in --model order by their
    short names; a model in several runs is named with its run. Runs that are not like for
    like (other vocabulary or candidates, norms, concepts, span scoring) are shown in tables
    of their own, with the reason.
    """
    from tacit.core.display import render
    from tacit.results.tables import runs_tables

    with warnings_said():
        tables, warnings = runs_tables(runs, n_props=n_props)
    typer.echo(render(tables, format), nl=False)
    for warning in warnings:
        typer.echo(warning, err=True)
