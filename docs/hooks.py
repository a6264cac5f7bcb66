"""mkdocs hook: the performance tables are rendered from the committed benchmark results
(bench/results/*.json), so the numbers on the site are the numbers a benchmark measured.

A page asks for one with `{{ bench_table("retrieve") }}`; the benchmark's JSON carries a
`table` (rows of `[what, value, ...]` with a header row first, or rows as objects whose keys
are the header), the machine, the date and the command that produced it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
PLACEHOLDER = re.compile(r'\{\{ bench_table\("([\w-]+)"\) \}\}')


def bench_table(name: str) -> str:
    """The markdown table of one benchmark's committed results, with where it was measured."""
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        return f"*(no committed results for `{name}`: run the benchmark and commit {path.name})*"
    record = json.loads(path.read_text())
    table = record["table"]
    if table and isinstance(table[0], dict):
        header = list(table[0])
        rows = [[row.get(key, "") for key in header] for row in table]
    else:
        header, *rows = table
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]
    where = f"Measured {record.get('date', '')} on {record['machine']} with `{record['command']}`."
    return "\n".join(lines) + "\n\n" + where


def on_page_markdown(markdown: str, **_: object) -> str:
    return PLACEHOLDER.sub(lambda match: bench_table(match.group(1)), markdown)
