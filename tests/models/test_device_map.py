"""A model larger than its device: --device-map auto spreads it (here over the CPU and disk,
forced by a small --max-memory) and the scores are those of the unsplit model (issue 20)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import fails_cleanly
from transformers import AutoModelForMaskedLM
from typer.testing import CliRunner

from tacit.cli import app
from tacit.models.masked import MaskedLMScorer
from tacit.ranking import rank_targets

pytest.importorskip("accelerate", reason="--device-map needs accelerate (the dev extra has it)")
runner = CliRunner()
TEMPLATES = ["<mask> has fur.", "A <mask> is big and has claws."]


def small_memory(model_dir: str) -> str:
    """About 80% of the model's weights: some layers stay on the CPU, the rest go to disk."""
    model = AutoModelForMaskedLM.from_pretrained(model_dir)
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    return f"cpu={int(size * 0.8)}"


def test_a_split_model_scores_as_the_whole_one(tiny_bert, tmp_path):
    whole = MaskedLMScorer(tiny_bert, device="cpu")
    split = MaskedLMScorer(
        tiny_bert,
        device="cpu",
        device_map="auto",
        max_memory=small_memory(tiny_bert),
        offload_folder=tmp_path,
    )
    placed = split.record()["device_map"]
    assert set(placed) == {"cpu", "disk"}, placed  # really split
    spans = ["A bear", "An apple", "A coffee machine"]
    np.testing.assert_allclose(
        split.score_spans(TEMPLATES, spans, progress=False).span,
        whole.score_spans(TEMPLATES, spans, progress=False).span,
        rtol=1e-6,
        atol=1e-6,
    )
    ids = np.arange(5, 25)
    got = rank_targets(split, TEMPLATES, [0, 3], ids, progress=False)
    want = rank_targets(whole, TEMPLATES, [0, 3], ids, progress=False)
    np.testing.assert_array_equal(got.rank, want.rank)
    np.testing.assert_allclose(got.prob[:, 0], want.prob[:, 0], rtol=1e-6)


@pytest.mark.slow
def test_device_map_from_the_command_line(tiny_bert, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    args = [
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        str(toy_norms_path),
        "-q",
        "--out",
        str(out),
        "--device-map",
        "auto",
        "--max-memory",
        small_memory(tiny_bert),
        "--offload-folder",
        str(tmp_path / "offload"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["models"][0]["device_map"]) == {"cpu", "disk"}
    base = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path)]
    fails_cleanly([*base, "--max-memory", "cpu=1GB"], "need --device-map auto")
    fails_cleanly([*base, "--device-map", "auto", "--max-memory", "lots"], "DEVICE=AMOUNT pairs")
