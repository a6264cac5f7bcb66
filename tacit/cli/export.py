"""`probe export`: a run handed on, in lm-evaluation-harness's layout or to a tracker."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import choice, user_errors
from tacit.results.export import TARGETS


@user_errors
def command(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (any probe).")],
    to: Annotated[
        str,
        choice(
            "--to",
            choices=TARGETS,
            help="lm-eval: results_<date>.json and samples_<task>_<date>.jsonl per model, "
            "as lm-evaluation-harness writes them; wandb or mlflow: log the run's summary, "
            "manifest and files to that tracker (its extra: pip install 'tacit-probe[wandb]').",
        ),
    ] = "lm-eval",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="lm-eval, one run: the folder to write. Default: RUN/lm-eval."
        ),
    ] = None,
) -> None:
    """Hand finished runs on: write each in lm-evaluation-harness's layout (which its tools,
    Zeno and a Hub results dataset read), or log it to Weights & Biases or MLflow.

    A task per model and condition (`tacit_retrieve_top_decreasing_all_n_props_3`), each
    metric with a standard error derived from tacit's 95% bootstrap interval (the interval
    itself in the task's config), a sample per prompt with its scores. See
    docs/run-directory.md.
    """
    from tacit.core.errors import TacitError
    from tacit.results.export import export

    if out is not None and len(runs) > 1:
        raise TacitError(f"--out takes one run ({len(runs)} given): each goes to RUN/lm-eval")
    for run in runs:
        said = export(run, to=to, out=out)
        lines = str(said).splitlines()
        typer.echo(lines[0] if to == "lm-eval" else f"logged to {said}")
        for note in lines[1:]:
            typer.echo(note, err=True)
