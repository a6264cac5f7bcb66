"""Data-parallel runs: two CPU processes (gloo) give the files of one process; a process that
dies makes the run fail with one line, not hang. Every test starts processes: all are `slow`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import Result
from support import probe_in_one_thread, run_as_two_ranks

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TIMING = {"started", "finished", "command", "processes", "resumed"}


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def torchrun(args: list[str], processes: int, cache: Path) -> subprocess.CompletedProcess[str]:
    """`torchrun --nproc_per_node N -m tacit.cli ARGS` (torchrun ships with torch); each run
    gets its own cache so that both compute the vocabulary (the manifest says so)."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        str(processes),
        "--master_port",
        str(free_port()),
        "-m",
        "tacit.cli",
        *args,
    ]
    return subprocess.run(
        command, env=env(TACIT_CACHE_DIR=str(cache)), capture_output=True, text=True, timeout=300
    )


def single(args: list[str], cache: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    """The one-process run to compare with, in this process: the process boundary under test is
    torchrun's, and a third interpreter importing torch cost the test more than its run."""
    monkeypatch.setenv("TACIT_CACHE_DIR", str(cache))
    return probe_in_one_thread(args)


def same_files(one: Path, two: Path) -> None:
    assert sorted(p.name for p in one.iterdir()) == sorted(p.name for p in two.iterdir())
    for path in one.iterdir():
        if path.name == "manifest.json":
            a, b = json.loads(path.read_text()), json.loads((two / path.name).read_text())
            # where each process found its single-token words (computed, or read from the
            # cache another process of the same run had just written) is provenance, not result
            for manifest in (a, b):
                manifest.get("vocabulary", {}).pop("single_token_words", None)
                for record in manifest["models"]:  # seconds: how long, not what
                    record.pop("timing", None)
            assert b.get("processes") == 2 and "processes" not in a
            assert {k: v for k, v in a.items() if k not in TIMING} == {
                k: v for k, v in b.items() if k not in TIMING
            }
        elif path.suffix == ".csv":  # scores within float tolerance (batches differ in padding)
            pd.testing.assert_frame_equal(
                pd.read_csv(path), pd.read_csv(two / path.name), check_exact=False, rtol=1e-5
            )
        else:
            assert path.read_bytes() == (two / path.name).read_bytes(), path.name


@pytest.mark.parametrize("probe", ["retrieve", "elicit", "retrieve --candidates concepts"])
def test_two_processes_write_the_files_of_one(
    probe, tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch
):
    args = [
        *probe.split(),
        "-m",
        tiny_bert,
        "-m",
        tiny_roberta,
        "--norms",
        str(toy_norms_path),
        "-q",
    ]
    one = single([*args, "--out", str(tmp_path / "one")], tmp_path / "cache1", monkeypatch)
    assert one.exit_code == 0, one.output
    two = torchrun([*args, "--out", str(tmp_path / "two")], 2, tmp_path / "cache2")
    assert two.returncode == 0, two.stderr
    assert two.stdout.count("written to") == 1  # the main process alone writes and prints
    same_files(tmp_path / "one", tmp_path / "two")


def test_a_process_that_dies_fails_the_run_cleanly(tiny_bert, toy_norms_path, tmp_path):
    """Launched as torchrun does (its environment), without its agent, which would stop the
    survivor itself: the survivor must see the loss, say so in one line and exit non-zero."""
    out = tmp_path / "run"
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q", "--out", str(out)]
    port = str(free_port())
    launch = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": port,
        "WORLD_SIZE": "2",
        "TACIT_DIST_TIMEOUT": "60",
        "TACIT_DIST_TEST_EXIT_RANK": "1",
    }
    processes, outputs = run_as_two_ranks(args, env(**launch))
    main_stderr = outputs[0][1]
    assert processes[1].returncode == 3
    assert processes[0].returncode == 1, main_stderr
    assert "data-parallel run failed: process 0 of 2 lost the others" in main_stderr
    assert "Traceback" not in main_stderr
    assert not (out / "prompts.csv").exists()
