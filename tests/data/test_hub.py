"""The Hugging Face hub without a network (tacit.hub.access): asked once, briefly; a model in
the hub's cache then loads from it, one that is not is one line naming the option that named
it, the cache and HF_HUB_OFFLINE=1; per-model revisions come from the cache too. No test here
reaches the internet: the hub is a local socket that hangs up (or nothing at all)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import huggingface_hub.constants
import numpy as np
import pytest
from support import save_tiny_bert, tiny_bert_tokenizer

import tacit
from tacit.core.errors import TacitError
from tacit.hub import access as hub

COMMITS = {"main": "0" * 39 + "1", "step1": "0" * 39 + "2"}


class HangingUpHub:
    """A hub endpoint that accepts each connection and closes it at once, counting them."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.connections = 0
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def hanging_hub(monkeypatch):
    server = HangingUpHub()
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub, "_ANSWERS", {})
    monkeypatch.setattr(hub, "_WARNED", [])
    yield server
    server.close()


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory) -> Path:
    """A Hugging Face cache holding `someone/tiny-bert` at two revisions (main and the branch
    step1, different weights), laid out as the hub's downloads leave it."""
    cache = tmp_path_factory.mktemp("hf-cache")
    repo = cache / "models--someone--tiny-bert"
    (repo / "refs").mkdir(parents=True)
    for seed, (ref, commit) in enumerate(COMMITS.items()):
        snapshot = repo / "snapshots" / commit
        snapshot.mkdir(parents=True)
        save_tiny_bert(snapshot, tiny_bert_tokenizer(snapshot), seed=seed)
        (repo / "refs" / ref).write_text(commit)
    return cache


def test_an_unreachable_hub_is_asked_once_then_one_line(
    hanging_hub, toy_norms_path, tmp_path, monkeypatch, tiny_bert
):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(TacitError) as raised:
        tacit.retrieve(["someone/not-cached"], norms=toy_norms_path, quiet=True)
    message = str(raised.value)
    assert message.startswith("models someone/not-cached: not in the Hugging Face cache")
    assert "cannot be reached" in message and "HF_HUB_OFFLINE=1" in message
    # one short attempt, no retries (huggingface_hub itself may ask once more, for the
    # registry its user-agent header reads, once per process)
    assert 1 <= hanging_hub.connections <= 2
    asked = hanging_hub.connections
    with pytest.raises(TacitError, match="vocab_models bert-base-cased: not in the Hugging Face"):
        tacit.retrieve([tiny_bert], norms=toy_norms_path, vocab_models=["bert-base-cased"])
    assert hanging_hub.connections == asked  # asked once per process


def test_a_cached_model_loads_when_the_hub_does_not_answer(
    hanging_hub, hub_cache, monkeypatch, toy_norms_path
):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache))
    with pytest.warns(UserWarning, match="cannot be reached.*read from its cache"):
        result = tacit.retrieve(
            ["someone/tiny-bert"], norms=toy_norms_path, max_props=2, quiet=True
        )
    assert result.manifest["models"][0]["resolved_revision"] == COMMITS["main"]
    assert 1 <= hanging_hub.connections <= 2


def test_offline_mode_asks_nothing(hanging_hub, hub_cache, monkeypatch, toy_norms_path):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    result = tacit.retrieve(["someone/tiny-bert"], norms=toy_norms_path, max_props=1, quiet=True)
    assert len(result.summary) == 1
    with pytest.raises(TacitError, match="not in the Hugging Face cache .*HF_HUB_OFFLINE=1 is set"):
        tacit.retrieve(["someone/other"], norms=toy_norms_path)
    assert hanging_hub.connections == 0


@pytest.mark.slow
def test_each_model_its_own_revision_in_one_run(hub_cache, monkeypatch, toy_norms_path):
    """Two revisions of one model side by side (a training run's checkpoints), read offline."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    models = ["someone/tiny-bert", tacit.ModelSpec("someone/tiny-bert", revision="step1")]
    result = tacit.retrieve(models, norms=toy_norms_path, max_props=2, quiet=True)
    records = {r["name"]: r for r in result.manifest["models"]}
    assert set(records) == {"someone/tiny-bert", "someone/tiny-bert,revision=step1"}
    assert records["someone/tiny-bert,revision=step1"]["resolved_revision"] == COMMITS["step1"]
    assert records["someone/tiny-bert,revision=step1"]["source"] == "someone/tiny-bert"
    mrr = result.summary.groupby("model")["mrr"].mean()
    assert not np.isclose(mrr["someone/tiny-bert"], mrr["someone/tiny-bert,revision=step1"])


@pytest.mark.slow
def test_the_command_fails_fast_with_one_line_and_leaves_no_folder(toy_norms_path, tmp_path):
    """The whole command, as a user without a network runs it: exit 1, one line, no retries,
    and no empty results/retrieve/ left behind."""
    server = HangingUpHub()
    env = {**os.environ, "HF_ENDPOINT": server.url, "HF_HOME": str(tmp_path / "hf")}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from tacit.console import run; run()",
            "retrieve",
            "-q",
            "--model",
            "roberta-base",
            "--norms",
            str(toy_norms_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    server.close()
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: --model roberta-base: not in the"), lines
    assert "HF_HUB_OFFLINE=1" in lines[0] and "Retrying" not in done.stderr
    assert server.connections <= 2  # ours, and huggingface_hub's user-agent registry (once)
    assert not (tmp_path / "results").exists()
