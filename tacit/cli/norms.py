"""`probe norms install` and `probe norms show`: the norm sets a run can use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tacit.cli.common import NormsPath, VocabFile, user_errors

if TYPE_CHECKING:
    from tacit.norms.reader import NormSet

app = typer.Typer(
    help="Install and inspect concept-property norms.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def norms_report(norm_set: NormSet) -> str:
    """Rows, concepts, sha256, feature types, relations and merged duplicates of a norm set."""
    from tacit.norms.reader import FEATURE_TYPES

    table = norm_set.table
    lines = [
        f"{norm_set.path}: {len(table)} concept-feature rows, {len(norm_set.concepts)} concepts",
        f"sha256 {norm_set.sha256}",
        "feature types: "
        + ", ".join(f"{t} {int((table['feature_type'] == t).sum())}" for t in FEATURE_TYPES),
        "relations: " + ", ".join(f"{r} {n}" for r, n in table["relation"].value_counts().items()),
    ]
    for row in norm_set.merged.itertuples():
        lines.append(
            f"merged duplicate: {row.concept} / {row.feature} (pf {row.pfs} -> {row.pf}, "
            "distinct participants)"
        )
    return "\n".join(lines)


@app.command("install")
@user_errors
def install(
    path: Annotated[Path, typer.Argument(help="The norms file (CSLB's norms.dat).")],
) -> None:
    """Validate a norms file once and remember it for later runs."""
    from tacit.norms.store import install_norms

    norm_set = install_norms(path)
    typer.echo(norms_report(norm_set))
    typer.echo(f"installed: later runs use {path.resolve()} unless --norms is given")


@app.command("show")
@user_errors
def show(
    norms: NormsPath = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="Also check which concepts are single tokens for these models."
        ),
    ] = None,
    vocab_file: VocabFile = None,
) -> None:
    """Counts, feature types, relations, and which concepts retrieval keeps or drops and why."""
    from tacit.norms.store import load_norms
    from tacit.probes.retrieve import eligible_concepts
    from tacit.results.reports import describe_drops, listed
    from tacit.vocab.shared import vocabulary_for

    norm_set = load_norms(norms)
    typer.echo(norms_report(norm_set))
    if not model:
        typer.echo("eligible concepts: give --model to check single tokens (needs the tokenizers)")
        return
    shared, _ = vocabulary_for(model, vocab_file=vocab_file)
    eligible, dropped = eligible_concepts(norm_set, shared)
    typer.echo(describe_drops(dropped, len(eligible)))
    for reason, rows in dropped.groupby("reason", sort=False):
        typer.echo(f"  {reason}: {listed(list(rows['concept']), 12)}")
