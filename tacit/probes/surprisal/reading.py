"""The texts to score: a file, or a list given in Python.

- a text file (any suffix but those below): one text a line, blank lines skipped (counted);
- `.csv` / `.tsv`: a header naming a `text` column, and optionally an `id` column;
- `.jsonl` / `.json`: one JSON object a line with a `text`, and optionally an `id`.

Each text is stripped of the whitespace around it. A text's id (`text_id` in the tables) is
its `id` where the file gives one (unique), else its line in the file (1 for the first), or
its position in a list (0 for the first, as Python counts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.files import read_utf8, sha256_bytes
from tacit.probes.records import csv_records, json_lines

COLUMNS = ["text_id", "text"]
TABLE_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".jsonl": "json", ".json": "json"}


@dataclass(frozen=True)
class Texts:
    """The texts read: one row each (COLUMNS), where they came from, and the blank lines
    skipped."""

    table: pd.DataFrame
    source: dict[str, Any]
    blank_lines: int = 0


def read_texts(texts: str | Path | Sequence[str]) -> Texts:
    """The texts of a file or a list (see the module docstring)."""
    if not isinstance(texts, str | Path):
        listed = [text.strip() for text in texts]
        table = pd.DataFrame({"text_id": range(len(listed)), "text": listed})
        digest = sha256_bytes(json.dumps(listed, ensure_ascii=False))
        return Texts(table, {"given": "a list", "sha256": digest})
    path = Path(texts)
    content, data = read_utf8(path, f"TEXTS {path}")
    kind = TABLE_SUFFIXES.get(path.suffix.lower())
    blank = 0
    if kind is None:
        lines = content.splitlines()
        entries = [(n, line.strip()) for n, line in enumerate(lines, start=1) if line.strip()]
        blank = len(lines) - len(entries)
        table = pd.DataFrame(entries, columns=COLUMNS)
    else:
        table = _table(path, content, kind)
    if table.empty:
        raise TacitError(f"TEXTS {path}: no text in the file")
    source = {"file": str(path), "name": path.name, "sha256": sha256_bytes(data)}
    return Texts(table, source, blank)


def _table(path: Path, content: str, kind: str) -> pd.DataFrame:
    """The texts of a CSV or JSON lines file, each checked; ids unique."""
    hint = "give a CSV file with a header naming a text column (and an optional id)"
    records: Iterator[tuple[int, dict[str, Any]]] = (
        csv_records(path, content, ("text",), hint)
        if kind == "csv"
        else json_lines(path, content, "text")
    )
    rows: list[tuple[Any, str]] = []
    seen: dict[Any, int] = {}
    for number, entry in records:
        where = f"{path}, line {number}"
        text = entry.get("text")
        if not isinstance(text, str) or not text.strip():
            raise TacitError(f"{where}: no `text` (or a blank one)")
        given = entry.get("id")
        text_id = number if given is None or str(given).strip() == "" else str(given).strip()
        if text_id in seen:
            raise TacitError(f"{where}: id {text_id!r} repeats line {seen[text_id]}")
        seen[text_id] = number
        rows.append((text_id, text.strip()))
    return pd.DataFrame(rows, columns=COLUMNS)
