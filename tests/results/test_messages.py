"""What a run prints (issue 22, items 6 and 7): short model labels, one compact table per run
with the full breakdown behind --verbose, and a warning where --revision cannot apply."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.labels import short_labels
from tacit.probes.nli.report import COMPACT_ROWS, format_nli_summary
from tacit.probes.run_notes import run_notes

runner = CliRunner()


def test_labels_are_short_and_unique():
    labels = short_labels(["/a/runs/x/model", "/b/runs/y/model", "roberta-base", "./tiny"])
    assert labels == {
        "/a/runs/x/model": "x/model",
        "/b/runs/y/model": "y/model",
        "roberta-base": "roberta-base",
        "./tiny": "tiny",
    }


@pytest.mark.slow
@pytest.mark.parametrize("columns", [100, 80])
def test_two_models_print_in_a_narrow_table(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, columns
):
    """Full paths as column headers made a 223-character-wide table; tables ignored the
    terminal's width (186 characters at COLUMNS=80)."""
    args = [
        "retrieve",
        "-m",
        tiny_bert,
        "-m",
        tiny_roberta,
        "--norms",
        str(toy_norms_path),
        "--out",
        str(tmp_path / "o"),
        "-q",
    ]
    result = runner.invoke(app, args, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0
    table = result.stdout.split("\n\n")[0]
    assert max(len(line) for line in table.splitlines()) <= columns
    assert tiny_bert not in table and "tiny-bert0" in table


@pytest.mark.slow
def test_an_ablation_prints_one_table_and_verbose_prints_all(tiny_bert, toy_norms_path, tmp_path):
    base = [
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        str(toy_norms_path),
        "--ablation",
        "category",
        "-q",
    ]
    compact = runner.invoke(app, [*base, "--out", str(tmp_path / "a")])
    full = runner.invoke(app, [*base, "--out", str(tmp_path / "b"), "--verbose"])
    assert compact.exit_code == full.exit_code == 0
    assert "MRR by condition" in compact.stdout and "hits@10  " not in compact.stdout
    assert full.stdout.count("MRR by condition") == 1  # the compact table, once
    breakdown = full.stdout.split("MRR by condition")[0]
    assert "hits@10" in breakdown and "P@1" in breakdown
    for category in ("all", "visual", "functional", "encyclopaedic"):
        assert f"top/decreasing/{category}" in breakdown
    one = runner.invoke(
        app,
        [
            "retrieve",
            "-m",
            tiny_bert,
            "--norms",
            str(toy_norms_path),
            "-q",
            "--out",
            str(tmp_path / "c"),
            "--verbose",
        ],
    )
    assert one.exit_code == 0 and "full breakdown" not in one.stdout  # the table once, not twice
    assert one.stdout.count("MRR [95% CI]") == 1


def test_long_nli_breakdowns_wait_for_verbose():
    rows = [("accuracy", "split", "main", "accuracy", 0.5, None, 10, 1)] + [
        ("paradigms", "paradigm", f"p{i}", "accuracy", 0.5, None, 10, 1)
        for i in range(COMPACT_ROWS + 1)
    ]
    summary = pd.DataFrame(
        rows, columns=["section", "breakdown", "group", "metric", "value", "sd", "n", "n_seeds"]
    ).assign(model="/x/m")
    compact, full = format_nli_summary(summary), format_nli_summary(summary, verbose=True)
    assert "p0" not in compact and "1 breakdown(s) of more than" in compact
    assert "p0" in full and "== m" in full


def test_revision_on_a_local_directory_is_a_warning():
    manifest = {
        "models": [
            {"name": "./m", "local_path": "/x/m", "revision": "v1"},
            {"name": "roberta-base", "local_path": None, "revision": "v1"},
        ]
    }
    notes = run_notes(manifest)
    assert notes == [
        "warning: ./m: revision v1 has no effect on a local directory (it was loaded as it is)"
    ]


def test_a_long_first_line_is_cut_in_the_error(tiny_bert, tmp_path):
    """A JSON file given as norms echoed its whole 8 KB first line into the error."""
    from support import fails_cleanly

    as_json = tmp_path / "norms.json"
    as_json.write_text("[" + ", ".join(['{"concept": "bear", "pf": 3}'] * 300) + "]\n")
    line = fails_cleanly(["retrieve", "-m", tiny_bert, "--norms", as_json], "not a norms format")
    assert len(as_json.read_text()) > 8000 and '{"concept": "bear"' in line
    assert line.count("bear") < 5 and len(line) < 1000
