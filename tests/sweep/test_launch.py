"""The launcher (issue 31): cells as jobs through submitit, its local executor here (no Slurm on
this machine), a failed cell reported with its log and, on a rerun, the only one submitted; what
a Slurm array would ask for, read off the script sbatch is given."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.sweep.launch import parse_options

pytest.importorskip(
    "submitit", reason="the launcher runs on submitit: pip install 'tacit-probe[cluster]'"
)
runner = CliRunner()


def write_grid(path, models, norms) -> None:
    path.write_text(
        f"models = {json.dumps([str(m) for m in models])}\nnorms = [{json.dumps(str(norms))}]\n"
        "[run]\nbatch_size = 8\nquiet = true\n[retrieve]\nmax_props = 1\n"
    )


@pytest.mark.slow
def test_local_jobs_run_the_grid_and_a_rerun_submits_the_failed_cell_only(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # as if it had two GPUs: a cell on each
    later = tmp_path / "later-model"  # no model there yet: its cell fails
    grid, out = tmp_path / "grid.toml", tmp_path / "grid"
    write_grid(grid, [tiny_bert, later], toy_norms_path)  # two cells: a process each
    launch = ["sweep", str(grid), "--out", str(out), "--launcher", "local", "--gpus-per-cell", "1"]
    first = runner.invoke(app, launch)
    assert first.exit_code == 1, first.output
    started = [line for line in first.stdout.splitlines() if ": started (process" in line]
    assert len(started) == 2 and {line.split()[1] for line in started} == {"0", "1"}
    for line in started:  # each job's process saw its slot's GPU, and only that one
        process, slot = re.search(r"process (\d+), slot (\d)", line).groups()
        assert (
            f"CUDA_VISIBLE_DEVICES={slot}\n" in (out / "logs" / f"{process}_0_log.out").read_text()
        )
    failed = next(line for line in first.stdout.splitlines() if ": failed: " in line)
    assert failed.startswith(
        f"cell 1 retrieve-later-model-norms-max_props=1: failed: models {later}: no such directory"
    )  # fmt: skip (the sweep file's key)
    log = failed.rsplit("(log: ", 1)[1].rstrip(")")
    assert log.startswith(str(out / "logs")) and "no such directory" in Path(log).read_text()
    assert (
        "2 cell(s) in" in first.stdout and "1 run now, 0 already complete, 1 failed" in first.stdout
    )
    assert f"(log: {log})" in first.stderr  # the failed cells again, after the table

    done = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/manifest.json")}
    assert len(done) == 1
    shutil.copytree(tiny_bert, later)  # the model arrives
    again = runner.invoke(app, launch)
    assert again.exit_code == 0, again.output
    started = [line for line in again.stdout.splitlines() if ": started (process" in line]
    assert len(started) == 1 and started[0].startswith("cell 1 retrieve-later-model")
    assert "1 run now, 1 already complete, 0 failed" in again.stdout
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/manifest.json")}
    assert len(after) == 2 and all(after[name] == mtime for name, mtime in done.items())


def fake_slurm(folder, answer: str) -> None:
    """sbatch and srun on PATH: sbatch keeps the script it is given and answers `answer`."""
    folder.mkdir()
    sbatch = folder / "sbatch"
    sbatch.write_text(f'#!/bin/sh\ncp "$1" "{folder}/submitted.sh"\necho "{answer}" >&2\nexit 1\n')
    srun = folder / "srun"
    srun.write_text("#!/bin/sh\nexit 0\n")
    for tool in (sbatch, srun):
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)


def test_slurm_gets_one_array_with_the_resources_asked_for(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch
):
    fake_slurm(tmp_path / "bin", "sbatch: error: invalid partition specified: gpu")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    grid = tmp_path / "grid.toml"
    write_grid(grid, [tiny_bert, tiny_roberta, "org/third"], toy_norms_path)
    result = runner.invoke(
        app,
        [
            "sweep",
            str(grid),
            "--out",
            str(tmp_path / "grid"),
            "--launcher",
            "slurm",
            "--partition",
            "gpu",
            "--time",
            "90",
            "--parallel",
            "2",
            "--gpus-per-cell",
            "1",
            "--launcher-option",
            "slurm_account=lab",
            "--launcher-option",
            "mem_gb=32",
        ],
    )
    assert result.exit_code == 1
    said = result.stderr.strip().splitlines()[-1]  # after sbatch's own words, ours in a line
    assert said == (
        "error: --launcher slurm: sbatch refused the jobs: sbatch: error: invalid "
        "partition specified: gpu"
    )
    script = (tmp_path / "bin" / "submitted.sh").read_text()
    for line in (
        "#SBATCH --array=0-2%2",
        "#SBATCH --partition=gpu",
        "#SBATCH --time=90",
        "#SBATCH --gpus-per-node=1",
        "#SBATCH --account=lab",
        "#SBATCH --mem=32GB",
        "#SBATCH --job-name=tacit-grid",
    ):
        assert line in script.splitlines(), script


def test_launcher_mistakes_are_one_line(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    grid = tmp_path / "grid.toml"
    write_grid(grid, [tiny_bert], toy_norms_path)
    base = ["sweep", str(grid), "--out", str(tmp_path / "grid")]
    monkeypatch.setenv("PATH", str(tmp_path))  # no Slurm here
    cases = [
        (["--launcher", "slurm"], "sbatch and srun are not on this machine's PATH"),
        (
            ["--parallel", "2"],
            "--parallel, --gpus-per-cell, --partition and --launcher-option go with --launcher",
        ),
        (
            ["--launcher", "local", "--gpus-per-cell", "1", "--parallel", "64"],
            "64 cell(s) at once with 1 GPU(s) each need 64 GPUs",
        ),
        (["--launcher", "local", "--launcher-option", "no_such_thing=1"], "--launcher local: "),
        (["--launcher", "local", "--launcher-option", "oops"], "expected KEY=VALUE"),
    ]
    for extra, message in cases:
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 1, (extra, result.output)
        assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_launcher_options_are_numbers_where_they_read_as_numbers():
    assert parse_options(["mem_gb=32", "slurm_qos=high", "cpus_per_task=8", "x=0.5"]) == {
        "mem_gb": 32,
        "slurm_qos": "high",
        "cpus_per_task": 8,
        "x": 0.5,
    }
    with pytest.raises(TacitError, match="expected KEY=VALUE"):
        parse_options(["=3"])
