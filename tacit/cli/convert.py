"""`probe convert`: other benchmarks' released files as files tacit reads (mLAMA as items)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import user_errors

app = typer.Typer(
    help="Turn other benchmarks' released files into files tacit reads.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


@app.command("mlama")
@user_errors
def mlama(
    directory: Annotated[
        Path,
        typer.Argument(help="mLAMA's release, unzipped (mlama1.1/: a folder per language)."),
    ],
    language: Annotated[
        str, typer.Option("--language", "-l", help="The language's folder name: de, fr, ...")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The items file to write (JSON lines).")],
    relation: Annotated[
        list[str] | None,
        typer.Option("--relation", "-r", help="Keep only this relation (repeatable): P19, ..."),
    ] = None,
) -> None:
    """mLAMA's templates and triples of one language as a cloze items file: each triple an
    item (the template with its subject, the blank at [Y]), its candidates every object of the
    relation in that language, its group the relation. Run it with `probe items OUT -m MODEL`.
    Prints the items kept and every triple dropped, with the reason. See docs/probes/mlama.md.
    """
    from tacit.probes.items.mlama import convert_mlama

    conversion = convert_mlama(directory, language, out, relations=relation)
    for line in conversion.report():
        typer.echo(line)
    typer.echo(f"wrote {out}; run it: probe items {out} -m MODEL")
