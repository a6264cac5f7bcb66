"""Fault injection, the norms registry (issue 28, item 3): one owner at a time. Two installs at
once both land, a holder that keeps the registry too long gets the waiter refused in one line
naming its process id, the same name with another file is replaced with a note, and a registry
that cannot be written or read is one line, never a traceback or a half-written file."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import fails_cleanly, write_norms
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core import files, locks
from tacit.core.errors import TacitError
from tacit.core.locks import file_lock
from tacit.core.paths import config_dir
from tacit.norms import installed_norms, store

# `probe norms install ...` in another process whose registry read-modify-write is slowed down:
# it says when it holds the registry (a marker file), then keeps it for `hold` seconds.
SLOW_INSTALL = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import tacit.norms.store as store
    marker, hold = Path(sys.argv[1]), float(sys.argv[2])
    read = store._read_registry
    def slow():
        registry = read()
        marker.write_text("in")
        time.sleep(hold)
        return registry
    store._read_registry = slow
    from tacit.cli import app
    app(["norms", "install", *sys.argv[3:]], prog_name="probe")
    """
)


def registry() -> dict:
    return json.loads((config_dir() / "norms.json").read_text())


def start_slow_install(tmp_path: Path, hold: float, *args: object) -> subprocess.Popen:
    """A slowed-down install in another process, returned once it holds the registry."""
    marker = tmp_path / f"holding-{time.monotonic_ns()}"
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_INSTALL, str(marker), str(hold), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the slow install never took the registry"
        time.sleep(0.02)
    return process


def probe(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tacit.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


@pytest.mark.slow
def test_two_installs_at_once_both_land(tmp_path):
    # before: both read the registry, then each wrote it back with its own name only: one of
    # the two names was lost (2 rounds of 5 with real processes); now the second waits
    first, second = write_norms(tmp_path / "one.dat"), write_norms(tmp_path / "two.dat")
    slow = start_slow_install(tmp_path, 1.5, "one", first)
    plain = probe("norms", "install", "two", second)  # reads while `one` holds the registry
    out, err = slow.communicate(timeout=120)
    assert slow.returncode == 0, err
    assert plain.returncode == 0, plain.stderr
    assert sorted(registry()["norms"]) == ["one", "two"]
    assert registry()["default"] == "one"


@pytest.mark.slow
def test_many_real_installs_at_once_all_land(tmp_path):
    paths = [write_norms(tmp_path / f"set{n}.dat") for n in range(4)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tacit.cli", "norms", "install", f"set{n}", path],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, path in enumerate(paths)
    ]
    errors = [p.communicate(timeout=120)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0, 0], errors
    assert sorted(registry()["norms"]) == ["set0", "set1", "set2", "set3"]


@pytest.mark.slow
def test_a_holder_that_keeps_the_registry_too_long_is_named(tmp_path, monkeypatch):
    first, second = write_norms(tmp_path / "one.dat"), write_norms(tmp_path / "two.dat")
    slow = start_slow_install(tmp_path, 5, "one", first)
    try:
        monkeypatch.setattr(store, "REGISTRY_WAIT", 0.3)
        line = fails_cleanly(["norms", "install", "two", second], f"process {slow.pid}")
        assert "the norms registry is in use" in line and "norms.json.lock" in line
    finally:
        slow.communicate(timeout=120)
    assert slow.returncode == 0
    assert list(registry()["norms"]) == ["one"]  # the refused install changed nothing


def test_the_same_name_with_another_file_is_replaced_with_a_note(tmp_path):
    first, second = write_norms(tmp_path / "a.dat"), write_norms(tmp_path / "b.dat")
    assert CliRunner().invoke(app, ["norms", "install", "lab", str(first)]).exit_code == 0
    result = CliRunner().invoke(app, ["norms", "install", "lab", str(second)])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"note: 'lab' named {first}; it names {second} now"
    assert [(e.name, e.path) for e in installed_norms()] == [("lab", second)]
    again = CliRunner().invoke(app, ["norms", "install", "lab", str(second)])
    assert again.exit_code == 0 and again.stderr == ""  # the same file again: nothing to say


def test_the_same_name_installed_by_another_install_meanwhile(tmp_path, monkeypatch):
    # before: `StopIteration` traceback: after installing, the command looked its own file up
    # in the registry, where another install had replaced it under the same name meanwhile
    first, second = write_norms(tmp_path / "a.dat"), write_norms(tmp_path / "b.dat")
    register = store.register_norms

    def then_another_install(*args, **kwargs):
        done = register(*args, **kwargs)
        register(second, "lab")  # as another process would, between install and report
        return done

    monkeypatch.setattr(store, "register_norms", then_another_install)
    result = CliRunner().invoke(app, ["norms", "install", "lab", str(first)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith(
        "installed as 'lab' (the default: runs without "
        "--norms or $TACIT_NORMS use it): later runs take "
        "--norms lab"
    )
    assert [(e.name, e.path) for e in installed_norms()] == [("lab", second)]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_registry_that_cannot_be_written(tmp_path, monkeypatch, code):
    path = write_norms(tmp_path / "norms.dat")
    assert CliRunner().invoke(app, ["norms", "install", "one", str(path)]).exit_code == 0
    before = (config_dir() / "norms.json").read_bytes()

    def refused(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(files, "_stage", refused)  # writing the registry's new version fails
    line = fails_cleanly(["norms", "install", "two", path], os.strerror(code))
    assert str(config_dir() / "norms.json") in line and "TACIT_CONFIG_DIR" in line
    assert (config_dir() / "norms.json").read_bytes() == before  # earlier installs intact
    assert sorted(p.name for p in config_dir().iterdir()) == ["norms.json", "norms.json.lock"]


def test_a_read_only_config_dir(tmp_path):
    path = write_norms(tmp_path / "norms.dat")
    assert CliRunner().invoke(app, ["norms", "install", "one", str(path)]).exit_code == 0
    before = (config_dir() / "norms.json").read_bytes()
    config_dir().chmod(0o555)
    try:
        if os.access(config_dir(), os.W_OK):
            pytest.skip("running as root: a read-only directory can still be written")
        line = fails_cleanly(["norms", "install", "two", path], "Permission denied")
        assert str(config_dir()) in line
    finally:
        config_dir().chmod(0o755)
    assert (config_dir() / "norms.json").read_bytes() == before


def test_a_config_dir_that_cannot_be_made(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TACIT_CONFIG_DIR", str(blocker / "config"))
    path = write_norms(tmp_path / "norms.dat")
    line = fails_cleanly(["norms", "install", path], "cannot remember norms there")
    assert str(blocker / "config" / "norms.json") in line


def test_the_lock_names_its_holder_and_is_released(tmp_path):
    lock = tmp_path / "thing.lock"
    with file_lock(lock, "the thing"):
        assert locks.holder(lock) == os.getpid()
        started = time.monotonic()
        # another open file is another owner, even in the same process
        with pytest.raises(TacitError) as refused, file_lock(lock, "the thing", wait=0.2):
            pass
        assert time.monotonic() - started >= 0.2
        assert str(refused.value) == (
            f"the thing is in use by process {os.getpid()} (lock file {lock}, waited 0.2 s); "
            "let it finish, then try again"
        )
    assert locks.holder(lock) is None and lock.exists()
    with file_lock(lock, "the thing", wait=0):
        pass


def test_the_lock_holds_where_fcntl_is_missing(tmp_path, monkeypatch):
    # before: without fcntl (Windows), file_lock locked nothing: two owners at once. Now the
    # lock is the filelock package's, which locks on every system
    import filelock

    monkeypatch.setattr(locks, "fcntl", None, raising=False)
    lock = tmp_path / "thing.lock"
    with file_lock(lock, "the thing"):
        with (
            pytest.raises(TacitError, match=f"in use by process {os.getpid()} "),
            file_lock(lock, "the thing", wait=0),
        ):
            pass
        with pytest.raises(filelock.Timeout):  # another program's filelock is kept out too
            filelock.FileLock(lock, timeout=0).acquire()
        assert locks.holder(lock) == os.getpid()  # a waiter did not erase the owner's id
    with filelock.FileLock(lock, timeout=0):  # and is let in once the lock is released
        pass


def test_a_lock_is_released_when_its_holder_dies(tmp_path):
    lock = tmp_path / "thing.lock"
    code = (
        "import sys, time; from tacit.core.locks import file_lock\n"
        "with file_lock(sys.argv[1], 'x'):\n    print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    with pytest.raises(TacitError, match=f"process {holder.pid}"), file_lock(lock, "x", wait=0):
        pass
    holder.kill()
    holder.wait()
    with file_lock(lock, "x", wait=5):  # no stale lock to clear by hand
        assert locks.holder(lock) == os.getpid()


def test_a_lock_file_that_cannot_be_made(tmp_path):
    missing = tmp_path / "missing" / "thing.lock"
    with pytest.raises(TacitError, match="cannot create the lock file"), file_lock(missing, "x"):
        pass


@pytest.mark.parametrize("content", [b'{"default": "one", "norms": {"one": {"pa', b"\x00" * 64])
def test_a_damaged_registry_says_how_to_start_again(tmp_path, content):
    # before: "run `probe norms install PATH` again", which read the same registry and failed
    path = write_norms(tmp_path / "norms.dat")
    registry = config_dir() / "norms.json"
    registry.parent.mkdir(parents=True)
    registry.write_bytes(content)
    line = fails_cleanly(["norms", "install", "one", path], f"{registry}: unreadable")
    assert "move it away, then run `probe norms install [NAME] PATH` again" in line
    assert registry.read_bytes() == content  # left for the user to look at
    registry.rename(tmp_path / "old-registry.json")
    assert CliRunner().invoke(app, ["norms", "install", "one", str(path)]).exit_code == 0


def test_an_installed_norms_file_that_cannot_be_read(tmp_path, monkeypatch):
    path = write_norms(tmp_path / "norms.dat")
    assert CliRunner().invoke(app, ["norms", "install", "one", str(path)]).exit_code == 0

    def refused(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(store, "file_sha256", refused)  # as chmod 0 does for a user not root
    fails_cleanly(["norms", "show", "--norms", "one"], f"{path} (one): cannot read it")
