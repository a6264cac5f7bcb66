"""`probe runs`: a user's past runs, with their state (issue 22, item 10)."""

from __future__ import annotations

from support import interrupt_after_one_chunk
from typer.testing import CliRunner

import tacit
from tacit.cli import app

runner = CliRunner()


def test_runs_lists_complete_and_interrupted_runs(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["-m", tiny_bert, "--norms", str(toy_norms_path), "-q"]
    assert runner.invoke(app, ["retrieve", *base]).exit_code == 0  # results/retrieve/<stamp>
    assert runner.invoke(app, ["elicit", *base, "--out", "results/mine"]).exit_code == 0
    with monkeypatch.context() as patch:
        interrupt_after_one_chunk(patch)
        stopped = runner.invoke(app, ["retrieve", *base, "--out", "results/stopped"])
    assert stopped.exit_code == 130
    (tmp_path / "results" / "notes").mkdir()  # not a run: not listed
    listing = tacit.list_runs()
    assert sorted(listing["probe"]) == ["elicit", "retrieve", "retrieve"]
    states = dict(zip(listing["run"], listing["state"]))
    assert states["mine"] == "complete" and states["stopped"] == "interrupted (--resume)"
    assert set(listing["models"]) == {"tiny-bert0"}
    assert (listing.loc[listing["state"] == "complete", "norms"] == "norms.dat").all()
    printed = runner.invoke(app, ["runs"])
    assert printed.exit_code == 0 and "interrupted (--resume)" in printed.stdout
    assert "results/notes" not in printed.stdout


def test_runs_of_a_missing_folder_is_one_line(tmp_path):
    result = runner.invoke(app, ["runs", str(tmp_path / "nothing")])
    assert result.exit_code == 1 and "no such directory" in result.stderr
