"""The one home for writing files and hashing them.

Everything tacit writes (run directories, checkpoints, caches, figures, the norms registry) is
written whole or not at all: to a temporary name beside the target, then renamed into place.
Several files that belong together are staged first and renamed together with Ctrl-C and
SIGTERM held, so a run directory never holds some of a run's files but not others.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core import faults

if TYPE_CHECKING:
    import pandas as pd

SAVED_DIGITS = 8  # significant digits of a float in a saved table: float32 scores hold about 7
FLOAT_FORMAT = f"%.{SAVED_DIGITS}g"
# Unicode's control characters (category Cc) that a text file may not hold: all but tab, and
# the line ends (\n, \r) its text is split at; a value read from a line may hold no line end.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
CONTROL_IN_VALUE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
LINE_END = re.compile(r"\r\n|\r|\n")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def sha256_bytes(data: str | bytes) -> str:
    """Hex sha256 of text (UTF-8) or bytes."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


READ_LIMIT = 1 << 30  # bytes: the largest table or text a user or a run directory hands in
RECORD_LIMIT = 64 << 20  # bytes: the largest JSON record (a manifest, result.json, a plan)
HEAD = 1 << 16  # bytes: the start of a file checked before it is read whole
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _refusal(label: str, mode: os.stat_result, limit: int) -> str | None:
    """Why a file of this status is not read (not a regular file, too large); None: read it."""
    kind = next((said for test, said in _KINDS if test(mode.st_mode)), None)
    if kind is not None or not stat.S_ISREG(mode.st_mode):
        return f"{label}: {kind or 'not a regular file'}, not a regular file; give a file"
    if mode.st_size > limit:
        return (
            f"{label}: {mode.st_size:,} bytes, more than the {limit:,} tacit reads of such a "
            "file; is it the file you meant?"
        )
    return None


def regular_file(
    path: str | Path,
    label: str | None = None,
    *,
    limit: int = READ_LIMIT,
    missing_ok: bool = False,
    directory_ok: bool = False,
) -> None:
    """Refuse, in one line and without opening it, a path that read_input would not read: a
    FIFO, a device, a socket, a directory, a file over `limit` bytes; for a reader that opens
    it itself then (openpyxl, pandas, the caller's own messages for a missing file or a
    directory: `missing_ok`, `directory_ok`)."""
    from tacit.core.errors import TacitError

    label = label or str(path)
    try:
        mode = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return
        raise TacitError(f"{label}: no such file") from None
    except OSError as err:
        raise TacitError(f"{label}: cannot read it ({err.strerror})") from None
    if directory_ok and stat.S_ISDIR(mode.st_mode):
        return
    refused = _refusal(label, mode, limit)
    if refused is not None:
        raise TacitError(refused)


@contextmanager
def _opened(path: str | Path, label: str, limit: int) -> Iterator[Any]:
    """A regular file of at most `limit` bytes, open to read (unbuffered); one line refuses
    anything else, before a byte is read (a FIFO is opened without waiting for a writer)."""
    from tacit.core.errors import TacitError

    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC)
    except FileNotFoundError:
        raise TacitError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise TacitError(f"{label}: is a directory; give the file") from None
    except OSError as err:  # a socket cannot be opened: say what it is
        with suppress(OSError):
            refused = _refusal(label, os.stat(path), limit)
            if refused is not None:
                raise TacitError(refused) from None
        raise TacitError(f"{label}: cannot read it ({err.strerror})") from None
    with os.fdopen(descriptor, "rb", buffering=0) as handle:
        refused = _refusal(label, os.fstat(descriptor), limit)
        if refused is not None:
            raise TacitError(refused)
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        try:
            yield handle
        except OSError as err:
            raise TacitError(f"{label}: cannot read it ({err.strerror})") from None


def read_start(path: str | Path, size: int, label: str | None = None) -> bytes:
    """The first `size` bytes of a regular file (read_input's checks), to tell its kind."""
    with _opened(path, label or str(path), READ_LIMIT) as handle:
        return bytes(handle.read(size) or b"")


def read_input(
    path: str | Path,
    label: str | None = None,
    *,
    limit: int = READ_LIMIT,
    head: Callable[[bytes], None] | None = None,
) -> bytes:
    """The bytes of a file a user or a run directory hands in, read within bounds: a regular
    file only (a FIFO, a device such as /dev/zero behind a link, a socket or a directory is
    refused at once, before anything is read: opened without waiting for a writer), its size
    checked before reading (at most `limit` bytes), and `head` (a check that raises) given its
    first HEAD bytes before the rest is read. Every refusal is one line naming `label` (the
    path by default) and what it is.

    Examples:
        >>> read_input("/dev/zero")
        Traceback (most recent call last):
        ...
        tacit.core.errors.TacitError: /dev/zero: a character device, not a regular file; give a file
    """
    from tacit.core.errors import TacitError

    label = label or str(path)
    with _opened(path, label, limit) as handle:
        first = handle.read(HEAD) or b""
        if head is not None:
            head(first)
        blocks, size = [first], len(first)
        while size <= limit:
            block = handle.read(min(1 << 20, limit + 1 - size))
            if not block:
                break
            blocks.append(block)
            size += len(block)
    if size > limit:  # grown while read
        raise TacitError(f"{label}: more than the {limit:,} bytes tacit reads of such a file")
    return b"".join(blocks)


def text_head(path: str | Path) -> Callable[[bytes], None]:
    """A check of a text file's first bytes (UTF-8, no control character but tab), so that
    a file that is not text is refused at its first line, not after it is read whole."""

    def check(first: bytes) -> None:
        from tacit.core.errors import TacitError

        try:
            text = first.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            if err.start < len(first) - 3:  # not a character cut at the block's end
                at = first.count(b"\n", 0, err.start) + 1
                raise TacitError(f"{path}, line {at}: not UTF-8 text") from None
            text = first[: err.start].decode("utf-8-sig")
        check_text(text, path)

    return check


def read_utf8(path: Path, label: str) -> tuple[str, bytes]:
    """A user's text file (UTF-8, a byte-order mark allowed) and its bytes, read within
    bounds (read_input: its first lines checked before it is read whole); a missing,
    unreadable or undecodable file is one line, `label` naming the option it was given to."""
    from tacit.core.errors import TacitError

    data = read_input(path, label, head=text_head(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        at = data.count(b"\n", 0, err.start) + 1
        raise TacitError(f"{path}, line {at}: not UTF-8 text") from None
    check_text(text, path)
    return text, data


def _control_character(char: str) -> str:
    """How an error names a control character, with the likely cause of a NUL."""
    if char == "\x00":
        return "U+0000 (NUL: a file saved as UTF-16 has one beside every letter; save it as UTF-8)"
    return f"U+{ord(char):04X}"


def check_text(text: str, path: str | Path) -> None:
    """Refuse a control character other than tab in the text of a user's file (norms, templates,
    items, candidates, vocabulary, concepts, articles): one line naming the file, the line (its
    ends \\n, \\r\\n or \\r, as an editor counts them), the column and the character. Such a
    character is invisible in an editor and would reach the prompts as it is."""
    from tacit.core.errors import TacitError

    found = CONTROL.search(text)
    if found is None:
        return
    ends = list(LINE_END.finditer(text, 0, found.start()))
    column = found.start() - (ends[-1].end() if ends else 0) + 1
    raise TacitError(
        f"{path}, line {len(ends) + 1}: a control character, {_control_character(found.group())}, "
        f"at column {column}; text input may hold no control character but tab: remove it"
    )


def check_value(value: object, where: str) -> None:
    """check_text for what was read from one place of a file, `where`: a spreadsheet cell, a
    JSON line's strings (keys and values, nested ones too, where escapes such as `\\u0000` are
    decoded). A value may hold no line end either."""
    from tacit.core.errors import TacitError, shorten

    if isinstance(value, dict):
        for key, item in value.items():
            check_value(key, where)
            check_value(item, where)
    elif isinstance(value, list):
        for item in value:
            check_value(item, where)
    elif isinstance(value, str) and (found := CONTROL_IN_VALUE.search(value)) is not None:
        raise TacitError(
            f"{where}: a control character, {_control_character(found.group())}, in "
            f"{shorten(repr(value))}; text input may hold no control character but tab: remove it"
        )


def beside(name: str) -> str | None:
    """For a path that does not exist, the path of nearly the same name beside it (a typo:
    `model.ggfu` -> `model.gguf`), as the user would write it; None where none is."""
    from tacit.core.choices import closest

    path = Path(name).expanduser()
    try:
        siblings = [p.name for p in path.parent.iterdir()] if path.parent.is_dir() else []
    except OSError:
        return None
    close = closest(path.name, siblings)
    return str(Path(name).with_name(close)) if close else None


def table_text(table: pd.DataFrame) -> str:
    """A table as CSV text, floats at float32 precision."""
    return table.to_csv(index=False, float_format=FLOAT_FORMAT, lineterminator="\n")


def json_text(record: Mapping[str, Any]) -> str:
    """A record as indented JSON text."""
    return json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM for the few renames that must not be split by an interruption:
    one that comes meanwhile is handled right after them.

    Python runs signal handlers in the main thread, whichever thread the operating system
    delivered the signal to, so deferring the handler there holds the signal in every thread
    (blocking it with pthread_sigmask held it in the main thread only, and `probe` runs two).
    Off the main thread, where handlers cannot be set, the OS mask of that thread is used.
    """
    held = (signal.SIGINT, signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread():
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, set(held))
        try:
            yield
        finally:
            if hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_UNBLOCK, set(held))
        return
    caught: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in held}
    for signum in held:
        signal.signal(signum, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            faults.point("signals:before-redelivery")
            signal.raise_signal(caught[0])  # now to the handler that was there


TEMPORARY = re.compile(r"^\..+\.[\w]{8}\.tmp$")  # what _stage names a file while writing it


def is_temporary(name: str) -> bool:
    """Is this a file `write_files` was writing (left by a process killed meanwhile)?"""
    return TEMPORARY.match(name) is not None


def _stage(path: Path, data: str | bytes) -> Path:
    """Write `data` to a temporary file beside `path` with the permissions the umask gives
    (mkstemp makes files private; results are not); return the temporary path."""
    descriptor, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp_name, 0o666 & ~_umask())
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return Path(tmp_name)


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write text (UTF-8) or bytes to `path` whole or not at all."""
    path = Path(path)
    write_files(path.parent, {path.name: data})
    return path


def write_files(
    directory: str | Path, files: Mapping[str, str | bytes], *, point: str = "files"
) -> None:
    """Write several files into `directory` so that it never holds some of them but not others.

    Every file is first written to a temporary name; only when all are on disk are they renamed
    into place, one quick rename each, with signals held. On any failure or interruption before
    that, the temporary files are removed and nothing of this call appears. (`point` names this
    write's places for the fault-injection tests: tacit.core.faults.)
    """
    directory = Path(directory)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, data in files.items():
            target = directory / name
            staged.append((_stage(target, data), target))
            faults.point(f"{point}:staged")
        with signals_held():
            for tmp, target in staged:
                os.replace(tmp, target)
                faults.point(f"{point}:renamed")
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
