"""Reading the files norms come in: text tables (tab-, comma- or semicolon-separated, with a
header line) and .xlsx workbooks, with every problem reported as one line naming the place."""

from __future__ import annotations

import csv
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tacit.core.errors import TacitError, first_line, shorten
from tacit.norms.normset import blank

XLSX_MAGIC = b"PK\x03\x04"  # an .xlsx workbook is a zip archive
XLS_MAGIC = b"\xd0\xcf\x11\xe0"  # Excel 97-2003 (.xls): an OLE2 compound file
KNOWN_FORMATS_HINT = "a norms file (CSLB norms.dat, McRae's .xlsx, or a CSV/TSV table)"
_DELIMITER_NAMES = {"\t": "tab", ",": "comma", ";": "semicolon"}


def check_file(path: Path) -> None:
    """A norms path must be an existing file."""
    if path.is_dir():
        raise TacitError(f"{path}: is a directory; give the norms file itself")
    if not path.is_file():
        raise TacitError(f"{path}: no such norms file")


def file_start(path: Path, size: int = 8) -> bytes:
    """The first bytes of a file, to tell a workbook from text."""
    with open(path, "rb") as handle:
        return handle.read(size)


def read_lines(path: Path) -> list[str]:
    """A text file's lines (UTF-8, with or without a byte-order mark; any line ends)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise TacitError(
            f"{path}: not UTF-8 text (byte {err.start}); is this {KNOWN_FORMATS_HINT}?"
        ) from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise TacitError(f"{path}: empty file; expected {KNOWN_FORMATS_HINT} with a header line")
    return lines


def split_header(line: str) -> tuple[str, list[str]]:
    """The delimiter of a header line (the one of tab, comma, semicolon that splits it most;
    tab on a tie) and its column names, stripped."""
    delimiter = max(_DELIMITER_NAMES, key=line.count)
    if line.count(delimiter) == 0:
        delimiter = "\t"
    names = next(csv.reader([line], delimiter=delimiter), [])
    return delimiter, [name.strip() for name in names]


def delimited_rows(
    path: Path, lines: Sequence[str], delimiter: str, width: int
) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank line after the header; a line with another
    number of fields than the header's `width` is an error naming it."""
    reader = csv.reader(lines[1:], delimiter=delimiter)
    name = _DELIMITER_NAMES.get(delimiter, repr(delimiter))
    for fields in reader:
        number = reader.line_num + 1
        if not any(f.strip() for f in fields):
            continue
        if len(fields) < width or (len(fields) > width and any(f.strip() for f in fields[width:])):
            raise TacitError(
                f"{path}:{number}: {len(fields)} {name}-separated fields, the header has {width}"
                + (" (an unquoted delimiter in a value?)" if len(fields) > width else "")
            )
        yield number, fields


def locate_columns(
    names: Sequence[str], wanted: Mapping[str, str], where: str, expected: str
) -> dict[str, int]:
    """Positions of the `wanted` columns (ours -> the file's name) in a header, matched exactly,
    else ignoring case; missing ones are one error that names them and what was found."""
    folded = [n.casefold() for n in names]
    positions: dict[str, int] = {}
    missing = []
    for ours, theirs in wanted.items():
        if theirs in names:
            positions[ours] = names.index(theirs)
        elif theirs.casefold() in folded:
            positions[ours] = folded.index(theirs.casefold())
        else:
            missing.append(theirs)
    if missing:
        raise TacitError(
            f"{where}: header lacks column(s) {', '.join(repr(m) for m in missing)}; expected "
            f"{expected} (found: {shorten(', '.join(names[:12]))})"
        )
    return positions


def xlsx_rows(path: Path, sheet: str) -> tuple[list[str], list[tuple[int, tuple]]]:
    """The header of a workbook's sheet and (row number, cells) of the rows under it that are
    not blank, numbered as Excel numbers them (openpyxl's read-only mode)."""
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - a dependency of tacit
        raise TacitError(f"{path}: reading .xlsx needs openpyxl (pip install openpyxl)") from None
    with warnings.catch_warnings():  # "Unknown extension is not supported": harmless
        warnings.simplefilter("ignore")
        try:
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as err:  # zip, XML and openpyxl errors alike: the file is unreadable
            raise TacitError(
                f"{path}: not a readable .xlsx workbook ({shorten(first_line(err))})"
            ) from None
        try:
            if sheet not in book.sheetnames:
                sheets = ", ".join(repr(s) for s in book.sheetnames)
                raise TacitError(f"{path}: no sheet {sheet!r} (sheets: {shorten(sheets)})")
            rows = list(book[sheet].iter_rows(values_only=True))
        finally:
            book.close()
    if not rows or all(blank(c) for c in rows[0]):
        raise TacitError(f"{path}: sheet {sheet!r} is empty; expected a header row")
    names = ["" if c is None else str(c).strip() for c in rows[0]]
    body = [(n, cells) for n, cells in enumerate(rows[1:], start=2) if not all(map(blank, cells))]
    return names, body
