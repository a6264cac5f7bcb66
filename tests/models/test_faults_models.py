"""Fault injection, loading models and naming outputs (issue 28, part of item 4): a model file
cut short or garbled (an interrupted download, a full disk) and a name longer than the file
system allows are one line naming the path and what to do, exit 1, and leave no run directory
behind and earlier results as they were."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from support import fails_cleanly, real_roberta_tokenizer, tiny_roberta_tokenizer
from transformers import AutoModelForMaskedLM, AutoTokenizer
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.models.masked import MaskedLMScorer
from tacit.ranking import rank_targets

LONG = "x" * 300  # a name longer than the 255 bytes Linux file systems allow


def cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


DAMAGES = {
    "weights cut short": ("model.safetensors", cut),
    "weights header garbled": ("model.safetensors", lambda data: data[:8] + b"\0" * 52 + data[60:]),
    "weights of two bytes": ("model.safetensors", lambda data: data[:2]),
    "tokenizer cut short": ("tokenizer.json", cut),
    "config cut short": ("config.json", cut),
}


def damaged_copy(model: str, where: Path, name: str, damage) -> Path:
    copy = shutil.copytree(model, where)
    file = copy / name
    file.write_bytes(damage(file.read_bytes()))
    return copy


def retrieve(model: str | Path, norms: Path, out: Path, *extra: str) -> list[str]:
    return ["retrieve", "-m", str(model), "--norms", str(norms), "--out", str(out), "-q", *extra]


@pytest.mark.parametrize("case", list(DAMAGES))
def test_a_damaged_model_file_is_one_line(tiny_bert, toy_norms_path, tmp_path, case):
    # before: an 80-line `SafetensorError: Error while deserializing header` traceback (the
    # JSON files: one line that did not name the file)
    name, damage = DAMAGES[case]
    model = damaged_copy(tiny_bert, tmp_path / "model", name, damage)
    out = tmp_path / "run"
    line = fails_cleanly(retrieve(model, toy_norms_path, out), f"{model / name} is damaged")
    assert f"copy, download or save the model into {model} again" in line


def with_tokenizer(model: str, where: Path, tokenizer) -> Path:
    """A copy of the model with another tokenizer's files in place of its own."""
    copy = Path(shutil.copytree(model, where))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (copy / name).unlink(missing_ok=True)
    tokenizer.save_pretrained(copy)
    return copy


def test_a_tokenizer_that_does_not_fit_its_model_is_one_line(tiny_bert, toy_norms_path, tmp_path):
    # before: a 144-line traceback ending in `IndexError: index out of range in self` (the
    # embedding, at the first batch)
    model = with_tokenizer(tiny_bert, tmp_path / "model", tiny_roberta_tokenizer(tmp_path))
    largest = max(AutoTokenizer.from_pretrained(model).get_vocab().values())
    rows = AutoModelForMaskedLM.from_pretrained(tiny_bert).get_input_embeddings().num_embeddings
    assert largest >= rows
    out = tmp_path / "run"
    line = fails_cleanly(retrieve(model, toy_norms_path, out), f"{model}: its tokenizer's ids")
    assert f"go up to {largest:,}" in line and f"input embedding has {rows:,} rows" in line


def test_bert_with_robertas_tokenizer_files(real_bert, tmp_path):
    """The issue's case, on the real tokenizer files: 50,264 ids against BERT's 28,996 rows."""
    model = with_tokenizer(real_bert, tmp_path / "model", real_roberta_tokenizer())
    with pytest.raises(TacitError, match=r"up to 50,264 .* input embedding has 28,996 rows"):
        MaskedLMScorer(str(model), device="cpu")


def test_an_embedding_larger_than_the_tokenizer_is_fine(tiny_bert, tmp_path):
    """Real models often pad their embedding to a multiple of 64 or 128 rows."""
    padded = AutoModelForMaskedLM.from_pretrained(tiny_bert)
    padded.resize_token_embeddings(padded.get_input_embeddings().num_embeddings + 64)
    padded.save_pretrained(tmp_path / "padded")
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(tmp_path / "padded")
    prompts = ["A <mask> has fur.", "A knife is <mask>."]
    ids = np.arange(8, 20)
    plain = rank_targets(MaskedLMScorer(tiny_bert, device="cpu"), prompts, [0, 1], ids)
    wider = rank_targets(
        MaskedLMScorer(str(tmp_path / "padded"), device="cpu"), prompts, [0, 1], ids
    )
    np.testing.assert_array_equal(plain.rank, wider.rank)


@pytest.mark.slow
def test_a_torch_checkpoint_cut_short_is_one_line(tiny_bert, toy_norms_path, tmp_path):
    model = shutil.copytree(tiny_bert, tmp_path / "model")
    (model / "model.safetensors").unlink()
    torch.save(
        AutoModelForMaskedLM.from_pretrained(tiny_bert).state_dict(), model / "pytorch_model.bin"
    )
    assert CliRunner().invoke(app, retrieve(model, toy_norms_path, tmp_path / "ok")).exit_code == 0
    weights = model / "pytorch_model.bin"
    weights.write_bytes(cut(weights.read_bytes()))  # before: `[Errno 22] Invalid argument`
    fails_cleanly(
        retrieve(model, toy_norms_path, tmp_path / "run"),
        f"{weights} is damaged",
        out=tmp_path / "run",
    )


def test_a_failed_load_leaves_earlier_results_as_they_were(tiny_bert, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    assert CliRunner().invoke(app, retrieve(tiny_bert, toy_norms_path, out)).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    model = damaged_copy(tiny_bert, tmp_path / "model", "model.safetensors", cut)
    fails_cleanly(retrieve(model, toy_norms_path, out, "--overwrite"), "is damaged or cut short")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.slow
def test_a_damaged_model_in_the_hub_cache_names_its_folder(tiny_bert, toy_norms_path, tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    folder = tmp_path / "hub" / "models--org--tiny"
    snapshot = damaged_copy(tiny_bert, folder / "snapshots" / commit, "model.safetensors", cut)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "tacit.cli", *retrieve("org/tiny", toy_norms_path, out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (
        f"error: --model org/tiny: {snapshot / 'model.safetensors'} is damaged or cut short "
        "(Error while deserializing header: incomplete metadata, file not fully covered); "
        f"delete {folder} (the model's folder in the Hugging Face cache) and run again to "
        "download it anew"
    )
    assert not out.exists()


def test_names_longer_than_the_file_system_allows(tiny_bert, toy_norms_path, tmp_path):
    # before: `OSError: [Errno 36] File name too long`, a traceback (Path.exists raises it)
    for out in (tmp_path / LONG, tmp_path / LONG / "run", tmp_path / "runs" / LONG):
        line = fails_cleanly(retrieve(tiny_bert, toy_norms_path, out), f"--out {out}: a name")
        assert "of 300 bytes, longer than the 255 this file system allows; give another" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing made on the way
    fails_cleanly(
        retrieve(tmp_path / LONG, toy_norms_path, tmp_path / "run"),
        f"--model {tmp_path / LONG}: cannot read it (File name too long)",
    )
    fails_cleanly(
        retrieve(tiny_bert, tmp_path / LONG, tmp_path / "run"),
        f"{tmp_path / LONG}: cannot read it (File name too long)",
    )
    fails_cleanly(["norms", "install", tmp_path / LONG], "cannot read it (File name too long)")
