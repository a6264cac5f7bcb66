"""Start-up: importing tacit and asking for help load no torch; Ctrl-C at any moment of a
run's start ends with one line and exit status 130."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# the interpreter's own start-up (site imports) comes before any of our code: the child says
# when it is past it, and the delays count from there
PROBE = [
    sys.executable,
    "-c",
    "import sys; print('started', file=sys.stderr, flush=True)\n"
    "from tacit.console import run; run()",
]


def _modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


HEAVY = {"torch", "transformers", "matplotlib", "sklearn"}


def test_import_tacit_loads_nothing_heavy():
    assert not HEAVY & _modules_after("import tacit")


def test_help_loads_nothing_heavy():
    code = (
        "from typer.testing import CliRunner\nfrom tacit.cli import app\n"
        "for args in ([], ['--help'], ['retrieve', '--help'], ['norms', 'show', '--help']):\n"
        "    assert CliRunner().invoke(app, args).exit_code in (0, 2)"
    )
    assert not HEAVY & _modules_after(code)


@pytest.mark.slow
def test_importing_the_module_entry_point_runs_nothing():
    """`import tacit.cli.__main__` (a tool walking every module) used to run `probe`: its usage
    on stdout, SystemExit, and Ctrl-C ignored in the importing process from then on (a later
    test's SIGINT was lost). `python -m tacit.cli` still runs it."""
    code = (  # as it was: a test run in the background starts with SIGINT ignored
        "import signal\nbefore = signal.getsignal(signal.SIGINT)\nimport tacit.cli.__main__\n"
        "assert signal.getsignal(signal.SIGINT) is before"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stdout, done.stdout + done.stderr
    ran = subprocess.run(
        [sys.executable, "-m", "tacit.cli", "--help"], capture_output=True, text=True
    )
    assert ran.returncode == 0 and "Usage: " in ran.stdout


def test_api_names_load_on_first_use():
    import tacit

    assert callable(tacit.retrieve) and tacit.RunOptions().batch_size == 32
    assert "retrieve" in dir(tacit) and tacit.__version__
    with pytest.raises(AttributeError):
        tacit.no_such_name  # noqa: B018


# `python -m tacit.cli` (what accelerate launch and torchrun run) imports the package first
MODULE = [
    sys.executable,
    "-c",
    "import sys; print('started', file=sys.stderr, flush=True)\n"
    "import runpy; runpy.run_module('tacit.cli', run_name='__main__', alter_sys=True)",
]
SIGNALS = {signal.SIGINT: (130, "Ctrl-C"), signal.SIGTERM: (143, "SIGTERM")}


def _wait_for_the_console_handler(process: subprocess.Popen[str]) -> None:
    """Until tacit.console's SIGTERM handler is installed in `process` (the first thing its
    `run()` does): Linux lists a process's caught signals in /proc/PID/status (SigCgt, a hex
    mask, signal N at bit N-1); elsewhere the "started" line is all there is to wait for."""
    status = Path(f"/proc/{process.pid}/status")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            lines = status.read_text().splitlines()
        except OSError:  # no /proc here, or the process is gone: nothing more to wait for
            return
        caught = next((line.split()[1] for line in lines if line.startswith("SigCgt:")), "0")
        if int(caught, 16) >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.001)
    if process.poll() is None:
        raise AssertionError("the console never installed its SIGTERM handler")


@pytest.mark.slow
@pytest.mark.parametrize("entry", ["probe", "python -m tacit.cli"])
@pytest.mark.parametrize("signum", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("delay", [0.02, 0.05, 0.4, 1.5, 3.0])
def test_an_interruption_during_start_up_is_one_line(
    delay, signum, entry, tiny_bert, toy_norms_path, tmp_path
):
    """Interrupted while importing, loading the tokenizer or the model: never a traceback, and
    never a death by the signal itself (SIGTERM used to kill a run still importing, and
    `python -m tacit.cli` imported the whole command line before any handler existed).

    The delays count from the moment the console's handler exists: before it, Python imports
    the two modules the console script names (tacit/__init__.py, tacit/console.py), and a
    signal there meets Python's own defaults (SIGTERM kills silently). No code of tacit's can
    run earlier; that window took 15 ms on a quiet machine and over 20 ms under load, where a
    SIGTERM sent 0.02 s after "started" killed the process with no line."""
    args = [
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        str(toy_norms_path),
        "-q",
        "--out",
        str(tmp_path / "run"),
    ]
    command = PROBE if entry == "probe" else MODULE
    process = subprocess.Popen([*command, *args], stderr=subprocess.PIPE, text=True)
    assert process.stderr.readline() == "started\n"
    _wait_for_the_console_handler(process)
    time.sleep(delay)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip(f"the run finished within {delay} s, before the interruption")
    code, name = SIGNALS[signum]
    assert process.returncode == code, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr
    assert len(lines) == 1 and lines[0] in (
        f"interrupted by {name}: no result files were written",  # before the run directory
        f"interrupted by {name}: nothing was scored yet, nothing to resume",
    ), stderr


@pytest.fixture()
def signals_as_a_new_process_has_them():
    """console.run() leaves SIGINT and SIGTERM ignored once its exit status is decided (so a
    signal during shutdown cannot change it): in a test worker that outlives it, the handlers
    are put back afterwards, and a test starts from a new process's (Ctrl-C raises)."""
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for each, handler in previous.items():
        signal.signal(each, handler)


@pytest.mark.usefixtures("signals_as_a_new_process_has_them")
def test_an_interruption_wrapped_in_another_error_is_still_one_line(monkeypatch, capsys):
    """Python 3.11 turns a SIGTERM or Ctrl-C raised while a class is created (a dataclass in
    torch's modules, imported on first use) into a RuntimeError, which transformers' lazy
    import wraps again: still the interruption's one line and exit status, not a traceback."""
    from tacit import console
    from tacit.core.errors import Terminated

    def wrapped(*args, **kwargs):
        try:
            raise Terminated()
        except Terminated as stop:
            raise RuntimeError("Error calling __set_name__") from stop

    monkeypatch.setattr("tacit.cli.commands.app", wrapped)
    with pytest.raises(SystemExit) as done:
        console.run()
    assert done.value.code == 143
    assert capsys.readouterr().err == "interrupted by SIGTERM: no result files were written\n"


@pytest.mark.usefixtures("signals_as_a_new_process_has_them")
@pytest.mark.parametrize("group", ["typer", "probe"])
@pytest.mark.parametrize(
    ("signum", "code", "name"), [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "Ctrl-C")]
)
def test_an_interruption_typer_turns_into_exit_130_keeps_its_name(
    signum, code, name, group, monkeypatch, capsys
):
    """typer ends a KeyboardInterrupt that reaches it (one that comes while the command line is
    parsed) as exit 130, and `probe`'s own group (tacit.cli.exits.ProbeGroup, which runs typer
    outside standalone mode) gets only that number back, the exception gone: a SIGTERM there
    was said as Ctrl-C and exit 130 (CI, SIGTERM at 0.4 s into `python -m tacit.cli`). The
    signal is really sent, so the console's own handler is the one that sees it."""
    import os

    import typer

    from tacit import console
    from tacit.cli.common import INTERRUPTION
    from tacit.cli.exits import ProbeGroup
    from tacit.core import errors

    tiny = typer.Typer(cls=ProbeGroup) if group == "probe" else typer.Typer()

    @tiny.command()
    def parse() -> None:
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the signal is handled before this ends

    @tiny.command()
    def other() -> None:  # two commands: `probe parse` is a group's command, as the app's are
        pass

    monkeypatch.setattr("tacit.cli.commands.app", tiny)
    monkeypatch.setattr(sys, "argv", ["probe", "parse"])
    monkeypatch.setitem(INTERRUPTION, "said", False)
    monkeypatch.setitem(errors.SIGTERM_SEEN, "seen", False)
    with pytest.raises(SystemExit) as done:
        console.run()
    assert done.value.code == code
    assert capsys.readouterr().err == f"interrupted by {name}: no result files were written\n"
