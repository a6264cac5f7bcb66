"""mkdocs hook: tables rendered from where their content lives, so the site cannot drift.

The performance tables come from the committed benchmark results (bench/results/*.json), so
the numbers on the site are the numbers a benchmark measured. A page asks for one with
`{{ bench_table("retrieve") }}`, or for another table of the same results with
`{{ bench_table("peers", "summary") }}`; the benchmark's JSON carries a `table` (rows of
`[what, value, ...]` with a header row first, or rows as objects whose keys are the header),
the machine, the date and the command that produced it.

A model family's loading options come from their declarations (tacit.core.modelspec.LoadOption,
a family's `options`): `{{ load_options("huggingface") }}`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PLACEHOLDER = re.compile(r'\{\{ bench_table\("([\w-]+)"(?:, "(\w+)")?\) \}\}')
LOAD_OPTIONS = re.compile(r'\{\{ load_options\("([\w-]+)"\) \}\}')


def bench_table(name: str, key: str = "table") -> str:
    """The markdown table `key` of one benchmark's committed results, with where it was
    measured."""
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        return f"*(no committed results for `{name}`: run the benchmark and commit {path.name})*"
    record = json.loads(path.read_text())
    if key not in record:
        return f"*(no `{key}` table in {path.name}: run the benchmark again and commit it)*"
    table = record[key]
    if table and isinstance(table[0], dict):
        header = list(table[0])
        rows = [[row.get(column, "") for column in header] for row in table]
    else:
        header, *rows = table
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]
    where = f"Measured {record.get('date', '')} on {record['machine']} with `{record['command']}`."
    versions = {tool.split()[0]: v for tool, v in record.get("versions", {}).items()}
    if versions:
        where += " Versions: " + ", ".join(f"{tool} {v}" for tool, v in versions.items()) + "."
    skipped = record.get("skipped")
    if skipped:
        where += " Not run: " + "; ".join(f"{tool} ({why})" for tool, why in skipped.items()) + "."
    return "\n".join(lines) + "\n\n" + where


def cell(text: str) -> str:
    """Plain text as a markdown table's cell: a `|` is not a column's end, a `<` no tag."""
    return text.replace("|", "\\|").replace("<", "&lt;")


def load_options(family: str) -> str:
    """The markdown table of a model family's loading options, as the family declares them
    (read without tacit's runtime: the docs build needs none of it, and the newest-toolchain
    build has tacit on no path but this checkout's)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tacit.models.families import options_of

    rows = [
        f"| `{key}={declared.value}` | {cell(declared.described)} |"
        for key, declared in options_of(family).items()
    ]
    return "\n".join(["| option | what it does |", "| --- | --- |", *rows])


def on_page_markdown(markdown: str, **_: object) -> str:
    markdown = LOAD_OPTIONS.sub(lambda match: load_options(match.group(1)), markdown)
    return PLACEHOLDER.sub(
        lambda match: bench_table(match.group(1), match.group(2) or "table"), markdown
    )
