"""One owner at a time: an exclusive lock on a lock file (the `filelock` package: `flock`,
`LockFileEx`), for what several processes may change at once (the norms registry, a run
directory, a sweep's cell). The file holds the owner's process id, so a process refused after
waiting can say who holds it; the system releases the lock however its owner exits, so no
stale lock is left. The lock file stays: removing it while another waits would let two
processes each lock a file of that name. The id is written after the first byte, which
Windows locks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tacit.core.errors import TacitError

POLL_SECONDS = 0.05


def holder(path: str | Path) -> int | None:
    """The process id a lock file names (its owner while it is held); None if it names none."""
    from tacit.core.files import read_start

    try:
        if Path(path).is_symlink():  # not a lock file tacit made
            return None
        text = read_start(path, 33)[1:].decode("ascii").strip()  # past a Windows lock's byte
    except (TacitError, ValueError):  # missing, unreadable, not a regular file
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def file_lock(path: str | Path, what: str, *, wait: float = 10.0) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the `with` block.

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
    from filelock import FileLock, Timeout

    path = Path(path)
    owned: list[int] = []  # the descriptor that holds the lock, once it does

    def write_owner(descriptor: int) -> None:
        owned.append(descriptor)
        with suppress(OSError):  # the id is for the refusal only: a full disk keeps the lock
            os.ftruncate(descriptor, 0)
            os.lseek(descriptor, 0, os.SEEK_SET)
            os.write(descriptor, f"\n{os.getpid()}\n".encode("ascii"))

    if not path.parent.is_dir():
        raise TacitError(
            f"{path}: cannot create the lock file for {what} (No such directory); make its "
            "directory first"
        )
    if path.is_symlink() or (path.exists() and not path.is_file()):
        kind = f"a link to {os.readlink(path)}" if path.is_symlink() else "not a regular file"
        raise TacitError(
            f"{path}: {kind}, where tacit keeps the lock file for {what}: tacit locks no file "
            "that is not its own; remove it (it is made again, as a plain file)"
        )
    lock = FileLock(
        path, timeout=wait, is_singleton=False, preserve_lock_file=True, on_acquired=write_owner
    )
    try:
        lock.acquire(poll_interval=POLL_SECONDS)
    except Timeout:
        owner = holder(path)
        who = f"process {owner}" if owner is not None else "another process"
        raise TacitError(
            f"{what} is in use by {who} (lock file {path}, waited {wait:g} s); let it finish, "
            "then try again"
        ) from None
    except OSError as err:
        raise TacitError(
            f"{path}: cannot create the lock file for {what} ({err.strerror}); make its "
            "directory writable"
        ) from None
    try:
        yield
    finally:
        for descriptor in owned:
            with suppress(OSError):
                os.ftruncate(descriptor, 0)  # released: the file names no owner
        lock.release()
