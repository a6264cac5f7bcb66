"""No credential is written or shown (issue 57): a run by generation made with a user name,
a password and a query in its base_url (sent to the tests' server as basic authentication and
a query) and every command that reads it back; every file they write (the run directory, the
cache, the checkpoint of an interrupted run, the report, the export) and everything they print
is scanned for the secrets. label= names a model in every table, its whole text (redacted)
beside it in the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import write_norms
from support_server import TestServer
from typer.testing import CliRunner

from tacit.cli import app

pytestmark = pytest.mark.slow  # whole runs and every reader of them

SECRETS = ("alice", "s3cret-pw", "q-secret-7")
runner = CliRunner()


def said(result) -> str:
    return result.stdout + result.stderr


def test_no_credential_in_any_file_or_output(tmp_path):
    norms = write_norms(tmp_path / "norms.dat")
    out, cache = tmp_path / "runs" / "run", tmp_path / "cache"
    printed = []
    with TestServer(None, basic=("alice", "s3cret-pw")) as server:
        url = server.url.replace("http://", "http://alice:s3cret-pw@") + "?deployment=q-secret-7"
        plain, labelled = server.spec(url=url, retries=0), server.spec(url=url, label="Tiny")
        args = ["elicit", "-m", plain, "-m", labelled, "--norms", str(norms), "--by", "generation"]
        args += ["--cache", str(cache), "--out", str(out)]
        # a failure after 3 answers (its checkpoint scanned below, kept aside), the resume,
        # and a resume refused for other options
        server.fail_after = server.completions + 3
        stopped = runner.invoke(app, args)
        server.fail_after = None
        assert stopped.exit_code == 1 and "answered request(s) kept" in stopped.stderr
        printed.append(said(stopped))
        kept = {p.name: p.read_bytes() for p in (out / ".partial").iterdir()}
        assert any(name.endswith("-answers.jsonl") for name in kept)
        (tmp_path / "kept").mkdir()
        for name, data in kept.items():
            (tmp_path / "kept" / name).write_bytes(data)
        done = runner.invoke(app, [*args, "--resume"])
        assert done.exit_code == 0, done.output
        printed.append(said(done))
        refused = runner.invoke(app, [*args, "--resume", "--max-tokens", "9"])
        assert refused.exit_code == 1
        printed.append(said(refused))
        assert len(server.answered) > 0 and all(p.endswith("q-secret-7") for p in server.paths)
    for command in (
        ["table", str(out)],
        ["table", str(out), "--format", "csv"],
        ["leaderboard", str(out.parent)],
        ["compare", str(out), str(out)],
        ["runs", str(out.parent)],
        ["report", str(out), "--out", str(tmp_path / "report.html")],
        ["export", str(out), "--out", str(tmp_path / "lm-eval")],
    ):
        result = runner.invoke(app, command, env={"COLUMNS": "200"})
        assert result.exit_code == 0, (command, result.output)
        printed.append(said(result))
    text = "\n".join(printed)
    assert "Tiny" in text and "base_url=http://127.0.0.1" in text
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "norms.dat"]
    assert len(files) > 10
    for secret in SECRETS:
        assert secret not in text, secret
        for path in files:
            assert secret.encode() not in path.read_bytes(), (secret, path)
    manifest = json.loads((out / "manifest.json").read_text())
    names = [m["name"] for m in manifest["models"]]
    assert names == [f"tiny,base_url={server.url},retries=0", "Tiny"]
    assert manifest["models"][1]["text"] == f"tiny,base_url={server.url},label=Tiny"
    assert "ran out of device memory" not in text


def test_the_served_model_is_noted_where_it_is_not_the_one_asked_for(tmp_path):
    norms = write_norms(tmp_path / "norms.dat")
    with TestServer(None) as server:
        server.faults.extend(["model:gpt-evil-0"] * 3)
        args = ["elicit", "-m", server.spec(concurrency=1), "--norms", str(norms)]
        done = runner.invoke(app, [*args, "--by", "generation", "--out", str(tmp_path / "r")])
    assert done.exit_code == 0, done.output
    assert "the server's answers named gpt-evil-0 (3 answer(s)), not tiny" in done.stderr
    record = json.loads((tmp_path / "r" / "manifest.json").read_text())["models"][0]
    assert record["server"]["answered_as"]["gpt-evil-0"] == 3


def test_two_models_with_one_label_are_refused(tmp_path):
    result = runner.invoke(
        app, ["retrieve", "-m", "a,label=x", "-m", "b,label=x", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 1
    assert "are both named 'x' (label=): give each model a label of its own" in result.stderr
    assert not Path(tmp_path / "r").exists()
