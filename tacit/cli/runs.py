"""Commands on runs and on vocabularies: `probe runs`, `probe table`, `probe plot`,
`probe vocab`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import Models, Revision, VocabFile, choice, user_errors
from tacit.core.errors import TacitError
from tacit.core.options import PLOT_KINDS

app = typer.Typer()


@app.command()
@user_errors
def runs(
    folder: Annotated[
        Path, typer.Argument(help="Where to look (default: results/, where runs go).")
    ] = Path("results"),
) -> None:
    """List the run directories under a folder: probe, models, norms, when it started, size,
    and whether it is complete or interrupted (then `--resume --out RUN` goes on with it)."""
    from tacit.results.runs import list_runs

    found = list_runs(folder)
    if found.empty:
        typer.echo(f"no runs under {folder}")
        return
    typer.echo(found.to_string(index=False))


@app.command()
@user_errors
def table(
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

    typer.echo(runs_table(runs, n_props))


@app.command()
@user_errors
def plot(
    runs: Annotated[list[Path], typer.Argument(help="Retrieval run directories.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Figure file: .png, .svg or .pdf.")
    ] = Path("retrieval.png"),
    kind: Annotated[
        str,
        choice(
            "--kind", choices=PLOT_KINDS, help="Which figure; auto: from what the runs contain."
        ),
    ] = "auto",
) -> None:
    """Plot MRR and mean target probability against the number of properties.

    One line per model (the paper's Figure 2), per property category (Figure 3a), or per
    selection x order with the random baseline (Figure 3b), chosen from what the runs
    contain; bands are 95% bootstrap intervals over concepts. Runs that draw different
    figures are refused; runs that scored different things (vocabulary or candidates, norms,
    concepts) are drawn with a warning, printed and in the figure.
    """
    import warnings

    from tacit.results.plots import plot as plot_runs  # matplotlib only when plotting

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = plot_runs(runs, out, kind=kind)
    for warning in caught:
        typer.echo(f"warning: {warning.message} (said in the figure too)", err=True)
    typer.echo(f"written to {written}")


@app.command()
@user_errors
def vocab(
    model: Models,
    vocab_file: VocabFile = None,
    revision: Revision = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the words here.")] = None,
) -> None:
    """Build the shared vocabulary of the models' tokenizers and report its coverage.

    A word is in it when every tokenizer encodes it, after a space, as one whole-word token
    (RoBERTa's leading-space form; no WordPiece ## pieces, no special tokens), and, with
    --vocab-file, when the file lists it.
    """
    from tacit.core.files import write_atomic
    from tacit.vocab.shared import vocabulary_for

    shared, _ = vocabulary_for(model, vocab_file=vocab_file, revision=revision)
    typer.echo(shared.coverage.to_string(index=False))
    for warning in shared.warnings():
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(f"shared vocabulary: {len(shared)} words (sha256 {shared.sha256[:12]})")
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(out, shared.text())
        except OSError as err:
            raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None
        typer.echo(f"written to {out}")
