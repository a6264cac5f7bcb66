"""The run directory: where it goes, that it can be written, and that no run is overwritten
unasked (see tacit.core.files for how its files are written)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path

from tacit.core.errors import TacitError
from tacit.core.files import is_temporary
from tacit.core.option_names import option

PARTIAL = ".partial"  # an interrupted run's checkpoint (tacit.engine.checkpoint)
LOCK = ".lock"  # held by the one process that owns the run directory (tacit.core.locks)
WRITE_TEST = ".write-test-"


def fresh_run_dir(probe: str, now: datetime | None = None) -> Path:
    """Create and return results/<probe>/<timestamp> (relative to the working directory), a
    new directory even when another run started in the same second (`-2`, `-3`, ... then)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    parent = Path("results") / probe
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TacitError(f"{parent}: cannot write there ({err.strerror})") from None
    for n in range(1, 1000):
        path = parent / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as err:
            raise TacitError(f"{path}: cannot write there ({err.strerror})") from None
        return path
    raise TacitError(
        f"{parent}: a thousand runs started in {stamp}'s second; give {option('--out')}"
    )


def _name_max(out: Path) -> int:
    """The longest name (in bytes) the file system `out` would be on allows; 255, the common
    limit, where it does not say."""
    for ancestor in out.absolute().parents:
        try:
            if ancestor.is_dir():
                return os.pathconf(ancestor, "PC_NAME_MAX")
        except (OSError, ValueError, AttributeError):  # a name too long itself; no pathconf
            continue
    return 255


def _exists(out: Path) -> bool:
    """Whether `out` exists. A name longer than the file system allows, or one the system
    refuses to look up, is one line (Path.exists raised an OSError), before any directory on
    the way is made."""
    limit = _name_max(out)
    longest = max((len(os.fsencode(part)) for part in out.parts), default=0)
    if longest > limit:
        raise TacitError(
            f"{option('--out')} {out}: a name of {longest} bytes, longer than the {limit} this "
            f"file system allows; give another {option('--out')} with shorter names"
        )
    try:
        return out.exists()
    except OSError as err:
        raise TacitError(f"{option('--out')} {out}: cannot write there ({err.strerror})") from None


def held_run(out: Path, *, checkpoint_ours: bool = False) -> str | None:
    """What the directory holds that a new run would overwrite, in words; None if nothing.
    `checkpoint_ours`: the checkpoint there is the saving run's own (it resumed from it)."""
    if not _exists(out) or not out.is_dir():
        return None
    entries = sorted(
        p.name
        for p in out.iterdir()
        if not p.name.startswith(WRITE_TEST)
        and p.name != LOCK
        and not is_temporary(p.name)
        and not (checkpoint_ours and p.name == PARTIAL)
    )
    if not entries:
        return None
    if "manifest.json" in entries:
        return "a run"
    if PARTIAL in entries:  # with the tables of a save that crashed before its manifest, too
        return "an interrupted run"
    shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
    return f"{len(entries)} other file(s) ({shown})"


def writer(path: Path) -> int | None:
    """The id of the process writing a run into the directory now, read from its lock file
    (which names its owner while held, and goes when the run ends), without touching the lock:
    None where none is. A process that died without a word (`kill -9`) leaves its id behind;
    where the system can tell (POSIX), a dead one is none."""
    from tacit.core.locks import holder

    owner = holder(path / LOCK)
    if owner is None or os.name != "posix":
        return owner
    try:
        os.kill(owner, 0)  # signal 0: is it alive? (sends nothing)
    except ProcessLookupError:
        return None
    except OSError:  # alive, another user's
        pass
    return owner


def unfinished(path: Path) -> str | None:
    """What a directory holds instead of a finished run (manifest.json), in words: a run in
    progress, an interrupted one (and how to go on with it), nothing, or other files; None
    where it holds a finished run."""
    if (path / "manifest.json").is_file():
        return None
    owner = writer(path)
    if owner is not None:
        return f"it holds a run in progress (process {owner} is writing it)"
    held = held_run(path)
    if held is None:
        return "the directory is empty"
    if held == "an interrupted run":
        return (
            f"it holds an interrupted run (no manifest.json); go on with it with "
            f"{option('--resume')} --out {path}"
        )
    return f"it holds {held} (no manifest.json)"


def check_overwrite(
    out: Path, *, resume: bool = False, overwrite: bool = False, checkpoint_ours: bool = False
) -> None:
    """Refuse to write a run into a directory that holds one, unless asked: `resume` goes on
    with an interrupted run (or reruns a finished one from its checkpoint), `overwrite`
    replaces the whole directory."""
    held = held_run(out, checkpoint_ours=checkpoint_ours)
    if held is None or overwrite or (resume and held in ("a run", "an interrupted run")):
        return
    if held == "an interrupted run":
        ask = f"{option('--resume')} to continue it, or {option('--overwrite')} to replace it"
    else:
        ask = (
            f"{option('--overwrite')} to replace the whole directory, or another {option('--out')}"
        )
    raise TacitError(f"{option('--out')} {out}: already holds {held}: {ask}")


def prepare_run_dir(out: str | Path) -> Path:
    """Create the run directory (and parents) or say clearly why it cannot be written."""
    out = Path(out)
    if _exists(out) and not out.is_dir():
        raise TacitError(f"{option('--out')} {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=WRITE_TEST):
            pass
    except OSError as err:
        raise TacitError(f"{option('--out')} {out}: cannot write there ({err.strerror})") from None
    return out


def remove_leftovers(out: Path) -> None:
    """Remove what a process killed while saving left: files it was writing under temporary
    names (tacit.core.files), never seen as results."""
    for path in out.iterdir():
        if is_temporary(path.name):
            with suppress(OSError):
                path.unlink()


def remove_stale(out: Path, keep: set[str]) -> None:
    """After an --overwrite run is saved: remove what the old run left that this one did not
    write, so the directory holds one run only (its owner's lock file stays)."""
    for path in out.iterdir():
        if path.name in keep or path.name == LOCK:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with suppress(OSError):
                path.unlink()


@contextmanager
def run_dir(out: str | Path, *, created: bool = False) -> Iterator[Path]:
    """Prepare the run directory and own it (one process at a time: a second is refused at
    once, in one line naming the first's process id) until the block ends; if the run fails,
    remove the directory again when we made it (or `created` says so) and it holds nothing, so
    a failed run leaves nothing behind: with `created` (fresh_run_dir's
    results/<probe>/<timestamp>), its empty parents go too.

    The lock file goes when the block ends, still locked: nothing waits on a run directory's
    lock (a second owner is refused, never queued), so no process can be left holding the
    removed file while another takes a new one."""
    from tacit.core.locks import file_lock

    out = Path(out)
    ours = created or not _exists(out)
    path = prepare_run_dir(out)
    try:
        with file_lock(path / LOCK, f"the run directory {path}", wait=0):
            try:
                yield path
            finally:
                with suppress(OSError):
                    (path / LOCK).unlink()
    except BaseException:
        if ours:
            for empty in [path, *(path.parents[:2] if created else [])]:
                try:
                    empty.rmdir()  # only succeeds while empty
                except OSError:
                    break
        raise
