"""What a run by generation shows of itself (issue 60's new user's findings): `system=` taken
without `chat_template=true` (generation writes every chat with the template) and written in
messages.jsonl as sent; the progress bar says it asks."""

from __future__ import annotations

import json

import pytest
from support import with_chat_template
from typer.testing import CliRunner

from tacit.cli import app

runner = CliRunner()


@pytest.mark.slow
def test_a_system_message_is_taken_and_written_as_sent(tiny_gpt2, toy_norms_path, tmp_path):
    chat = with_chat_template(tiny_gpt2, tmp_path / "chat")
    out = tmp_path / "run"
    args = ["elicit", "--by", "generation", "-m", f"{chat},system=Be brief.", "--norms"]
    args += [toy_norms_path, "--relation", "has", "--max-tokens", "4", "--limit", "1"]
    result = runner.invoke(app, [str(a) for a in [*args, "--out", out]])
    assert result.exit_code == 0, result.output
    assert "asking " in result.stderr and "scoring " not in result.stderr
    (line,) = (out / "messages.jsonl").read_text().splitlines()
    sent = json.loads(line)["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[1]["role"] == "user"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"][0]["generation_requests"] == 1
