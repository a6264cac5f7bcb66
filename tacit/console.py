"""The `probe` console script. It sits outside tacit.cli so that an interruption while the
command line itself is being imported also ends with the one-line message, not a traceback.
Exit statuses: tacit.cli.exits (0 done, 1 a user mistake, 130 Ctrl-C, 143 SIGTERM)."""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

from tacit.core.errors import Terminated, last_interruption, on_sigterm

if TYPE_CHECKING:
    from sys import UnraisableHookArgs


def _quiet_unraisable(hook: UnraisableHookArgs) -> None:
    """An interruption that lands while Python finalises something (a generator closed during
    a SIGTERM) was already said in the run's one line: not "Exception ignored in ..." too."""
    if not isinstance(hook.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(hook)


def _interruption_behind(err: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM an error wraps, if any: Python 3.11 turns one raised while a class
    is being created (a dataclass's `__set_name__`, as torch's modules import) into a
    RuntimeError, and transformers' lazy imports wrap that again."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def run() -> None:
    """Run `probe`; Ctrl-C at any moment exits 130 (SIGTERM 143) with one line on stderr."""
    try:
        _run()
    except KeyboardInterrupt as stop:  # a second one, while the first was being said
        raise SystemExit(143 if isinstance(stop, Terminated) else 130) from None


def _run() -> None:
    sys.unraisablehook = _quiet_unraisable
    signal.signal(signal.SIGTERM, on_sigterm)  # from the first moment: imports included
    try:
        from tacit.cli import app

        app(prog_name="probe")
    except KeyboardInterrupt as stop:
        from tacit.cli.common import interrupted

        raise SystemExit(interrupted(stop).exit_code) from None
    except Exception as err:
        behind = _interruption_behind(err)
        if behind is None:
            raise
        from tacit.cli.common import interrupted

        raise SystemExit(interrupted(behind).exit_code) from None
    except SystemExit as done:
        # typer ends a Ctrl-C or SIGTERM that comes while the command line is parsed (before a
        # command's own handler runs) as exit 130: say which it was, once
        if done.code == 130:
            from tacit.cli.common import INTERRUPTION, interrupted

            if not INTERRUPTION["said"]:
                interruption = _interruption_behind(done) or last_interruption()
                raise SystemExit(interrupted(interruption).exit_code) from None
        raise
    finally:
        # The exit status is decided: a Ctrl-C or SIGTERM while Python shuts down (torch's and
        # tqdm's exit handlers) must not turn a finished run into a death by that signal.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    run()
