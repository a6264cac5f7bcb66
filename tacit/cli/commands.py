"""The `probe` app: a command per probe of the registry (tacit.probes.registry), built from its
declaration (tacit.cli.probe_command), and one module per other command, thin over the Python
API.

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
from tacit.cli.probe_command import probe_command
from tacit.probes import registry

# the commands that are not probes -> each its module under tacit/cli/ (which defines
# `command`); every tacit probe is a command too, built from its declaration (probe_command)
COMMANDS = (
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
for name in registry.builtin():
    app.command(name)(probe_command(name))
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
