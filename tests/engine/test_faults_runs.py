"""Faults in a run, reproduced so that they stay fixed (issue 28): a process killed (`kill -9`,
at a phase reached by a tacit.core.faults point) while scoring, while saving, or after saving;
a full disk at the checkpoint and at the final save; two processes on one run directory; a
data-parallel process lost after a chunk was kept; Ctrl-C during the final renames.

Each ends the same way: one line, the right exit status, nothing half-written, and `--resume`
writing files byte-identical to an uninterrupted run's.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from support import probe_in_one_thread, run_as_two_ranks
from typer.testing import CliRunner

from tacit.cli import app

pytestmark = pytest.mark.faults  # processes killed and resumed: the faults tier (slow)

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
TIMING = ("started", "finished", "command", "resumed")


def probe(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m tacit.cli ARGS` in its own process (so it can be killed), one thread."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **env}
    return subprocess.run(
        [sys.executable, "-m", "tacit.cli", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_args(models: list[str], norms: Path, out: Path) -> list[str]:
    return [
        "retrieve",
        *(a for m in models for a in ("-m", m)),
        "--norms",
        str(norms),
        "--max-props",
        "3",
        "-q",
        "--out",
        str(out),
    ]


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
            for record in manifest.get("models", []):  # seconds: how long, not what
                record.pop("timing", None)
            data = json.dumps(manifest, sort_keys=True).encode()
        found[path.name] = data
    return found


@pytest.fixture(scope="module")
def uninterrupted(tiny_bert, tiny_roberta, toy_norms_path, tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("whole") / "run"
    done = probe_in_one_thread(run_args([tiny_bert, tiny_roberta], toy_norms_path, out))
    assert done.exit_code == 0, done.output
    return files_of(out)


PHASES = {
    "checkpoint:saved@1": "killed while scoring, the first model's record kept, no chunk yet",
    "checkpoint:saved@2": "killed while scoring, the first model's first chunk kept (the resumed "
    "manifest used to lose that model's device, class and batch size: its record was kept only "
    "at the model's end)",
    "save:staged@2": "killed while the final save wrote its files under temporary names",
    "save:renamed@2": "killed between the final renames (tables written, no manifest yet)",
    "save:written": "killed after the final save, before the checkpoint went",
}


@pytest.mark.parametrize("phase", list(PHASES))
def test_a_run_killed_at_any_phase_resumes_to_identical_files(
    phase, tiny_bert, tiny_roberta, toy_norms_path, tmp_path, uninterrupted
):
    out = tmp_path / "run"
    args = run_args([tiny_bert, tiny_roberta], toy_norms_path, out)
    killed = probe(args, TACIT_FAULT=phase)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    listed = runner.invoke(app, ["runs", str(tmp_path)], env={"COLUMNS": "200"})  # one line a run
    state = "complete" if phase == "save:written" else "interrupted (--resume)"
    assert state in listed.stdout, (phase, listed.stdout)
    # the refusal and the resume in this process (the kill is what needs a process of its own)
    if state != "complete":
        refused = probe_in_one_thread(args)  # the plain command does not overwrite it
        assert refused.exit_code == 1 and "holds an interrupted run: --resume" in refused.stderr
    resumed = probe_in_one_thread([*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert files_of(out) == uninterrupted
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_at_the_final_save_keeps_the_scores_to_resume(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    import tacit.core.files

    out = tmp_path / "run"
    args = run_args([tiny_bert], toy_norms_path, out)
    real = tacit.core.files._stage

    def full_for_results(path, data):
        if path.parent == out:  # the run's files; the checkpoint's chunks still fit
            disk_full()
        return real(path, data)

    with monkeypatch.context() as patch:
        patch.setattr(tacit.core.files, "_stage", full_for_results)
        failed = runner.invoke(app, args)
    assert failed.exit_code == 1
    (line,) = failed.stderr.strip().splitlines()
    assert line.startswith(f"error: {out}: cannot write the run's files there (No space left")
    assert line.endswith(f"the same command with --resume --out {out})")
    assert [p.name for p in out.iterdir()] == [".partial"]  # nothing half-written
    assert runner.invoke(app, [*args, "--resume"]).exit_code == 0
    assert (out / "manifest.json").is_file() and not (out / ".partial").exists()


def test_a_full_disk_at_the_first_checkpoint_write_is_one_line(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    import tacit.engine.checkpoint

    out = tmp_path / "run"
    monkeypatch.setattr(tacit.engine.checkpoint, "write_atomic", disk_full)
    failed = runner.invoke(app, run_args([tiny_bert], toy_norms_path, out))
    assert failed.exit_code == 1
    (line,) = failed.stderr.strip().splitlines()
    assert "cannot keep the run's checkpoint there (No space left on device)" in line
    assert not out.exists()  # nothing was scored: the directory it made is gone


def test_a_second_process_on_a_run_directory_is_refused(tiny_bert, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    slow = textwrap.dedent(f"""
        import time
        import tacit.models.masked
        def slow(self, *args, **kwargs):
            print("scoring", flush=True)
            time.sleep(60)
        tacit.models.masked.MaskedLMScorer.score_vocab = slow
        from tacit.console import run
        import sys
        sys.argv = ["probe", *{run_args([tiny_bert], toy_norms_path, out)!r}]
        run()
    """)
    first = subprocess.Popen(
        [sys.executable, "-c", slow], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert first.stdout.readline().strip() == "scoring"
        for second in (
            run_args([tiny_bert], toy_norms_path, out),
            [*run_args([tiny_bert], toy_norms_path, out), "--resume"],
        ):
            refused = runner.invoke(app, second)
            assert refused.exit_code == 1
            (line,) = refused.stderr.strip().splitlines()
            assert f"the run directory {out} is in use by process {first.pid}" in line
    finally:
        first.kill()
        first.communicate()
    assert (out / ".partial").is_dir()  # the first's checkpoint was never touched


def test_a_lost_process_keeps_what_was_gathered(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, uninterrupted
):
    """Rank 1 dies at its second gather (the second model's chunk), as torchrun's environment
    launches it: the main process says so in one line, keeps the first model's chunk and
    names the --resume command, which finishes the run (here in one process)."""
    out = tmp_path / "run"
    args = run_args([tiny_bert, tiny_roberta], toy_norms_path, out)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(29400 + os.getpid() % 500),
        "WORLD_SIZE": "2",
        "TACIT_DIST_TIMEOUT": "60",
        "TACIT_DIST_TEST_EXIT_RANK": "1@2",
    }
    processes, outputs = run_as_two_ranks(args, env)
    main = outputs[0][1].strip().splitlines()
    assert processes[0].returncode == 1 and processes[1].returncode == 3
    assert len(main) == 1 and "data-parallel run failed" in main[0], main
    assert f"--resume --out {out}" in main[0]
    assert probe([*args, "--resume"]).returncode == 0
    for name, data in files_of(out).items():
        if name.endswith(".csv"):  # padded with other rows in two processes: float tolerance
            continue
        if name == "manifest.json":
            continue  # the resumed run's processes differ
        assert data == uninterrupted[name], name


def test_ctrl_c_during_the_final_renames_is_held_until_they_are_done(tmp_path):
    """SIGINT delivered while write_files renames (from another thread, as a signal may be
    delivered to any thread of `probe`): every file lands, then the interruption comes."""
    import tacit.core.files

    real_replace = os.replace
    raised = []

    def replace_slowly(source, target):
        real_replace(source, target)
        if not raised:
            raised.append(1)
            thread = threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGINT))
            thread.start()
            thread.join()
            time.sleep(0.05)  # the handler would run here, between two renames

    files = {f"table{n}.csv": f"{n}\n" for n in range(5)}
    # `probe`'s handler, whatever this process started with: tests run from a background job
    # (`.ci/run &` in a script) start with SIGINT ignored, and the interruption was lost
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    tacit.core.files.os.replace = replace_slowly
    try:
        tacit.core.files.write_files(tmp_path, files)
    except KeyboardInterrupt:
        pass
    else:  # say what was there
        pytest.fail(
            f"no KeyboardInterrupt: SIGINT's handler was {handler!r} before the test and "
            f"{signal.getsignal(signal.SIGINT)!r} after, blocked here: "
            f"{sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))}, threads: "
            f"{[t.name for t in threading.enumerate()]}"
        )
    finally:
        tacit.core.files.os.replace = real_replace
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)  # all of them


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("[retrieve]\nmax_prop = 3\n", "[retrieve] 'max_prop' is not an option of retrieve"),
        ('[retrieve]\nmax_props = "ten"\n', "[retrieve] max_props 'ten': expected a whole number"),
        (
            '[elicit]\nrelations = { axis = [["has", "wings"]] }\n',
            "[elicit] relations 'wings': expected one of",
        ),
    ],
)
def test_a_sweep_file_is_checked_whole_before_any_cell_runs(table, message, tmp_path):
    """A misspelled option or a wrong type used to pass --dry-run and stop the sweep mid-grid
    with a message naming neither the table nor the cell."""
    grid = tmp_path / "grid.toml"
    grid.write_text(f'models = ["m1", "m2"]\n[prince]\n{table}')
    for dry in ([], ["--dry-run"]):
        result = runner.invoke(app, ["sweep", str(grid), "--out", str(tmp_path / "g"), *dry])
        assert result.exit_code == 1
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"error: {grid}: ") and message in line, line
    assert not (tmp_path / "g").exists()  # no cell ran
