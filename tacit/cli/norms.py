"""`probe norms install`, `show` and `remove`: the norm sets a run can use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from tacit.cli.common import VocabFile, user_errors
from tacit.core.errors import TacitError
from tacit.core.options import VOCAB_FILE
from tacit.probes.shared_options import NORMS, NORMS_COLUMNS, NORMS_FORMAT

if TYPE_CHECKING:
    from tacit.norms import NormSet
    from tacit.vocab.shared import Vocabulary

app = typer.Typer(
    help="Install and inspect concept-property norms (CSLB, McRae, or your own table).",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def norms_report(norm_set: NormSet) -> str:
    """Format, rows, concepts, sha256, feature types, relations and merged duplicates."""
    from tacit.norms import FEATURE_TYPES

    table = norm_set.table
    types = (
        ", ".join(f"{t} {int((table['feature_type'] == t).sum())}" for t in FEATURE_TYPES)
        if norm_set.feature_types
        else "none given (no feature_type column): --category cannot be used"
    )
    lines = [
        f"{norm_set.path} ({norm_set.format}): {len(table)} concept-feature rows, "
        f"{len(norm_set.concepts)} concepts",
        f"sha256 {norm_set.sha256}",
        f"feature types: {types}",
        "relations: " + ", ".join(f"{r} {n}" for r, n in table["relation"].value_counts().items()),
    ]
    if len(norm_set.merged):
        lines.append(
            f"merged duplicates: {len(norm_set.merged)} concept-feature pair(s) listed more "
            "than once, each kept once with its pf the number of distinct participants over "
            "its rows (the largest row's pf where the file lists no participants):"
        )
    for row in norm_set.merged.itertuples():
        pfs = " and ".join(", ".join(row.pfs.split()).rsplit(", ", 1))
        lines.append(
            f"  {row.concept} / {row.feature}: pf {pfs} in {len(row.pfs.split())} rows, "
            f"merged to pf {row.pf}"
        )
    return "\n".join(lines)


# the norms options as the probes declare them (tacit.probes.shared_options)
NormsPath = Annotated[str | None, typer.Option("--norms", help=NORMS.help)]
NormsFormat = Annotated[
    str | None,
    typer.Option(
        "--norms-format",
        help=NORMS_FORMAT.help,
    ),
]
NormsColumns = Annotated[str | None, typer.Option("--norms-columns", help=NORMS_COLUMNS.help)]


def probe_counts(norm_set: NormSet, vocab: Vocabulary) -> str:
    """What each probe that reads norms keeps of these with this vocabulary (Probe.keeps)."""
    from tacit.probes import registry

    kept = (registry.get(name).keeps(norm_set, vocab) for name in registry.names())
    return "\n".join(text for text in kept if text)


@app.command("install")
@user_errors
def install(
    names_and_path: Annotated[
        list[str],
        typer.Argument(
            help="[NAME] PATH: the norms file (or a Hub dataset's file, "
            "hf://datasets/OWNER/NAME[@REVISION]/PATH), and the name to install it under "
            "(default `cslb`, `mcrae`, or a generic table's file name).",
            metavar="[NAME] PATH",
        ),
    ],
    norms_format: NormsFormat = None,
    norms_columns: NormsColumns = None,
    default: Annotated[
        bool, typer.Option("--default", help="Make these the norms runs use without --norms.")
    ] = False,
) -> None:
    """Validate a norms file once and remember it, under a name, for later runs.

    `probe norms install mcrae PATH` then `probe retrieve --norms mcrae ...`. The first norm
    set installed is the default (runs without --norms use it); --default makes this one it.
    """
    from tacit.norms import parse_columns
    from tacit.norms.store import register_norms

    if len(names_and_path) not in (1, 2):
        raise TacitError("probe norms install [NAME] PATH: give a file, optionally after a name")
    name = names_and_path[0] if len(names_and_path) == 2 else None
    path = names_and_path[-1]  # a path, or a Hub dataset's file (hf://, not a Path)
    done = register_norms(
        path,
        name,
        format=NORMS_FORMAT.validate(norms_format, "cli"),
        columns=parse_columns(norms_columns) if norms_columns else None,
        default=default,
    )
    typer.echo(norms_report(done.norms))
    installed = done.entry  # what this install wrote (another may have written since)
    if done.replaced is not None:
        typer.echo(
            f"note: {installed.name!r} named {done.replaced.path}; it names {installed.path} now",
            err=True,
        )
    default_note = (
        " (the default: runs without --norms or $TACIT_NORMS use it)" if installed.default else ""
    )
    typer.echo(
        f"installed as {installed.name!r}{default_note}: later runs take --norms {installed.name}"
    )


@app.command("remove")
@user_errors
def remove(
    name: Annotated[str, typer.Argument(help="The installed name (see `probe norms show`).")],
) -> None:
    """Forget an installed norm set (its file is left where it is).

    If it was the default, the first norm set left becomes the default.
    """
    from tacit.norms.store import remove_norms

    removed, default = remove_norms(name)
    typer.echo(f"removed {removed.name!r} ({removed.format}, {removed.path}; the file is kept)")
    if removed.default:
        typer.echo(
            f"the default is now {default!r}"
            if default
            else "no norm set is installed: runs need --norms or $TACIT_NORMS"
        )


@app.command("show")
@user_errors
def show(
    norms: NormsPath = None,
    norms_format: NormsFormat = None,
    norms_columns: NormsColumns = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Also count what retrieval and elicitation keep with these models' shared "
            "vocabulary (only their tokenizers are loaded).",
        ),
    ] = None,
    vocab_file: VocabFile = VOCAB_FILE.default,
) -> None:
    """The installed norm sets, then one norm set's counts, feature types, relations, and
    (given models) which concepts retrieval keeps and why the others are dropped."""
    from tacit.ask.vocabulary import vocabulary_for
    from tacit.norms import installed_norms, load_norms, parse_columns

    for entry in installed_norms():
        mark = "*" if entry.default else " "
        where = f"{entry.source} (cached at {entry.path})" if entry.source else entry.path
        typer.echo(f"{mark} {entry.name}: {entry.format}, {entry.concepts} concepts, {where}")
    norm_set = load_norms(
        norms,
        format=NORMS_FORMAT.validate(norms_format, "cli"),
        columns=parse_columns(norms_columns) if norms_columns else None,
    )
    typer.echo(norms_report(norm_set))
    if not model:
        typer.echo("give --model to count what the probes keep (needs the tokenizers)")
        return
    vocab = vocabulary_for(model, vocab_file=vocab_file)
    typer.echo(probe_counts(norm_set, vocab))
