"""Reading a file of cloze items: JSON lines or CSV, one item a line, every problem one line
naming the file and the line.

An item: `text`, a sentence with one blank `[Y]`; `candidates`, what may fill it (two or more
spans of any length); `answer`, the right one, or a list of right ones, each a candidate;
optionally `group` (items are reported per group and overall) and `id` (unique; default
`line N`). Other keys are ignored. In a CSV file (a header naming the columns), candidates and
answers are separated by `|`:

    {"text": "[Y] has fur.", "candidates": ["A bear", "A table"], "answer": "A bear"}
    text,candidates,answer,group
    The capital of France is [Y].,Paris | Lyon | Nice,Paris,geography
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.blank import MASK
from tacit.core.errors import TacitError, shorten
from tacit.core.files import read_utf8, sha256_bytes
from tacit.probes.records import csv_records, json_lines

BLANK = "[Y]"
OVERALL = "all"  # the summary's row over every item
ITEM_COLUMNS = ["id", "group", "text", "candidate", "answer"]
LINE = "line"  # the item's line in its file, for errors found later (not written out)
SEPARATOR = "|"


def read_items(path: str | Path, *, name: str | None = None) -> tuple[pd.DataFrame, str]:
    """One row per item and candidate (ITEM_COLUMNS; `text` with tacit's blank, `<mask>`, in
    place of `[Y]`; `answer` True for the right ones; and the item's `line`), and the file's
    sha256. Errors name the file `name` (a Hub URL read from its local copy), else `path`."""
    path = Path(path)
    name = name or str(path)
    text, data = read_utf8(path, f"ITEMS {name}")
    first = next((line for line in text.splitlines() if line.strip()), "")
    as_json = first.lstrip().startswith("{")
    entries = json_lines(name, text, "item") if as_json else _csv(name, text)
    rows: list[tuple[Any, ...]] = []
    seen: dict[str, int] = {}
    for number, entry in entries:
        item_id, group, sentence, candidates, answers = _item(entry, f"{name}, line {number}")
        item_id = item_id or f"line {number}"
        if item_id in seen:
            raise TacitError(f"{name}, line {number}: id {item_id!r} repeats line {seen[item_id]}")
        seen[item_id] = number
        rows.extend((item_id, group, sentence, c, c in answers, number) for c in candidates)
    if not rows:
        raise TacitError(f"ITEMS {name}: no item in the file")
    return pd.DataFrame(rows, columns=[*ITEM_COLUMNS, LINE]), sha256_bytes(data)


def refuse_unreadable(path: str | Path, items: pd.DataFrame, problems: dict[str, str]) -> None:
    """A candidate some model's tokenizer does not read whole (tacit.ask.spans
    unreadable_spans) would be scored as other text: one line naming the file and its line."""
    for row in items[items["candidate"].isin(list(problems))].head(1).itertuples():
        raise TacitError(
            f"{path}, line {row.line}: candidate {shorten(row.candidate)!r} is "
            f"{problems[row.candidate]}: remove it, or use models that read it"
        )


def _csv(path: str, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """CSV entries, candidates and answers split at SEPARATOR."""
    hint = (
        "items are JSON lines, or CSV with a header naming text, candidates, answer (group and "
        "id optional)"
    )
    for number, row in csv_records(path, text, ("text", "candidates", "answer"), hint):
        entry: dict[str, Any] = dict(row)
        for key in ("candidates", "answer"):
            entry[key] = [part.strip() for part in entry[key].split(SEPARATOR)]
        yield number, entry


def _item(entry: dict[str, Any], where: str) -> tuple[str, str, str, list[str], set[str]]:
    """(id, group, text with <mask>, candidates, answers) of one item, checked."""
    text = entry.get("text")
    if not isinstance(text, str) or not text.strip():
        raise TacitError(f"{where}: no `text` (a sentence with one {BLANK})")
    text = text.strip()
    if text.count(BLANK) != 1 or MASK in text:
        raise TacitError(
            f"{where}: {shorten(repr(text))}: needs one blank, written {BLANK}, "
            f"found {text.count(BLANK)}"
        )
    candidates = entry.get("candidates")
    if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates):
        raise TacitError(f"{where}: `candidates` must be a list of texts")
    candidates = [c.strip() for c in candidates]
    if len(candidates) < 2 or not all(candidates):
        raise TacitError(f"{where}: needs two or more candidates, none empty")
    twice = sorted({c for c in candidates if candidates.count(c) > 1})
    if twice:
        raise TacitError(f"{where}: candidate {shorten(twice[0])!r} is given twice")
    answer = entry.get("answer")
    answers = [answer] if isinstance(answer, str) else answer
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise TacitError(f"{where}: `answer` must be a candidate or a list of candidates")
    strange = [a.strip() for a in answers if a.strip() not in candidates]
    if strange:
        raise TacitError(f"{where}: answer {shorten(strange[0])!r} is not among the candidates")
    group = entry.get("group", "")
    group = "" if group is None else str(group).strip()
    if group == OVERALL:
        raise TacitError(f"{where}: group {OVERALL!r} names every item together; pick another")
    item_id = entry.get("id")
    item_id = "" if item_id is None else str(item_id).strip()
    return item_id, group, text.replace(BLANK, MASK), candidates, {a.strip() for a in answers}
