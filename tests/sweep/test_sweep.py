"""Sweeps (issue 20): a grid of 2 tiny models x 2 probes x 2 option values runs into one folder,
resumes after an interruption without redoing finished cells, and `probe leaderboard` reads it."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

import tacit
import tacit.api
from tacit.cli import app

runner = CliRunner()


def write_sweep(path, models, norms) -> None:
    path.write_text(
        f"models = {[str(m) for m in models]!r}\n"
        f"norms = [{str(norms)!r}]\n\n"
        "[run]\nbatch_size = 8\nquiet = true\n\n"
        "[retrieve]\nmax_props = [1, 2]\n\n"
        "[elicit]\nprefix = [true, false]\n".replace("'", '"')
    )


@pytest.mark.slow
def test_a_sweep_runs_resumes_and_makes_a_leaderboard(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch
):
    sweep_file, out = tmp_path / "grid.toml", tmp_path / "grid"
    write_sweep(sweep_file, [tiny_bert, tiny_roberta], toy_norms_path)
    dry = runner.invoke(app, ["sweep", str(sweep_file), "--out", str(out), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "8 cell(s), 0 complete, 8 to run" in dry.stdout and not out.exists()
    assert "prompts_at_most" in dry.stdout

    real_run, calls = tacit.api.run_probe, []

    def elicit_stopped_once(name, *args, **kwargs):  # the third elicit cell: Ctrl-C
        calls.append(name)
        if calls.count("elicit") == 3:
            raise KeyboardInterrupt
        return real_run(name, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(tacit.api, "run_probe", elicit_stopped_once)
        stopped = runner.invoke(app, ["sweep", str(sweep_file), "--out", str(out)])
    assert stopped.exit_code == 130
    assert (
        "6 of 8 cell(s) complete" in stopped.output and "the same command goes on" in stopped.output
    )
    done = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/manifest.json")}
    assert len(done) == 6  # 4 retrieve cells and 2 elicit cells finished before the stop
    again = runner.invoke(app, ["sweep", str(sweep_file), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert "8 cell(s)" in again.stdout and "2 run now, 6 already complete" in again.stdout
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/manifest.json")}
    assert len(after) == 8 and all(after[name] == mtime for name, mtime in done.items())

    board = runner.invoke(app, ["leaderboard", str(out), "--out", str(out / "board.csv")])
    assert board.exit_code == 0, board.output
    table = pd.read_csv(out / "board.csv")
    assert len(table) == 8 and set(table["model"]) == {"tiny-bert0", "tiny-roberta0"}
    assert set(table["probe"]) == {"retrieve", "elicit"}
    assert set(table["condition"]) >= {
        "1 property, top/decreasing/all",
        "2 properties, top/decreasing/all",
    }
    markdown = runner.invoke(app, ["leaderboard", str(out), "--out", str(out / "board.md")])
    assert markdown.exit_code == 0 and "| rank | model |" in (out / "board.md").read_text()


def test_bad_sweep_files_are_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("models = 'one'\n[retrieve]\n")
    result = runner.invoke(app, ["sweep", str(bad), "--dry-run"])
    assert result.exit_code == 1 and "`models` must be a list" in result.stderr
    bad.write_text("models = ['m']\n[retreive]\n")
    result = runner.invoke(app, ["sweep", str(bad), "--dry-run"])
    assert result.exit_code == 1 and "retreive" in result.stderr
