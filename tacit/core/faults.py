"""Named points where a test may kill the process, to show that what tacit writes survives a
crash at any moment: `TACIT_FAULT=<point>` (or `<point>@<n>`, the n-th time the point is
reached) makes `point(<point>)` end the process at once with SIGKILL, as a power cut or the
out-of-memory killer would; with `TACIT_FAULT_SIGNAL=INT` or `TERM`, it sends itself that
signal instead (Ctrl-C, a scheduler's SIGTERM), handled as it would be. Unset (always, outside
the fault-injection tests), `point` costs a dictionary look-up."""

from __future__ import annotations

import os
import signal

ENV = "TACIT_FAULT"
SIGNAL_ENV = "TACIT_FAULT_SIGNAL"
_reached: dict[str, int] = {}


def point(name: str) -> None:
    """End the process here if TACIT_FAULT names this point (and this is the time it counts)."""
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    target, _, times = wanted.partition("@")
    if target != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == int(times or 1):
        sent = os.environ.get(SIGNAL_ENV)
        os.kill(os.getpid(), getattr(signal, f"SIG{sent}") if sent else signal.SIGKILL)
