"""Cells as independent jobs (issue 31): `--list` and `--cell`, a line per cell, the states
after the run, a failed cell recorded while the others go on, one owner per cell (a lock in the
sweep folder), and separate `--cell` processes making the same folder as one sweep."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

import tacit.sweep.cells
from tacit.cli import app
from tacit.core.locks import file_lock
from tacit.sweep import read_sweep
from tacit.sweep.cells import lock_file, prepare_folder, run_cells

runner = CliRunner()


def write_grid(path, models, norms, tables: str) -> None:
    path.write_text(
        f"models = {json.dumps([str(m) for m in models])}\nnorms = [{json.dumps(str(norms))}]\n"
        f"[run]\nbatch_size = 8\nquiet = true\n{tables}"
    )


def invoke(*args):
    return runner.invoke(app, ["sweep", *map(str, args)])


@pytest.mark.slow
def test_a_failed_cell_is_recorded_the_others_go_on_and_a_rerun_retries_it(
    tiny_bert, toy_norms_path, tmp_path
):
    later = tmp_path / "later-model"  # no model there yet: its cell fails
    grid, out = tmp_path / "grid.toml", tmp_path / "grid"
    write_grid(grid, [later, tiny_bert], toy_norms_path, "[retrieve]\nmax_props = 1\n")
    first = invoke(grid, "--out", out)
    assert first.exit_code == 1
    lines = first.stdout.splitlines()
    assert lines[0] == "[1/2] cell 0 retrieve-later-model-norms-max_props=1: running"
    assert lines[1].startswith(
        "[1/2] cell 0 retrieve-later-model-norms-max_props=1: failed: "
        f"--model {later}: no such directory"
    )
    assert lines[3].startswith("[2/2] cell 1 retrieve-tiny-bert0-norms-max_props=1: complete in")
    table = first.stdout[first.stdout.index("index") :]
    assert "failed" in table and "complete" in table  # the states after the run
    assert (
        "2 cell(s) in" in first.stdout and "1 run now, 0 already complete, 1 failed" in first.stdout
    )
    assert "error: 1 cell(s) failed (above); run the same command again" in first.stderr
    listed = invoke(grid, "--out", out, "--list")
    assert [line.split()[-1] for line in listed.stdout.splitlines()[1:3]] == ["failed", "complete"]

    done = out / "retrieve-tiny-bert0-norms-max_props=1" / "manifest.json"
    mtime = done.stat().st_mtime_ns
    shutil.copytree(tiny_bert, later)  # the model arrives
    again = invoke(grid, "--out", out)
    assert again.exit_code == 0, again.output
    assert "[1/1] cell 0 retrieve-later-model-norms-max_props=1: running" in again.stdout
    assert "1 run now, 1 already complete, 0 failed" in again.stdout
    assert done.stat().st_mtime_ns == mtime and not list((out / ".sweep").glob("*.failed"))


def test_list_and_dry_run_name_cells_and_estimate_with_every_option(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    concepts = ["bear", "cat", "dog", "zebra", "knife", "apple"]
    write_grid(
        tmp_path / "grid.toml",
        [tiny_bert],
        toy_norms_path,
        f'[retrieve]\nmax_props = 2\ncandidates = "concepts"\nconcepts = {json.dumps(concepts)}\n',
    )
    dry = invoke("grid.toml", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.endswith("1 cell(s), 0 complete, 1 to run in results/grid\n")
    assert "results/grid" in invoke("--help").stdout  # --help names the same default folder
    header, row = dry.stdout.splitlines()[:2]
    assert header.split() == [
        "index",
        "cell",
        "probe",
        "model",
        "norms",
        "step",
        "state",
        "prompts_at_most",
    ]
    name, digest = row.split()[1], hashlib.sha256(json.dumps(concepts).encode()).hexdigest()
    assert (
        name == f"retrieve-tiny-bert0-norms-candidates=concepts-concepts={digest[:8]}-max_props=2"
    )
    assert not (tmp_path / "results").exists()

    ran = invoke("grid.toml", "--cell", "0")
    assert ran.exit_code == 0, ran.output
    run = tmp_path / "results" / "grid" / name
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["sweep"]["options"]["concepts"] == concepts  # the full value
    assert manifest["sweep"]["cell"] == name and manifest["sweep"]["index"] == 0
    # The estimate is exact but for apple's 2 prompts: the tiny tokenizer does not read "apple"
    # whole, which no estimate made before loading the model can know (dropped.csv says so).
    assert pd.read_csv(run / "dropped.csv")["concept"].tolist() == ["apple"]
    assert len(pd.read_csv(run / "prompts.csv")) + 2 == int(row.split()[-1])


def test_a_cell_has_one_owner_at_a_time(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    grid, out = tmp_path / "grid.toml", tmp_path / "grid"
    write_grid(grid, [tiny_bert], toy_norms_path, "[retrieve]\nmax_props = [1, 2]\n")
    sweep = read_sweep(grid)
    prepare_folder(out)
    monkeypatch.setattr(tacit.sweep.cells, "LOCK_WAIT", 0.2)
    said: list[str] = []
    with file_lock(lock_file(out, sweep.cells[0]), "a test holding the cell"):
        listed = invoke(grid, "--out", out, "--list")
        assert f"running (process {os.getpid()})" in listed.stdout.splitlines()[1]
        ran = invoke(grid, "--out", out)  # runs the other cell, leaves this one to its owner
        assert ran.exit_code == 0, ran.output
        assert "1 run now, 0 already complete, 0 failed" in ran.stdout
        assert run_cells(sweep, out, [0], said.append) == {0: "running"}  # raced for it
        assert said == [
            f"[1/1] cell 0 {sweep.cells[0].name}: running in process {os.getpid()}: left to it"
        ]
    assert run_cells(sweep, out, [1], said.append) == {1: "complete"}
    assert said[-1] == f"[1/1] cell 1 {sweep.cells[1].name}: complete (by another process)"


def sweep_process(grid, out, cells: str) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "tacit.cli",
        "sweep",
        str(grid),
        "--out",
        str(out),
        "--cell",
        cells,
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def finished(processes: list[subprocess.Popen]) -> list[str]:
    outputs = [p.communicate(timeout=300)[0] for p in processes]
    assert [p.returncode for p in processes] == [0] * len(processes), outputs
    return outputs


def data_files(folder) -> dict[str, bytes]:
    """Every file of every cell but its manifest (which says when and how it ran)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.glob("*/*"))
        if p.is_file() and p.name != "manifest.json" and p.parent.name != ".sweep"
    }


@pytest.mark.slow
def test_cells_as_separate_processes_make_the_same_folder_as_one_sweep(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path
):
    grid = tmp_path / "grid.toml"
    write_grid(
        grid, [tiny_bert, tiny_roberta], toy_norms_path, "[retrieve]\nmax_props = 2\n[elicit]\n"
    )
    threads = torch.get_num_threads()  # as many as the processes below: the same last digits
    torch.set_num_threads(1)
    try:
        whole = invoke(grid, "--out", tmp_path / "whole")
    finally:
        torch.set_num_threads(threads)
    assert whole.exit_code == 0 and "4 run now" in whole.stdout, whole.output
    # two processes, as a job array whose shares overlap: cell 0 is the first's alone, cell 3
    # the second's, cells 1 and 2 both processes' (each must run once, by whichever takes it)
    shared = tmp_path / "shared"
    outputs = finished([sweep_process(grid, shared, cells) for cells in ("0-2", "1-3")])
    said = [line for output in outputs for line in output.splitlines()]
    for cell in read_sweep(grid).cells:
        assert sum(line.endswith(f" {cell.name}: running") for line in said) == 1, outputs
    first, second = (output.splitlines() for output in outputs)
    cells = read_sweep(grid).cells
    assert any(line.endswith(f" {cells[0].name}: running") for line in first), outputs
    assert any(line.endswith(f" {cells[3].name}: running") for line in second), outputs
    expected = data_files(tmp_path / "whole")
    assert len(expected) >= 4 * 3
    assert data_files(shared) == expected
    for run in (tmp_path / "whole").glob("*/manifest.json"):
        mine = json.loads((shared / run.parent.name / "manifest.json").read_text())
        assert mine["sweep"] == json.loads(run.read_text())["sweep"]
    assert invoke_leaderboard(shared) == invoke_leaderboard(tmp_path / "whole")


def invoke_leaderboard(folder) -> str:
    board = folder.parent / f"{folder.name}-leaderboard.csv"
    result = runner.invoke(app, ["leaderboard", str(folder), "--out", str(board)])
    assert result.exit_code == 0, result.output
    return board.read_text()
