"""The `probe` console script. It sits outside tacit.cli so that an interruption while the
command line itself is being imported also ends with the one-line message, not a traceback.

One exit-status rule for every command: 0 done (help included), 1 a user mistake (a wrong
option, a missing argument, a file that cannot be read: one `error:` line on stderr, whether
tacit or the command-line parser found it), 130 Ctrl-C and 143 SIGTERM (one line each).
"""

from __future__ import annotations

import sys
from typing import Any

USAGE = 1  # the exit status of every user mistake, the parser's included


def run() -> None:
    """Run `probe`; Ctrl-C at any moment exits 130 (SIGTERM 143) with one line on stderr."""
    try:
        from tacit.cli import app

        status = app(prog_name="probe", standalone_mode=False)
    except KeyboardInterrupt as stop:
        from tacit.cli.common import interrupted

        raise SystemExit(interrupted(stop).exit_code) from None
    except Exception as err:
        raise SystemExit(_parser_error(err)) from None
    raise SystemExit(status if isinstance(status, int) else 0)


def _named(err: BaseException, name: str) -> bool:
    """Whether the exception is of the parser's class `name` (click's, or the copy of click
    that recent typer versions carry)."""
    return any(cls.__name__ == name for cls in type(err).__mro__)


def _parser_error(err: Exception) -> int:
    """What the command-line parser raised, as an exit status: its help when a group is called
    with nothing (0), Ctrl-C while it parsed (130, one line), a usage mistake as one `error:`
    line (1). Anything else is a bug: re-raised, traceback and all."""
    if _named(err, "NoArgsIsHelpError"):
        err.show()  # type: ignore[attr-defined]  # prints the group's help
        return 0
    if _named(err, "Abort"):  # the parser turns Ctrl-C into Abort
        from tacit.cli.common import INTERRUPTION, interrupted

        if not INTERRUPTION["said"]:
            interrupted(KeyboardInterrupt())
        return 130
    if _named(err, "ClickException"):
        print(f"error: {_usage_line(err)}", file=sys.stderr)
        return USAGE
    raise err


def _usage_line(err: Any) -> str:
    """The parser's message in one line, with where to read the command's options."""
    message = " ".join(str(err.format_message()).split())
    context = getattr(err, "ctx", None)
    if context is not None and _named(err, "UsageError"):
        message += f" (see `{context.command_path} --help`)"
    return message


if __name__ == "__main__":
    run()
