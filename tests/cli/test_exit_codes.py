"""One exit-status rule for every user mistake (docs/getting-started.md, "Errors and exit
status"): the command-line parser's mistakes (an unknown option, a missing argument, a bad
value, an unknown command) are one `error:` line and exit status 1, as tacit's own are; help is
0; Ctrl-C is 130 (tests/cli/test_startup.py)."""

from __future__ import annotations

import sys

import pytest

from tacit.console import run


def probe(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["probe", *map(str, args)])
    with pytest.raises(SystemExit) as done:
        run()
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["retrieve", "--modle", "x"], "No such option: --modle"),
        (["retrieve"], "Missing option '--model'"),
        (["retrieve", "-m", "x", "--limit", "many"], "Invalid value for '--limit'"),
        (["retrieve", "-m", "x", "--norms"], "Option '--norms' requires an argument"),
        (["prince", "-m", "x", "--limit", "2"], "No such option: --limit"),
        (["no-such-command"], "No such command 'no-such-command'"),
        (["norms", "remove"], "Missing argument 'name'"),
    ],
)
def test_a_usage_mistake_is_one_line_and_exit_1(monkeypatch, capsys, args, message):
    status, out, err = probe(monkeypatch, capsys, *args)
    lines = err.strip().splitlines()
    assert status == 1, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err and "╭" not in err and not out


def test_tacits_own_mistakes_exit_1_the_same_way(monkeypatch, capsys, tiny_bert, tmp_path):
    status, _, err = probe(
        monkeypatch,
        capsys,
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        tmp_path / "missing.dat",
        "--batch-size",
        "0",
    )
    assert status == 1 and err.strip() == "error: --batch-size 0: must be at least 1"
    status, _, err = probe(
        monkeypatch, capsys, "retrieve", "-m", tiny_bert, "--norms", tmp_path / "missing.dat"
    )
    assert status == 1 and err.startswith("error: ") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [[], ["--help"], ["retrieve", "--help"], ["norms"]])
def test_help_is_not_a_mistake(monkeypatch, capsys, args):
    status, out, err = probe(monkeypatch, capsys, *args)
    assert status == 0 and "Usage" in out and not err.strip()
