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
            help="Bootstrap resamples and random sign patterns of "
            "the permutation test (exact where there are no more patterns).",
        ),
    ] = 10000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resamples.")] = 0,
    format: Format = "text",
) -> None:
    """For every pair of models that scored the same items, the difference of the primary
    metric at the main condition (retrieval: MRR; elicitation: mAP with the prefix), a paired
    95% bootstrap interval and a paired permutation test over concepts, and the p-values
    adjusted by Holm's method over the comparisons of each table. Runs that are not like for
    like are never compared with each other."""
    from tacit.core.display import render
    from tacit.results.comparisons import compare, comparison_tables

    with warnings_said():
        table = compare(runs, n_resamples=resamples, seed=seed, n_props=n_props)
    typer.echo(render(comparison_tables(table), format), nl=False)
