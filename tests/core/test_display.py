"""Tables where the output goes (issue 47): fitted to a terminal's width, folded a row at a time
only where a terminal is too narrow; piped to a file or CI's log they keep their layout."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd

from tacit.core.display import Table, render

WIDE = Table(
    pd.DataFrame(
        {
            "model": ["/models/SmolLM2-135M-Instruct.Q4_1.gguf", "/models/gemma-3-270m.gguf"],
            "relation": ["has", "has"],
            "mAP": [0.123456, 0.23456],
            "rho": [0.3, 0.4],
            "scored over": ["the_candidates_every_answer_to_the_relation_in_full"] * 2,
        }
    ),
    "A table wider than a terminal of 100 columns, as elicitation's are with long model paths",
)
SHOW = "from tacit.core.display import render; from test_display import WIDE; print(render(WIDE))"


def _printed(columns: str | None) -> str:
    """What the table prints from a process whose stdout is a pipe (a log file, CI)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__), *sys.path])
    done = subprocess.run(
        [sys.executable, "-c", SHOW], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def test_piped_output_keeps_the_table_layout():
    """With stdout a pipe and no $COLUMNS, the table printed one row per line as `model: ... |
    relation: ...`: it keeps its columns."""
    piped = _printed(None)
    assert "model: " not in piped and " | " not in piped
    header = next(line for line in piped.splitlines() if line.startswith("model"))
    assert header.split() == ["model", "relation", "mAP", "rho", "scored", "over"]
    row = next(line for line in piped.splitlines() if line.startswith("/models/SmolLM2"))
    assert len(row) > 100  # wider than the 100 columns it was folded to
    assert row.split()[:2] == ["/models/SmolLM2-135M-Instruct.Q4_1.gguf", "has"]
    assert all(len(line) <= 100 for line in piped.splitlines()[:1])  # the title still wraps


def test_a_narrow_terminal_still_folds_rows():
    narrow = _printed("60")
    assert "model: /models/SmolLM2-135M-Instruct.Q4_1.gguf |" in narrow
    assert render(WIDE, width=60) + "\n" == narrow


def test_formula_like_cells_are_escaped_for_spreadsheets_only(tmp_path):
    """Issue 57: a concept or an answer beginning with =, +, - or @ reached CSV files as a
    spreadsheet formula. The tables meant for spreadsheets (CSV and HTML renderings) write
    such a text cell after a `'`; numbers stay numbers; the run directory's files stay exact."""
    from tacit.core.files import table_text

    frame = pd.DataFrame(
        {"concept": ['=HYPERLINK("x")', "+1", "-fur", "@bear", "bear"], "mrr": [-0.5, 1, 2, 3, 4]}
    )
    csv_text = render([Table(frame)], "csv")
    assert "'=HYPERLINK" in csv_text and "'+1" in csv_text and "'-fur" in csv_text
    assert "'@bear" in csv_text and "\nbear," in csv_text and "-0.5" in csv_text
    assert "'-0.5" not in csv_text
    html_text = render([Table(frame)], "html")
    assert "&#x27;=HYPERLINK" in html_text and "&#x27;-fur" in html_text
    assert table_text(frame).splitlines()[1].startswith('"=HYPERLINK')  # the data: exact


def test_a_one_row_tables_counts_print_whole():
    """`n_prompts` of 1.0 (a float column) is a count: `1`, not `1.00`; P@1 of 1.0 stays a
    metric; a count column above 1 was whole already."""
    frame = pd.DataFrame({"n_prompts": [1.0], "p_at_1": [1.0], "draws": [3.0]})
    cells = Table(frame, "one row").cells()
    assert cells.iloc[0].tolist() == ["1", "1.00", "3"]
