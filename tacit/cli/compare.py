"""`probe compare`: do the models of like-for-like runs differ? Paired tests over concepts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors, warnings_said
from tacit.cli.table import Format


@user_errors
def command(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories: one run of several "
            "models, or several runs that scored the same things."
        ),
    ],
    n_props: Annotated[
        int | None,
        typer.Option(
            "--n-props",
            help="Retrieval: compare MRR at this many properties (default: "
            "the most the runs have).",
        ),
    ] = None,
    resamples: Annotated[
        int,
        typer.Option(
            "--resamples",
            help="Random sign patterns of the permutation test past "
            "20 concepts (up to 20, all 2^n are counted: an exact test); structure runs: "
            "the bootstrap's draws of the concepts.",
        ),
    ] = 10000,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the random sign patterns (said in the output).")
    ] = 0,
    format: Format = "text",
) -> None:
    """For every pair of models that scored the same items, the difference of the primary
    metric at the main condition (retrieval: MRR; elicitation: mAP with the prefix), a paired
    permutation test over concepts (exact up to 20 concepts) with its 95% interval (the
    differences the test does not reject), and the p-values adjusted by Holm's method over the
    comparisons of each table; structure runs (RSA, computed over every pair of concepts): a
    paired bootstrap over concepts. Runs that are not like for like are never compared with
    each other. `--format csv`: every column, how p was counted and the seed included."""
    from tacit.core.display import render
    from tacit.core.files import table_text
    from tacit.results.comparisons import compare, comparison_tables

    with warnings_said():
        table = compare(runs, n_resamples=resamples, seed=seed, n_props=n_props)
    shown = table_text(table) if format == "csv" else render(comparison_tables(table), format)
    typer.echo(shown, nl=False)
