"""Run directories are never overwritten unasked (issue 22, item 1)."""

from datetime import datetime

import pytest
from support import RETRIEVAL_RUN_FILES, fails_cleanly
from typer.testing import CliRunner

from tacit.cli import app
from tacit.results.rundir import fresh_run_dir

runner = CliRunner()


@pytest.mark.slow
def test_a_directory_holding_a_run_is_refused_then_replaced_whole(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path
):
    out = tmp_path / "run"
    norms = ["--norms", str(toy_norms_path), "--out", str(out), "-q"]
    two_models = ["elicit", "-m", tiny_bert, "-m", tiny_roberta, *norms]
    assert runner.invoke(app, two_models).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # what the user saw: a retrieve run written over an elicit run, silently, mixing the two
    retrieve = ["retrieve", "-m", tiny_bert, *norms]
    fails_cleanly(retrieve, f"--out {out}: already holds a run: --overwrite")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched
    assert runner.invoke(app, [*retrieve, "--overwrite"]).exit_code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == RETRIEVAL_RUN_FILES
    assert "excluded.csv" in before  # the elicit run's file is gone with it


def test_other_files_are_refused_and_resume_with_overwrite_contradicts(
    tiny_bert, toy_norms_path, tmp_path
):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "my-notes.txt").write_text("mine")
    base = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out)]
    fails_cleanly(base, "already holds 1 other file(s) (my-notes.txt)")
    fails_cleanly([*base, "--resume", "--overwrite"], "contradict each other")
    assert (out / "my-notes.txt").read_text() == "mine"


def test_an_empty_directory_is_fine(tiny_bert, toy_norms_path, tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out), "-q"]
    assert runner.invoke(app, args).exit_code == 0


def test_the_api_refuses_to_save_over_a_run(tiny_bert, toy_norms_path, tmp_path):
    import pytest

    import tacit
    from tacit.core.errors import TacitError

    result = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=2, quiet=True)
    result.save(tmp_path / "run")
    with pytest.raises(TacitError, match="already holds a run"):
        result.save(tmp_path / "run")
    result.save(tmp_path / "run", overwrite=True)


def test_runs_started_in_the_same_second_get_their_own_directories(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    now = datetime(2026, 11, 24, 13, 0, 0)
    first, second, third = (fresh_run_dir("retrieve", now) for _ in range(3))
    assert [p.name for p in (first, second, third)] == [
        "20261124-130000",
        "20261124-130000-2",
        "20261124-130000-3",
    ]
    assert all(p.is_dir() for p in (first, second, third))
