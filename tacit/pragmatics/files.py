"""Reading the suites' files as published, with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError
from tacit.core.files import regular_file
from tacit.core.option_names import option


def data_files(path: str | Path, pattern: str, *, what: str) -> list[Path]:
    """The files under a suite's folder (or the one file given) matching `pattern`, sorted by
    their path inside it: the order a shell's `cat */*.jsonl` would give."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise TacitError(f"{option('--data')} {path}: no such file or folder")
    files = sorted(p for p in path.rglob(pattern) if p.is_file())
    if not files:
        raise TacitError(f"{option('--data')} {path}: no {pattern} files of {what} in it")
    return files


def relative_name(file: Path, root: Path) -> str:
    """How items name their file: its path inside the --data folder (the name, for a file)."""
    return file.relative_to(root).as_posix() if root.is_dir() else file.name


def read_text(path: Path, encodings: tuple[str, ...] = ("utf-8",)) -> tuple[str, str]:
    """A text file's text (without a BOM) and the first of `encodings` that decodes it."""
    try:
        regular_file(path, missing_ok=True)
        raw = path.read_bytes()
    except OSError as err:
        raise TacitError(f"{path}: cannot read ({err.strerror})") from None
    for encoding in encodings:
        try:
            return raw.decode(encoding).removeprefix("\ufeff"), encoding
        except UnicodeDecodeError as err:
            if encoding == encodings[-1]:
                line = raw[: err.start].count(b"\n") + 1
                raise TacitError(
                    f"{path}:{line}: not {' or '.join(encodings)} text (byte {err.start})"
                ) from None
    raise AssertionError("unreachable")


def decoded_lines(path: Path, encodings: tuple[str, ...] = ("utf-8",)) -> tuple[list[str], str]:
    """A text file's lines and the first of `encodings` that decodes it."""
    text, encoding = read_text(path, encodings)
    return text.splitlines(), encoding


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line of a JSON-lines file."""
    lines, _ = decoded_lines(path)
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise TacitError(f"{path}:{number}: not a JSON object ({err.msg})") from None
        if not isinstance(record, dict):
            raise TacitError(
                f"{path}:{number}: expected a JSON object, got {type(record).__name__}"
            )
        records.append((number, record))
    if not records:
        raise TacitError(f"{path}: empty file; expected one JSON object a line")
    return records


def require(record: dict[str, Any], fields: tuple[str, ...], where: str) -> None:
    """Fail at `where` naming the first of `fields` that `record` lacks."""
    for name in fields:
        if name not in record or record[name] is None:
            raise TacitError(f"{where}: missing field {name!r}")
