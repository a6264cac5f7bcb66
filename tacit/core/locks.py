"""One owner at a time: an advisory lock on a lock file, for what several processes may change
at once (the norms registry; a run directory).

The lock is `fcntl.flock` on a lock file that holds the owner's process id, so that a process
refused after waiting can say who holds it. The operating system releases a flock when its
owner exits, however it exits (a crash, `kill -9`), so no stale lock is ever left to clear by
hand. The lock file itself stays where it is: removing it while another process waits on it
would let two processes each lock a file of the same name. On Windows (no `fcntl`) the lock is
no lock: `file_lock` then does nothing, and concurrent writers are not kept apart there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tacit.core.errors import TacitError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

POLL_SECONDS = 0.05


def holder(path: str | Path) -> int | None:
    """The process id a lock file names (its owner while it is held); None if it names none."""
    try:
        text = Path(path).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def file_lock(path: str | Path, what: str, *, wait: float = 10.0) -> Iterator[None]:
    """Hold an exclusive advisory lock on `path` (created if missing) for the `with` block.

    A process that finds the lock held waits up to `wait` seconds (0: one try) for it, then is
    refused with one line naming `what` and the owner's process id. Not re-entrant: a process
    that takes the same lock twice waits for itself.

    Args:
        path: the lock file, beside what it guards (`norms.json.lock`); its directory must exist.
        what: what the lock guards, in words, for the refusal (`the norms registry`).
        wait: seconds to wait for a lock another process holds.

    Raises:
        TacitError: the lock file cannot be created, or another process held the lock for
            longer than `wait` seconds.
    """
    if fcntl is None:  # pragma: no cover - Windows: no lock
        yield
        return
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise TacitError(
            f"{path}: cannot create the lock file for {what} ({err.strerror}); make its "
            "directory writable"
        ) from None
    try:
        _acquire(descriptor, path, what, wait)
        try:
            with suppress(OSError):  # the id is for the refusal only: a full disk keeps the lock
                os.ftruncate(descriptor, 0)
                os.pwrite(descriptor, f"{os.getpid()}\n".encode("ascii"), 0)
            yield
        finally:
            with suppress(OSError):
                os.ftruncate(descriptor, 0)  # released: the file names no owner
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def _acquire(descriptor: int, path: Path, what: str, wait: float) -> None:
    """Take the lock, trying every POLL_SECONDS until `wait` seconds have passed."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                break
            time.sleep(POLL_SECONDS)
    owner = holder(path)
    who = f"process {owner}" if owner is not None else "another process"
    raise TacitError(
        f"{what} is in use by {who} (lock file {path}, waited {wait:g} s); let it finish, "
        "then try again"
    )
