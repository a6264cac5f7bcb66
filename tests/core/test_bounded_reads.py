"""Bounded reads of every file a user or a run directory hands in (issue 57): a FIFO, a device
(/dev/zero behind a link) and a socket are refused at once, in one line, before a byte is read
(a FIFO used to hang `probe leaderboard`, /dev/zero as manifest.json was read until the
process was killed for memory); a file's size is checked before it is read; norms and
templates are checked at their first lines before they are read whole, so that a 2 GB sparse
file costs no memory. The smaller refusals beside them: a `.lock` that is a link, a
checkpoint of pickles alone, a resume whose model text differs late in the text."""

from __future__ import annotations

import os
import pickle
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import write_norms
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.core.files import read_input, read_utf8, regular_file
from tacit.core.locks import file_lock
from tacit.core.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX's")


def not_regular(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "manifest.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    return path


@posix
@pytest.mark.parametrize(
    ("kind", "said"),
    [("fifo", "a FIFO (named pipe)"), ("/dev/zero", "a character device"), ("socket", "a socket")],
)
def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path, kind, said):
    path = not_regular(tmp_path, kind)
    started = time.monotonic()
    for read in (read_input, read_manifest, lambda p: read_utf8(p, "--templates x")):
        with pytest.raises(TacitError, match=re.escape(f"{said}, not a regular file")) as refused:
            read(path)
        assert "\n" not in str(refused.value)
    with pytest.raises(TacitError, match=re.escape(said)):
        regular_file(path)
    assert time.monotonic() - started < 1


@posix
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("command", [["leaderboard"], ["table"], ["runs"], ["report"]])
def test_readers_of_runs_refuse_a_manifest_that_is_no_file_in_a_second(tmp_path, kind, command):
    run = tmp_path / "runs" / "run"
    run.mkdir(parents=True)
    not_regular(run, kind)
    where = str(run.parent if command[0] in ("leaderboard", "runs") else run)
    started = time.monotonic()
    result = runner.invoke(app, [*command, where])
    assert time.monotonic() - started < 1, command
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output


def test_a_file_over_the_bound_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(2 << 20)
    with pytest.raises(TacitError, match="2,097,152 bytes, more than the 1,048,576 tacit reads"):
        read_input(path, limit=1 << 20)


def test_a_text_file_is_checked_at_its_first_lines(tmp_path):
    path = tmp_path / "templates.jsonl"
    calls = []
    with open(path, "wb") as handle:
        handle.truncate(64 << 20)  # NULs: refused at line 1, before the rest is read
    with pytest.raises(TacitError, match=r"line 1: a control character, U\+0000"):
        read_input(path, head=lambda first: calls.append(len(first)) or read_utf8(path, "x"))
    assert calls == [1 << 16]


@pytest.mark.slow
@pytest.mark.parametrize("size", [2 << 30, 900 << 20])
@pytest.mark.parametrize("reader", ["norms", "templates"])
def test_memory_stays_flat_on_a_sparse_file(tmp_path, size, reader):
    """A 2 GB sparse file (refused by its size) and a 900 MB one (refused at its first line),
    as norms and as templates: one line each, peak memory of the whole process (Python,
    pandas and tacit imported) under 300 MB; it was 4.3 GB."""
    path = tmp_path / "sparse"
    with open(path, "wb") as handle:
        handle.truncate(size)
    read = (
        "from tacit.norms.reader import read_norms as read"
        if reader == "norms"
        else "from tacit.templates.reading import read_templates as read"
    )
    code = (
        f"from tacit.core.errors import TacitError\n{read}\n"
        f"try:\n    read({str(path)!r})\nexcept TacitError as error:\n    print(error)\n"
        # this process's own peak (VmHWM; getrusage's ru_maxrss keeps the parent's across exec)
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    said, peak = done.stdout.strip().splitlines()
    assert ("bytes, more than" if size > 1 << 30 else "line 1: a control character") in said
    assert int(peak) // 1024 < 300, f"peak {int(peak) // 1024} MB"


def test_a_lock_file_that_is_a_link_is_refused_with_advice(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / ".lock").symlink_to(target)
    said = r"\.lock: a link to .*elsewhere.*remove it"
    with (
        pytest.raises(TacitError, match=said) as refused,
        file_lock(tmp_path / ".lock", "the run directory", wait=0),
    ):
        pass
    assert "writable" not in str(refused.value)


def test_a_checkpoint_of_pickles_alone_is_one_line(tmp_path):
    norms = write_norms(tmp_path / "norms.dat")
    out = tmp_path / "run"
    (out / ".partial").mkdir(parents=True)
    for name in ("plan.pkl", "0-0.pkl", "0-model.pkl"):
        (out / ".partial" / name).write_bytes(pickle.dumps({"a": 1}))
    args = ["retrieve", "-m", "some-model", "--norms", str(norms), "--out", str(out)]
    for extra in ([], ["--resume"]):
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 1 and result.exception is not None
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error: ")


def test_a_resume_refusal_shows_where_the_model_text_differs():
    from tacit.engine.checkpoint import _differences

    long = "some-org/a-model-with-a-long-name,base_url=http://127.0.0.1:8000/v1,timeout="
    said = _differences({"models": [long + "30"]}, {"models": [long + "60"]})
    assert said == "models ...timeout=30 (here ...timeout=60)", said
