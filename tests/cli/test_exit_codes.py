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


def test_an_option_of_another_command_says_where_it_goes(monkeypatch, capsys):
    """Issue 47: `probe --limit 2 elicit ...` said "No such option" and nothing of where the
    option goes; `probe retrieve --prefix-ablation` suggested --ablation, not that it is
    elicit's."""
    status, _, err = probe(monkeypatch, capsys, "--limit", "2", "elicit", "-m", "x")
    assert status == 1
    assert err == (
        "error: --limit is an option of the probe commands: put it after the command, e.g. "
        "`probe elicit --limit 2 ...`\n"
    )
    status, _, err = probe(monkeypatch, capsys, "retrieve", "-m", "x", "--prefix-ablation")
    assert status == 1
    assert err == (
        "error: No such option: --prefix-ablation: it is an option of `probe elicit`, not of "
        "`probe retrieve` (see `probe retrieve --help`)\n"
    )
    assert "--ablation" not in err.replace("--prefix-ablation", "")
    status, _, err = probe(monkeypatch, capsys, "retrieve", "-m", "x", "--modle", "y")
    assert "No such option: --modle" in err and "it is an option of" not in err


def test_the_model_help_lists_every_loading_option(monkeypatch, capsys):
    """`--model`'s help listed none of gguf_file, chat_template, start_token: it lists what the
    families declare, on every command that takes models, and the API says the same."""
    import tacit
    from tacit.models.families import loading_options

    declared = loading_options()
    assert {"gguf_file", "chat_template", "start_token", "system", "base_url"} <= set(declared)
    for command in ("retrieve", "elicit", "vocab", "items"):
        _, out, _ = probe(monkeypatch, capsys, command, "--help")
        said = "".join(out.replace("│", "").split())
        for key in declared:
            assert key in said, (command, key)
    assert all(key in " ".join(tacit.retrieve.__doc__.split()) for key in declared)
