"""`probe plot`: one figure of runs of one probe."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import choice, user_errors, warnings_said
from tacit.probes import registry
from tacit.probes.report import report_of

# every probe's figures, by name (`auto`: the probe's choice from what the runs hold)
# (`steps`: the metric by training step of a sweep over checkpoints: tacit.results.steps)
PLOT_KINDS = (
    *dict.fromkeys(k for n in registry.names() for k in report_of(registry.get(n)).figure_kinds),
    "steps",
)


@user_errors
def command(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Run directories of one probe (`--kind steps`: sweep folders)."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Figure file (.png, .svg or .pdf) or a folder. Default: the run directory "
            "(several runs: the folder that holds them), as PROBE-KIND.png.",
        ),
    ] = None,
    kind: Annotated[
        str,
        choice(
            "--kind",
            choices=PLOT_KINDS,
            help="Which figure; auto: from what the runs contain; steps: the primary metric "
            "against the training step of a sweep over checkpoints, a line per model.",
        ),
    ] = "auto",
    mixed: Annotated[
        bool,
        typer.Option(
            "--mixed",
            help="Draw runs that are not like for like (different "
            "vocabularies, candidates, norms, concepts, ...) in one figure anyway, the "
            "difference said in it.",
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a figure file that is already there.")
    ] = False,
) -> None:
    """Plot MRR and mean target probability against the number of properties.

    One line per model (the paper's Figure 2), per property category (Figure 3a), or per
    selection x order with the random baseline (Figure 3b), chosen from what the runs
    contain; bands are 95% bootstrap intervals over concepts. Runs that draw different
    figures are refused; so are runs that scored different things (vocabulary or candidates,
    norms, concepts), unless --mixed: then they are drawn with a warning, printed and in the
    figure. With `--kind steps`, the primary metric of every training checkpoint under the
    folders against its step. The figure goes into the run directory as PROBE-KIND.png
    (retrieve-models.png, elicit-figure.png), or to --out; a file already there is refused
    unless --overwrite.
    """
    from tacit.results.plots import plot as plot_runs  # matplotlib only when plotting

    def said(message: str) -> str:
        return " (said in the figure too)" if message.startswith("the runs") else ""

    with warnings_said(said):
        written = plot_runs(runs, out, kind=kind, mixed=mixed, overwrite=overwrite)
    typer.echo(f"written to {written}")
