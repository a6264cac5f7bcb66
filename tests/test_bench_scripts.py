"""The benchmark scripts import what they use from tacit (CI's smoke run found one that did not).

They are not run here (CI runs one --quick); ``--help`` imports every module a script names.
Every script's ``--help`` runs in one process, each as its own ``__main__``: torch and tacit load
once, not once per script.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(path for path in BENCH.glob("bench_*.py"))
# each script as `python SCRIPT --help` runs it (its folder first on the path), its exit status
# and output printed as a JSON line
EACH_HELP = """
import contextlib, io, json, runpy, sys, traceback
for path in sys.argv[1:]:
    sys.argv, out, code = [path, "--help"], io.StringIO(), 0
    sys.path.insert(0, path.rsplit("/", 1)[0])
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
    except SystemExit as stop:
        code = stop.code or 0
    except BaseException:
        code, out = 1, io.StringIO(traceback.format_exc())
    finally:
        sys.path.pop(0)
    print(json.dumps({"script": path, "code": code, "out": out.getvalue()}))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, dict]:
    done = subprocess.run(
        [sys.executable, "-c", EACH_HELP, *map(str, SCRIPTS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {Path(entry["script"]).name: entry for entry in found}


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[path.name for path in SCRIPTS])
def test_a_benchmark_script_imports_and_says_its_options(script: Path, helps) -> None:
    said = helps[script.name]
    assert said["code"] == 0, said["out"][-2000:]
    assert "--quick" in said["out"]


def peers_report():
    """bench/peers_report.py, imported as bench_peers.py imports it (from bench/)."""
    sys.path.insert(0, str(BENCH))
    try:
        import peers_report
    finally:
        sys.path.remove(str(BENCH))
    return peers_report


def a_run(score_s: float, scores: list[float], **extra: object) -> dict:
    return {"wall_s": 2 * score_s, "score_s": score_s, "peak_mb": 100.0, "scores": scores, **extra}


def test_the_peers_report_checks_scores_and_puts_each_tool_over_tacits_floor() -> None:
    report = peers_report()
    work = {"span_tokens": 10, "span_tokens_naive": 16}
    small = {
        "kind": "causal",
        "template": "paper",
        "prompts": 1,
        "candidates": 2,
        "runs": {
            "tacit": a_run(1.0, [-1.0, -2.0], floor_s=0.5, work=work),
            "lm-eval": a_run(3.0, [-1.0, -2.00005]),
        },
    }
    called = {
        **small,
        "template": "called",
        "runs": {
            "tacit": a_run(1.0, [-1.0, -2.0], floor_s=1.0),
            "lm-eval": a_run(2.0, [-1.0, -2.1]),  # 0.1 nats off: fails the check
        },
    }
    assert report.check(small, tolerance=1e-4)
    assert not report.check(called, tolerance=1e-4)
    rows = report.table([small, called])
    assert rows[0] == report.HEADER
    assert [row[:3] for row in rows[1:4]] == [
        ["causal", "1 x 2", "tacit (log P(sentence), prefix cache)"],
        ["causal", "1 x 2", "tacit's floor (its forward passes, bare)"],
        ["causal", "1 x 2", "lm-eval (loglikelihood_rolling)"],
    ]
    assert rows[1][7] == "2.00x" and rows[1][9] == "10 tokens (16)"
    assert rows[3][6:8] == ["3.00x", "6.00x"]  # whole process over tacit's, scoring over floor
    assert rows[3][10] == "max diff 5.0e-05 nats"
    assert rows[4][0] == "causal, template called"
    assert report.summary([small, called]) == [
        ["job", "tool", "1 x 2"],
        ["causal", "tacit", "2.00x (500.0 ms)"],
        ["causal", "lm-eval", "6.00x (1500.0 ms)"],
        ["causal, template called", "tacit", "1.00x (500.0 ms)"],
        ["causal, template called", "lm-eval", "2.00x (1000.0 ms)"],
    ]


def test_the_peers_summary_marks_a_size_a_tool_did_not_run() -> None:
    report = peers_report()
    runs = {"tacit": a_run(1.0, [0.0], floor_s=1.0), "minicons": a_run(2.0, [0.0])}
    one = {"kind": "masked", "prompts": 1, "candidates": 1, "runs": runs}
    only_tacit = {"kind": "masked", "prompts": 9, "candidates": 1, "runs": {"tacit": runs["tacit"]}}
    assert report.summary([one, only_tacit])[1:] == [
        ["masked", "tacit", "1.00x (1000.0 ms)", "1.00x (111.1 ms)"],
        ["masked", "minicons", "2.00x (2000.0 ms)", "-"],
    ]


@pytest.mark.slow
def test_the_choice_items_builder_on_cslb():
    """bench/cslb_choice_items.py (docs/real-models.md's multiple choice): each item's answer
    is one of its four distinct candidates, all of the concept's domain, the same for a seed."""
    import runpy

    from support import REAL_NORMS

    if not REAL_NORMS.is_file():
        pytest.skip(f"CSLB's norms not found at {REAL_NORMS}")
    import tacit

    build = runpy.run_path(str(BENCH / "cslb_choice_items.py"))["choice_items"]
    items = build(str(REAL_NORMS), 12, 0)
    assert items == build(str(REAL_NORMS), 12, 0) and len(items) == 12
    domains = tacit.read_norms(str(REAL_NORMS)).domains
    for item in items:
        assert item["answer"] in item["candidates"] and len(set(item["candidates"])) == 4
        assert {domains[c] for c in item["candidates"]} == {domains[item["answer"]]}
        assert item["text"].endswith("It is the [Y].")
