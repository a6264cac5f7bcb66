"""One exit-status rule for every command, whoever runs the command line (the `probe` script,
`python -m tacit.cli`, a test's CliRunner): 0 done (help included), 1 a user mistake, found by
tacit or by the command-line parser (one `error:` line on stderr, never a boxed message and
status 2), 130 Ctrl-C and 143 SIGTERM (one line each: tacit.cli.common.interrupted)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import Any

import typer.core

USAGE = 1  # the exit status of every user mistake, the parser's included


class ProbeGroup(typer.core.TyperGroup):
    """The `probe` command group: typer's, with the parser's mistakes said tacit's way."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = functools.partial(
            super().main, args, prog_name, complete_var, False, windows_expand_args, **extra
        )
        if not standalone_mode:  # the caller handles what the parser raises
            return run()
        try:
            status = run()
        except Exception as err:
            sys.exit(parser_status(err))
        sys.exit(status if isinstance(status, int) else 0)


def _named(err: BaseException, name: str) -> bool:
    """Whether the exception is of the parser's class `name` (click's, or the copy of click
    that recent typer versions carry)."""
    return any(cls.__name__ == name for cls in type(err).__mro__)


def parser_status(err: Exception) -> int:
    """What the command-line parser raised, as an exit status: a group's help when it is
    called with nothing (0), Ctrl-C while it parsed (130, one line), a usage mistake as one
    `error:` line (1). Anything else is a bug: re-raised, traceback and all."""
    if _named(err, "NoArgsIsHelpError"):
        err.show()  # type: ignore[attr-defined]  # prints the group's help
        return 0
    if _named(err, "Abort"):  # the parser turns Ctrl-C into Abort
        from tacit.cli.common import INTERRUPTION, interrupted
        from tacit.core.errors import Terminated, last_interruption

        stop = last_interruption()
        if not INTERRUPTION["said"]:
            interrupted(stop)
        return 143 if isinstance(stop, Terminated) else 130
    if _named(err, "ClickException"):
        typer.echo(f"error: {_usage_line(err)}", err=True)
        return USAGE
    raise err


def _usage_line(err: Any) -> str:
    """The parser's message in one line, with where to read the command's options."""
    message = " ".join(str(err.format_message()).split())
    context = getattr(err, "ctx", None)
    if context is not None and _named(err, "UsageError"):
        message += f" (see `{context.command_path} --help`)"
    return message
