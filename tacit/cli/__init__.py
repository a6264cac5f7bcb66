"""The `probe` command line: thin commands over the Python API, one module per group.

Only typer and tacit's light modules are imported here; each command imports what it runs when
it runs, so `probe --help` loads neither torch nor transformers and answers at once.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from tacit.cli import norms, pragmatics, probes, report, runs, sweep
from tacit.cli.common import DEBUG

app = typer.Typer(
    help="Probe language models for the tacit assumptions people hold about concepts.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
for group in (probes, pragmatics, runs, report, sweep):
    app.registered_commands.extend(group.app.registered_commands)
app.add_typer(norms.app, name="norms")


@app.callback()
def main(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full Python traceback on errors.")
    ] = False,
) -> None:
    """Probe language models for the tacit assumptions people hold about concepts."""
    DEBUG["on"] = debug or bool(os.environ.get("TACIT_DEBUG"))  # per invocation


def run() -> None:
    """Run the command line (the `probe` console script is tacit.console.run)."""
    from tacit.console import run as console_run

    console_run()


if __name__ == "__main__":
    run()
