"""Tables people read: one description (a Table: the values, and how to show them) rendered for the
terminal (fitted to its width; with no terminal, at its own width), Markdown, LaTeX, CSV or
HTML, every number printed by tacit.core.numbers. The printed summaries of runs, `probe table`,
`probe leaderboard`, `probe compare`, `probe runs` and the HTML report all render through here,
so they read alike.

CSV keeps the values whole (every digit, an interval's ends in their own columns): it is for
reading back; the other formats show an interval in its value's cell, `0.0572 [0.0412, 0.0731]`.
"""

from __future__ import annotations

import html
import os
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.numbers import format_number, with_interval

FORMATS = ("text", "markdown", "latex", "csv", "html")
GAP = 2  # spaces between the columns of a terminal table
TEXT_WIDTH = 100  # where titles and notes wrap with no terminal to fit


@dataclass
class Table:
    """A table to show.

    frame: the values, one column each (what a CSV of it holds).
    title: said above it.
    intervals: column -> the (low, high) columns of its interval, shown in its cell.
    signed: columns shown with a sign (differences).
    headers: column -> the header shown (default: the column's name).
    note: said under it.
    """

    frame: pd.DataFrame
    title: str = ""
    intervals: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    signed: Sequence[str] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    def cells(self) -> pd.DataFrame:
        """The table as text cells, intervals in their values' cells, under its headers."""
        hidden = {end for ends in self.intervals.values() for end in ends}
        shown = {}
        for column in self.frame.columns:
            if column in hidden:
                continue
            values = self.frame[column]
            signed = column in self.signed
            if column in self.intervals:
                low, high = (self.frame[end] for end in self.intervals[column])
                texts = [
                    with_interval(v, lo, hi, signed=signed) for v, lo, hi in zip(values, low, high)
                ]
            else:
                whole = _whole(values, str(column))  # counts in a float column (NaN made it)
                texts = [
                    format_number(int(v) if whole and not pd.isna(v) else v, signed=signed)
                    for v in values
                ]
            shown[self.headers.get(column, str(column))] = texts
        return pd.DataFrame(shown, index=range(len(self.frame)))

    def numeric(self) -> list[bool]:
        """Per shown column: does it hold numbers (right-aligned)?"""
        hidden = {end for ends in self.intervals.values() for end in ends}
        return [
            pd.api.types.is_numeric_dtype(self.frame[c])
            and not pd.api.types.is_bool_dtype(self.frame[c])
            for c in self.frame.columns
            if c not in hidden
        ]


def _whole(values: pd.Series, column: str = "") -> bool:
    """A float column of counts: every value there a whole number (a metric's column has some
    that are not; one of 0 and 1 only, P@1 of a few prompts, stays a metric, unless its name
    says it counts: `n_...`, as a one-row table's `n_prompts` of 1)."""
    if not pd.api.types.is_float_dtype(values):
        return False
    present = values.dropna()
    return (
        bool(len(present))
        and bool((present == present.round()).all())
        and (column.startswith("n_") or bool((present.abs() > 1).any()))
    )


def terminal_width() -> int | None:
    """The terminal's width ($COLUMNS where set); None where the output goes to no terminal
    (a pipe, a log file, CI's output): there a table keeps its layout at its own width rather
    than being folded a row at a time to fit a width nobody reads it at."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
        return None


def render(
    tables: Table | Sequence[Table], format: str = "text", *, width: int | None = None
) -> str:
    """The tables in one of FORMATS; `text` fits `width` (default: the terminal's)."""
    if isinstance(tables, Table):
        tables = [tables]
    if format not in FORMATS:
        raise TacitError(f"--format {format}: expected one of {', '.join(FORMATS)}")
    if format == "csv":
        return _csv(tables)
    draw = {
        "text": lambda t: _text(t, width or terminal_width()),
        "markdown": _markdown,
        "latex": _latex,
        "html": _html,
    }[format]
    return "\n\n".join(draw(table) for table in tables).rstrip("\n") + "\n"


def _text(table: Table, fit: int | None) -> str:
    """A terminal table fitted to `fit` columns: columns as wide as their cells where that
    fits, else cells wrapped at their spaces (never inside a number or a name), the columns
    that need least more width widened first; a table that cannot fit so is printed a row at
    a time, `header: value` pairs wrapped to the width. With no width to fit (None: no
    terminal), columns as wide as their cells, title and note wrapped at TEXT_WIDTH."""
    width = fit or TEXT_WIDTH
    cells = table.cells()
    lines = textwrap.wrap(table.title, width) if table.title else []
    columns = [[header, *column] for header, column in cells.items()]
    natural = [max(len(text) for text in column) for column in columns]
    narrowest = [
        max(len(word) for text in column for word in text.split() or [""]) for column in columns
    ]
    room = (fit or sum(natural) + GAP * len(columns)) - GAP * (len(columns) - 1)
    if not len(cells):
        lines.append("(no rows)")
    elif sum(narrowest) > room:
        lines += _stacked(cells, width)
    else:
        widths = list(narrowest)
        for index in sorted(range(len(columns)), key=lambda i: natural[i] - narrowest[i]):
            widths[index] = min(natural[index], room - sum(widths) + widths[index])
        right = table.numeric()
        lines += _grid([c[:1] for c in columns], widths, right)
        lines.append("─" * (sum(widths) + GAP * (len(widths) - 1)))
        for row in cells.itertuples(index=False):
            lines += _grid([[cell] for cell in row], widths, right)
    for line in table.note.splitlines():
        lines += textwrap.wrap(line, width, subsequent_indent="  ")
    return "\n".join(lines)


def _grid(cells: list[list[str]], widths: list[int], right: list[bool]) -> list[str]:
    """One row of a terminal table (each cell wrapped to its column's width) as lines."""
    wrapped = [
        textwrap.wrap(cell[0], width, break_long_words=False) or [""]
        for cell, width in zip(cells, widths)
    ]
    height = max(len(parts) for parts in wrapped)
    lines = []
    for number in range(height):
        parts = [(p[number] if number < len(p) else "") for p in wrapped]
        shown = [part.rjust(w) if r else part.ljust(w) for part, w, r in zip(parts, widths, right)]
        lines.append((" " * GAP).join(shown).rstrip())
    return lines


def _stacked(cells: pd.DataFrame, width: int) -> list[str]:
    """A table too wide for the terminal, a row at a time: `header: value | header: value`."""
    lines = []
    for row in cells.itertuples(index=False):
        pairs = [f"{header}: {value}" for header, value in zip(cells.columns, row)]
        lines += textwrap.wrap(" | ".join(pairs), width, subsequent_indent="    ")
    return lines


def _markdown(table: Table) -> str:
    cells = table.cells()

    def row(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    rule = "|" + "|".join("---:" if n else "---" for n in table.numeric()) + "|"
    lines = [f"**{table.title}**", ""] if table.title else []
    lines += [row(list(cells.columns)), rule]
    lines += [row(list(r)) for r in cells.itertuples(index=False)]
    if table.note:
        for line in table.note.splitlines():
            lines += ["", line]
    return "\n".join(lines)


LATEX_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    "–": "--",
}


def latex_escape(text: str) -> str:
    """Text as LaTeX typesets it literally.

    Examples:
        >>> latex_escape("mrr_ci 5% & –")
        'mrr\\\\_ci 5\\\\% \\\\& --'
    """
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex(table: Table) -> str:
    cells = table.cells()
    spec = "".join("r" if n else "l" for n in table.numeric())
    lines = [r"\begin{table}", r"\centering"]
    if table.title:
        lines.append(rf"\caption{{{latex_escape(table.title)}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in cells.columns) + r" \\",
        r"\midrule",
    ]
    lines += [
        " & ".join(latex_escape(c) for c in row) + r" \\" for row in cells.itertuples(index=False)
    ]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.note:
        note = r" \\ ".join(latex_escape(line) for line in table.note.splitlines())
        lines.append(rf"\par\smallskip{{\footnotesize {note}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


# How a text cell that a spreadsheet would read as a formula begins (OWASP's list): such a
# cell, in a table meant for spreadsheets (CSV and HTML tables, the trackers' tables; never the
# run directory's files, whose data stay exact), is written after a `'`, which spreadsheets
# read as "text" and do not show.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(value: object) -> object:
    """A text cell as a table meant for spreadsheets shows it (FORMULA_STARTS).

    Examples:
        >>> spreadsheet_text("=HYPERLINK(1)"), spreadsheet_text("bear"), spreadsheet_text(-1)
        ("'=HYPERLINK(1)", 'bear', -1)
    """
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A table's text columns as spreadsheet_text shows them (numbers stay numbers)."""
    texts = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if not texts:
        return frame
    return frame.assign(**{str(c): frame[c].map(spreadsheet_text) for c in texts})


def _html(table: Table) -> str:
    cells = table.cells()
    numeric = table.numeric()

    def row(values: Sequence[str], tag: str) -> str:
        return (
            "<tr>"
            + "".join(
                f"<{tag}{' class=num' if n and tag == 'td' else ''}>"
                f"{html.escape(str(v if n else spreadsheet_text(v)))}</{tag}>"
                for v, n in zip(values, numeric)
            )
            + "</tr>"
        )

    lines = [f"<p class=caption>{html.escape(table.title)}</p>"] if table.title else []
    lines += ["<div class=scroll><table class=shown>", row(list(cells.columns), "th")]
    lines += [row(list(r), "td") for r in cells.itertuples(index=False)]
    lines.append("</table></div>")
    if table.note:
        lines.append(f'<p class="muted">{html.escape(table.note).replace(chr(10), "<br>")}</p>')
    return "\n".join(lines)


def _csv(tables: Sequence[Table]) -> str:
    """One CSV: the tables' values whole (a text a spreadsheet would read as a formula after a
    `'`: spreadsheet_text); several tables stacked, a `table` column naming each."""
    from tacit.core.files import table_text

    if len(tables) == 1:
        return table_text(spreadsheet_safe(tables[0].frame))
    frames = [t.frame.assign(table=t.title)[["table", *t.frame.columns]] for t in tables]
    return table_text(spreadsheet_safe(pd.concat(frames, ignore_index=True)))
