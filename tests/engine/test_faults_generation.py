"""Paid requests kept (issue 57): a run by generation against the hostile test server
(tests/support_server.py, which counts every request it answers), stopped at every point a
run can stop (kill -9, Ctrl-C and SIGTERM while answers arrive and just after the last one,
while the checkpoint is kept, while the final save stages and renames its files, after it; a
500 after some answers), then `--resume`d: no request answered before is sent again (counted
by the server), every request is answered once in all, and the files are those of a run that
was never stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support import write_norms
from support_server import TestServer
from typer.testing import CliRunner

from tacit.cli import app

pytestmark = pytest.mark.faults

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
TIMING = ("started", "finished", "command", "resumed")


@pytest.fixture(scope="module")
def server():
    with TestServer(None) as running:  # canned answers: fast, no model
        yield running


@pytest.fixture(scope="module")
def norms(tmp_path_factory) -> Path:
    return write_norms(tmp_path_factory.mktemp("norms") / "norms.dat")


def run_args(server: TestServer, norms: Path, out: Path, **options: object) -> list[str]:
    spec = server.spec(concurrency=options.pop("concurrency", 1), retries=0, **options)
    return ["elicit", "-m", spec, "--norms", str(norms), "--by", "generation", "-q"] + [
        "--out",
        str(out),
    ]


def probe(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m tacit.cli ARGS` in a process of its own (so that it can be killed)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **env}
    return subprocess.run(
        [sys.executable, "-m", "tacit.cli", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def files_of(out: Path) -> dict[str, bytes]:
    """A run directory's files, the manifest without what differs between any two runs."""
    found = {}
    for path in sorted(out.iterdir()):
        if path.name.startswith("."):
            continue
        data = path.read_bytes()
        if path.name == "manifest.json":
            manifest = json.loads(data)
            for key in TIMING:
                manifest.pop(key, None)
            for record in manifest.get("models", []):
                record.pop("timing", None)
            data = json.dumps(manifest, sort_keys=True).encode()
        found[path.name] = data
    return found


@pytest.fixture(scope="module")
def whole(server, norms, tmp_path_factory) -> tuple[dict[str, bytes], int]:
    """An uninterrupted run's files, and how many requests it sent."""
    out = tmp_path_factory.mktemp("whole") / "run"
    server.answered.clear()
    done = runner.invoke(app, run_args(server, norms, out))
    assert done.exit_code == 0, done.output
    assert len(set(server.answered_keys())) == len(server.answered) > 5
    return files_of(out), len(server.answered)


# (TACIT_FAULT, the signal, what the stop said, its exit status)
STOPS = {
    "killed after 5 answers": ("answers:kept@5", None, None, -signal.SIGKILL),
    "Ctrl-C after 5 answers": ("answers:kept@5", "INT", "5 answered request(s) kept", 130),
    "SIGTERM after 5 answers": ("answers:kept@5", "TERM", "5 answered request(s) kept", 143),
    "SIGTERM just after the last answer": ("answers:kept@LAST", "TERM", "answered request(s)", 143),
    "killed just after the last answer": ("answers:kept@LAST", None, None, -signal.SIGKILL),
    "killed while its chunk is kept": ("checkpoint:saved@2", None, None, -signal.SIGKILL),
    "killed while the save stages": ("save:staged@2", None, None, -signal.SIGKILL),
    "killed between the save's renames": ("save:renamed@2", None, None, -signal.SIGKILL),
    "Ctrl-C between the save's renames": ("save:renamed@2", "INT", None, 130),
    "killed after the save": ("save:written", None, None, -signal.SIGKILL),
}


@pytest.mark.parametrize("stop", list(STOPS))
def test_no_answered_request_is_sent_again(stop, server, norms, tmp_path, whole):
    point, sent, said, status = STOPS[stop]
    files, total = whole
    out = tmp_path / "run"
    args = run_args(server, norms, out)
    server.answered.clear()
    point = point.replace("LAST", str(total))
    env = {"TACIT_FAULT": point, **({"TACIT_FAULT_SIGNAL": sent} if sent else {})}
    stopped = probe(args, **env)
    assert stopped.returncode == status, stopped.stderr
    if said is not None:
        (line,) = stopped.stderr.strip().splitlines()
        assert said in line and f"--resume --out {out}" in line, line
    before = server.answered_keys()
    if stop.endswith("after 5 answers"):
        assert len(before) == 5
    if stop.endswith("the last answer"):
        assert len(before) == total
    server.answered.clear()
    resumed = runner.invoke(app, [*args, "--resume"])  # a saved run: saved again, no request
    assert resumed.exit_code == 0, resumed.output
    after = server.answered_keys()
    assert not set(before) & set(after), f"{stop}: requests answered before were sent again"
    assert Counter(before + after) == Counter(set(before + after))  # each once in all
    assert len(before) + len(after) == total
    assert files_of(out) == files
    assert not (out / ".partial").exists()


def test_a_failing_server_keeps_every_answer_that_came(server, norms, tmp_path, whole):
    """A 500 after 6 answers, 4 requests in flight: those in flight are waited for and kept,
    the run ends in one line naming --resume, and the resume sends only the rest."""
    _, total = whole
    out = tmp_path / "run"
    args = run_args(server, norms, out, concurrency=4)
    server.answered.clear()
    server.fail_after = server.completions + 6
    try:
        failed = runner.invoke(app, args)
    finally:
        server.fail_after = None
    assert failed.exit_code == 1
    (line,) = failed.stderr.strip().splitlines()
    assert "500 Internal Server Error" in line and "answered request(s) kept" in line, line
    before = server.answered_keys()
    assert len(before) == 6
    server.answered.clear()
    assert runner.invoke(app, [*args, "--resume"]).exit_code == 0
    after = server.answered_keys()
    assert not set(before) & set(after) and len(before) + len(after) == total


def test_the_cache_keeps_each_answer_as_it_comes(server, norms, tmp_path, whole):
    """Killed after 5 answers with --cache: a new run (not a resume) into another directory
    sends none of the 5 again."""
    _, total = whole
    cache = tmp_path / "cache"
    first = [*run_args(server, norms, tmp_path / "a"), "--cache", str(cache)]
    server.answered.clear()
    assert probe(first, TACIT_FAULT="answers:kept@5").returncode == -signal.SIGKILL
    before = server.answered_keys()
    server.answered.clear()
    again = [*run_args(server, norms, tmp_path / "b"), "--cache", str(cache)]
    assert runner.invoke(app, again).exit_code == 0
    after = server.answered_keys()
    assert not set(before) & set(after) and len(before) + len(after) == total


MALFORMED = '{"model": "tiny", "choices": [{"index": "zero", "message": {"content": "fur"}}]}'
BEHAVIOURS = {
    # fault: what the run ends in (a complete run, or one line that says this)
    "500": "500 Internal Server Error: fault injected",
    "429": "429",  # retries=0: given up on at once
    "drop": "the connection was dropped",
    "sleep:8": "no whole answer within 3 s (timeout=)",
    "drip:0.2": "no whole answer within 3 s (timeout=)",
    "huge:10000000": None,
    "lines:400000": None,
    "model:gpt-evil-0": None,
    f"body:{MALFORMED}": "the answer's choices[0].index is 'zero'",
    "body:<html>oops</html>": "with no JSON",
    'body:{"choices": [], "usage": {"prompt_tokens": 1e400}}': "usage.prompt_tokens is inf",
    "empty": None,
    "missing": None,
    "refusal": None,
}


@pytest.mark.parametrize("fault", list(BEHAVIOURS))
def test_every_behaviour_ends_in_one_line_or_a_complete_run(fault, server, norms, tmp_path):
    """A hostile server's every behaviour, on the third request of a run by generation: one
    line naming --resume (what was answered is kept), or a complete run that counts it."""
    out = tmp_path / "run"
    args = run_args(server, norms, out, timeout=3)  # enough to send 5 MB on a busy machine
    server.faults.clear()
    server.faults.extend(["", "", fault])
    started = time.monotonic()
    try:
        result = runner.invoke(app, args)
    finally:
        server.faults.clear()
    assert time.monotonic() - started < 30
    said = BEHAVIOURS[fault]
    if said is None:
        assert result.exit_code == 0, result.output
        assert (out / "manifest.json").is_file() and (out / "answers.csv").stat().st_size < 1e6
        return
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert said in line and "2 answered request(s) kept" in line, line
    assert "Traceback" not in result.output
