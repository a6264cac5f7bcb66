"""The `probe` console script. It sits outside tacit.cli so that an interruption while the
command line itself is being imported also ends with the one-line message, not a traceback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sys import UnraisableHookArgs


def _quiet_unraisable(hook: UnraisableHookArgs) -> None:
    """An interruption that lands while Python finalises something (a generator closed during
    a SIGTERM) was already said in the run's one line: not "Exception ignored in ..." too."""
    if not isinstance(hook.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(hook)


def run() -> None:
    """Run `probe`; Ctrl-C at any moment exits 130 (SIGTERM 143) with one line on stderr."""
    sys.unraisablehook = _quiet_unraisable
    try:
        from tacit.cli import app

        app(prog_name="probe")
    except KeyboardInterrupt as stop:
        from tacit.cli.common import interrupted

        raise SystemExit(interrupted(stop).exit_code) from None
    except SystemExit as done:
        # typer turns a Ctrl-C that comes while it parses the command line (before a command's
        # own handler runs) into a silent exit 130: say it here, once
        if done.code == 130:
            from tacit.cli.common import INTERRUPTION, interrupted

            if not INTERRUPTION["said"]:
                interrupted(KeyboardInterrupt())
        raise


if __name__ == "__main__":
    run()
