"""Reading the files norms come in: text tables (tab-, comma- or semicolon-separated, with a
header line) and .xlsx workbooks, with every problem reported as one line naming the place.

Every text table has one record a line, so that an error names the line a user sees in an
editor. Tab-separated files (CSLB's norms.dat, TSV tables and exports) carry no quoting: they
are split at tabs literally, a `"` is part of the text, and a value may be of any length.
Comma- and semicolon-separated files honour CSV quoting within a line (`"a, b"`, `""` for a
quote); a quote left open at the end of its line is an error at that line, never a value that
swallows the lines after it.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tacit.core.errors import TacitError, first_line, shorten
from tacit.core.files import (
    LINE_END,
    check_text,
    check_value,
    read_input,
    read_start,
    regular_file,
    text_head,
)
from tacit.norms.normset import blank

XLSX_MAGIC = b"PK\x03\x04"  # an .xlsx workbook is a zip archive
XLS_MAGIC = b"\xd0\xcf\x11\xe0"  # Excel 97-2003 (.xls): an OLE2 compound file
KNOWN_FORMATS_HINT = "a norms file (CSLB norms.dat, McRae's .xlsx, or a CSV/TSV table)"
_DELIMITER_NAMES = {"\t": "tab", ",": "comma", ";": "semicolon"}


def unreadable(path: Path, err: OSError) -> TacitError:
    """An OS error reading a norms file, in one line."""
    return TacitError(f"{path}: cannot read it ({err.strerror or first_line(err)})")


def check_file(path: Path) -> None:
    """A norms path must be an existing regular file, of a size tacit reads (a FIFO, a device,
    a directory, a name the system refuses to look up: one line each, before it is opened)."""
    try:
        is_dir = path.is_dir()
    except OSError as err:
        raise unreadable(path, err) from None
    if is_dir:
        raise TacitError(f"{path}: is a directory; give the norms file itself")
    if not path.exists():
        raise TacitError(f"{path}: no such norms file")
    regular_file(path)


def file_start(path: Path, size: int = 8) -> bytes:
    """The first bytes of a file, to tell a workbook from text."""
    return read_start(path, size)


def read_lines(path: Path) -> list[str]:
    """A text file's lines (UTF-8, with or without a byte-order mark), split at `\n`, `\r\n` or
    `\r` only (str.splitlines knows 8 more), so that line numbers are an editor's; a control
    character but tab is refused (tacit.core.files.check_text), at the file's first lines
    before it is read whole."""
    data = read_input(path, head=text_head(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise TacitError(
            f"{path}: not UTF-8 text (byte {err.start}); is this {KNOWN_FORMATS_HINT}?"
        ) from None
    check_text(text, path)
    lines = LINE_END.split(text)
    if lines and not lines[-1]:
        lines.pop()  # the end of the last line
    if not lines or not lines[0].strip():
        raise TacitError(f"{path}: empty file; expected {KNOWN_FORMATS_HINT} with a header line")
    return lines


def split_header(line: str) -> tuple[str, list[str]]:
    """The delimiter of a header line (the one of tab, comma, semicolon that splits it most;
    tab on a tie) and its column names, stripped."""
    delimiter = max(_DELIMITER_NAMES, key=line.count)
    if line.count(delimiter) == 0:
        delimiter = "\t"
    try:
        names = split_line(line, delimiter)
    except csv.Error:  # a header with broken quoting: its names as written (then not found)
        names = line.split(delimiter)
    return delimiter, [name.strip() for name in names]


def split_line(line: str, delimiter: str) -> list[str]:
    """The fields of one line: split at tabs literally, or parsed as one line of CSV (strict
    quoting; csv.Error when a quote is left open or text follows a closing quote)."""
    if delimiter == "\t":
        return line.split("\t")
    return next(csv.reader([line], delimiter=delimiter, strict=True), [])


def _csv_problem(err: csv.Error) -> str:
    """What a csv.Error means for one line of a norms table, and how to fix it."""
    message = str(err)
    if "unexpected end of data" in message:
        return (
            "a '\"' opens a quoted value that does not close on this line (a record is one "
            "line; close the quote, or write a quote inside a quoted value as '\"\"')"
        )
    if "expected after" in message:
        return (
            "text after the closing '\"' of a quoted value (quote the whole value, writing a "
            "quote inside it as '\"\"')"
        )
    if "field larger than field limit" in message:
        return f"a value longer than {csv.field_size_limit():,} characters"
    return f"not readable as CSV ({shorten(message)})"


def delimited_rows(
    path: Path, lines: Sequence[str], delimiter: str, width: int
) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank line after the header (split_line); a line with
    another number of fields than the header's `width`, or broken CSV quoting, is an error
    naming it."""
    name = _DELIMITER_NAMES.get(delimiter, repr(delimiter))
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            fields = split_line(line, delimiter)
        except csv.Error as err:
            raise TacitError(f"{path}:{number}: {_csv_problem(err)}") from None
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


def _damaged(path: Path, err: Exception) -> TacitError:
    """An error reading a workbook in one line: the OS's (unreadable), else damage."""
    if isinstance(err, OSError):
        return unreadable(path, err)
    return TacitError(
        f"{path}: not a readable .xlsx workbook ({shorten(first_line(err))}): damaged, or not "
        "a workbook; download it again, or open it in a spreadsheet program and save it again "
        "as .xlsx or CSV"
    )


def xlsx_rows(path: Path, sheet: str) -> tuple[list[str], list[tuple[int, tuple]]]:
    """The header of a workbook's sheet and (row number, cells) of the rows under it that are
    not blank, numbered as Excel numbers them (openpyxl's read-only mode). A damaged workbook
    (broken zip, bad compressed data, cut XML) is one error, wherever in the file the damage is:
    read-only mode reads a sheet only while its rows are iterated."""
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - a dependency of tacit
        raise TacitError(f"{path}: reading .xlsx needs openpyxl (pip install openpyxl)") from None
    with warnings.catch_warnings():  # "Unknown extension is not supported": harmless
        warnings.simplefilter("ignore")
        try:
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as err:  # zip, XML and openpyxl errors alike: the file is unreadable
            raise _damaged(path, err) from None
        try:
            if sheet not in book.sheetnames:
                sheets = ", ".join(repr(s) for s in book.sheetnames)
                raise TacitError(f"{path}: no sheet {sheet!r} (sheets: {shorten(sheets)})")
            rows = list(book[sheet].iter_rows(values_only=True))
        except TacitError:
            raise
        except Exception as err:  # the sheet's XML or its compressed bytes are damaged
            raise _damaged(path, err) from None
        finally:
            book.close()
    if not rows or all(blank(c) for c in rows[0]):
        raise TacitError(f"{path}: sheet {sheet!r} is empty; expected a header row")
    names = ["" if c is None else str(c).strip() for c in rows[0]]
    body = [(n, cells) for n, cells in enumerate(rows[1:], start=2) if not all(map(blank, cells))]
    for number, cells in [(1, rows[0]), *body]:
        for cell in cells:
            if isinstance(cell, str):
                check_value(cell, f"{path}: sheet {sheet!r}, row {number}")
    return names, body
