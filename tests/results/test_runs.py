"""`probe runs`: a user's past runs, with their state (issue 22, item 10)."""

from __future__ import annotations

import io
import json
import re
import sys

import numpy as np
import pandas as pd
import pytest
from support import interrupt_after_one_chunk
from typer.testing import CliRunner

import tacit
from tacit.cli import app

runner = CliRunner()


@pytest.mark.slow
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
    tacit.install_norms(toy_norms_path, name="toy")  # installed: runs name it as installed
    assert set(tacit.list_runs().dropna()["norms"]) - {""} == {"toy"}
    printed = runner.invoke(app, ["runs"], env={"COLUMNS": "100"})
    assert printed.exit_code == 0 and "interrupted" in printed.stdout
    assert max(map(len, printed.stdout.splitlines())) <= 100
    assert "results/notes" not in printed.stdout


def test_runs_of_a_missing_folder_is_one_line(tmp_path):
    result = runner.invoke(app, ["runs", str(tmp_path / "nothing")])
    assert result.exit_code == 1 and "no such directory" in result.stderr


@pytest.mark.slow
def test_table_tells_runs_with_the_same_model_apart(tiny_bert, toy_norms_path, tmp_path):
    """A run and its prefix ablation hold the same model, relation and prefix: the table
    names each by its run (it ended in a 61-line pandas traceback)."""
    base = ["elicit", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q", "--relation", "has"]
    assert runner.invoke(app, [*base, "--out", str(tmp_path / "plain")]).exit_code == 0
    ablation = [*base, "--prefix-ablation", "--out", str(tmp_path / "both")]
    assert runner.invoke(app, ablation).exit_code == 0
    result = runner.invoke(app, ["table", str(tmp_path / "plain"), str(tmp_path / "both")])
    assert result.exit_code == 0, result.output
    assert "tiny-bert0 (plain)" in result.stdout and "tiny-bert0 (both)" in result.stdout
    # every row of a model in two runs names its run
    assert re.search(r"^tiny-bert0 +[^(]", result.stdout, re.MULTILINE) is None


@pytest.mark.slow
def test_table_of_retrieval_runs(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    both = ["--vocab-model", tiny_bert, "--vocab-model", tiny_roberta]  # one vocabulary
    for name, model in (("a", tiny_bert), ("b", tiny_roberta)):
        args = [
            "retrieve",
            "-m",
            model,
            "--norms",
            str(toy_norms_path),
            "-q",
            *both,
            "--out",
            str(tmp_path / name),
        ]
        assert runner.invoke(app, args).exit_code == 0
    result = runner.invoke(
        app,
        ["table", str(tmp_path / "a"), str(tmp_path / "b"), "--n-props", "1,3"],
        env={"COLUMNS": "100"},
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "MRR [95% CI]" in lines[1] and "P@1" in lines[1] and "Group" not in result.stdout
    rows = [line.split()[:2] for line in lines[3:7]]
    # --model order, then the number of properties
    assert rows == [
        ["tiny-bert0", "1"],
        ["tiny-bert0", "3"],
        ["tiny-roberta0", "1"],
        ["tiny-roberta0", "3"],
    ]
    csv = runner.invoke(app, ["table", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "csv"])
    table = pd.read_csv(io.StringIO(csv.stdout))
    summary = pd.read_csv(tmp_path / "a" / "summary.csv")
    mine = table[table["model"] == "tiny-bert0"].set_index("n_props")["mrr_ci_high"]
    assert np.allclose(mine.to_numpy(), summary.set_index("n_props")["mrr_ci_high"].loc[mine.index])
    elicit = tmp_path / "e"
    args = ["elicit", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q", "--out", str(elicit)]
    assert runner.invoke(app, args).exit_code == 0
    mixed = runner.invoke(app, ["table", str(tmp_path / "a"), str(elicit)])
    assert mixed.exit_code == 1 and "runs are of different probes" in mixed.stderr


@pytest.mark.slow
def test_plot_refuses_mixed_figures_and_warns_when_runs_differ(tiny_bert, toy_norms_path, tmp_path):
    """An ordering run beside a category run drew one garbled panel; runs over different
    vocabularies looked like a fair comparison (issue 22, items 3 and 4)."""
    import stat

    base = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q"]
    for name, extra in (
        ("ordering", ["--ablation", "ordering"]),
        ("category", ["--ablation", "category"]),
        ("all", []),
        ("few", ["--concepts", "bear,cat"]),
    ):
        assert runner.invoke(app, [*base, *extra, "--out", str(tmp_path / name)]).exit_code == 0
    mixed = runner.invoke(
        app,
        [
            "plot",
            str(tmp_path / "ordering"),
            str(tmp_path / "category"),
            "--out",
            str(tmp_path / "mixed.png"),
        ],
    )
    assert mixed.exit_code == 1 and "draw different figures" in mixed.stderr
    figure = tmp_path / "differ.png"
    pair = [str(tmp_path / "all"), str(tmp_path / "few")]
    refused = runner.invoke(app, ["plot", *pair, "--out", str(figure)])
    assert refused.exit_code == 1 and "not like for like" in refused.stderr
    assert "the runs differ in concepts (all: all; few: bear,cat)" in refused.stderr
    assert not figure.exists()
    differ = runner.invoke(app, ["plot", *pair, "--out", str(figure), "--mixed"])
    assert differ.exit_code == 0, differ.output
    assert "warning: the runs differ in concepts (all: all; few: bear,cat)" in differ.stderr
    assert "differ in vocabulary" not in differ.stderr  # the same models: the same vocabulary
    assert stat.S_IMODE(figure.stat().st_mode) == stat.S_IMODE(
        (tmp_path / "all" / "summary.csv").stat().st_mode
    )  # figures follow the umask like the tables


@pytest.mark.slow
def test_an_interrupted_run_shows_its_norms_start_and_history(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    """Issue 47: `probe runs` showed blank norms and start time for an interrupted run, and a
    resumed run's manifest kept only the resume's time and command. The checkpoint keeps the
    first start (norms, time, command); the manifest has it, and each resume in `resumed`."""
    monkeypatch.chdir(tmp_path)
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q"]
    first_command = [*args, "--seed", "3", "--out", "results/stopped"]
    with monkeypatch.context() as patch:
        interrupt_after_one_chunk(patch)
        patch.setattr(sys, "argv", ["probe", *first_command])  # the command line recorded
        stopped = runner.invoke(app, first_command)
    assert stopped.exit_code == 130
    listing = tacit.list_runs().set_index("run")
    assert listing.loc["stopped", "norms"] == "norms.dat"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", listing.loc["stopped", "started"])
    kept = json.loads((tmp_path / "results/stopped/.partial/run.json").read_text())
    first = kept["started"]
    assert "--seed 3" in kept["command"] and kept["resumed"] == []
    monkeypatch.setattr(sys, "argv", ["probe", *first_command, "--resume"])
    resumed = runner.invoke(app, [*first_command, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    manifest = json.loads((tmp_path / "results/stopped/manifest.json").read_text())
    assert manifest["started"] == first and manifest["command"] == kept["command"]
    assert "--resume" not in manifest["command"]
    [again] = manifest["resumed"]
    assert "--resume" in again["command"] and again["started"] >= first
    fresh = tacit.retrieve([tiny_bert], norms=toy_norms_path, quiet=True)
    assert fresh.manifest["resumed"] == []
