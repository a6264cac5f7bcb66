"""A user's file of records, one a line, as the probes that read one take it (items, texts):
JSON lines (an object a line) or CSV/TSV with a header naming the columns. Blank lines are
skipped; every problem is one line naming the file and the line."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError
from tacit.core.files import check_value


def json_lines(path: str | Path, text: str, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each line that is not blank (`what`: one what a line, for
    the error on a line that is no object); a string holding a control character (`\\u0000`) is
    refused, naming the line (tacit.core.files.check_value)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise TacitError(
                f"{path}, line {number}: not JSON ({err.msg}, column {err.colno})"
            ) from None
        if not isinstance(entry, dict):
            raise TacitError(f"{path}, line {number}: expected a JSON object, one {what} a line")
        check_value(entry, f"{path}, line {number}")  # a control character as a JSON escape
        yield number, entry


def csv_records(
    path: str | Path, text: str, required: Sequence[str], hint: str
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: cell}) of each row that is not blank, columns named by the
    header (lower case; tab-separated where the header has a tab). A `required` column the
    header lacks is an error that ends with `hint` (what the file should be)."""
    lines = text.splitlines()
    delimiter = "\t" if lines and "\t" in lines[0] else ","
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter, strict=True)
    try:
        header = [name.strip().lower() for name in next(reader, [])]
        missing = [name for name in required if name not in header]
        if missing:
            raise TacitError(f"{path}, line 1: no {', '.join(missing)} column; {hint}")
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise TacitError(
                    f"{path}, line {reader.line_num}: {len(row)} fields, the header has "
                    f"{len(header)}"
                )
            yield reader.line_num, dict(zip(header, row))
    except csv.Error as err:
        raise TacitError(f"{path}, line {reader.line_num}: not CSV ({err})") from None
