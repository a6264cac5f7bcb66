"""The `probe` app: one module per command (a probe's command is built from its
declaration: tacit.cli.probe_command), thin over the Python API.

Only typer and tacit's light modules are imported here; each command imports what it runs when
it runs, so `probe --help` loads neither torch nor transformers and answers at once.
"""

from __future__ import annotations

import importlib
import os
from typing import Annotated

import typer

from tacit.cli import convert, norms
from tacit.cli.common import DEBUG
from tacit.cli.exits import ProbeGroup

# command -> its module under tacit/cli/ (each defines `command`)
COMMANDS = (
    "retrieve",
    "elicit",
    "prince",
    "nli",
    "pragmeval",
    "items",
    "surprisal",
    "runs",
    "table",
    "plot",
    "vocab",
    "report",
    "sweep",
    "leaderboard",
    "compare",
    "export",
)

app = typer.Typer(
    cls=ProbeGroup,  # one exit status for every user mistake: tacit.cli.exits
    help="Probe language models for the tacit assumptions people hold about concepts.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
for name in COMMANDS:
    app.command(name)(importlib.import_module(f"tacit.cli.{name}").command)
app.add_typer(norms.app, name="norms")
app.add_typer(convert.app, name="convert")


@app.callback()
def main(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full Python traceback on errors.")
    ] = False,
) -> None:
    """Probe language models for the tacit assumptions people hold about concepts."""
    DEBUG["on"] = debug or bool(os.environ.get("TACIT_DEBUG"))  # per invocation
