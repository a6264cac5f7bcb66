"""Scores kept across runs (`--cache DIR`, tacit.models.score_cache): a rerun, a sweep's cell or
an ablation that asks a model what an earlier run asked it reads the answer instead of scoring
it, and a run answered from the cache writes the same tables as one without it; the manifest counts what was found; another model, another
precision or another question never takes an entry that is not its own; a damaged entry is
scored again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tacit.cli import app


def _run(args: list[str], out: Path) -> dict:
    done = CliRunner().invoke(app, [*args, "-q", "--out", str(out)])
    assert done.exit_code == 0, done.output
    return json.loads((out / "manifest.json").read_text())


def _same_tables(a: Path, b: Path, rows: str = "prompts.csv") -> None:
    for name in (rows, "summary.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["spans", "vocab"])
def test_a_rerun_reads_every_answer_and_writes_the_same_tables(
    mode, tiny_gpt2, tiny_bert, toy_norms_path, tmp_path
):
    model = tiny_gpt2 if mode == "spans" else tiny_bert
    args = ["retrieve", "-m", model, "--norms", str(toy_norms_path), "--max-props", "2"]
    if mode == "spans":
        args += ["--candidates", "concepts"]
    plain = _run(args, tmp_path / "plain")
    assert "cache" not in plain["models"][0]
    cache = ["--cache", str(tmp_path / "cache")]
    first = _run([*args, *cache], tmp_path / "first")["models"][0]["cache"]
    assert first["found"] == 0 and first["scored"] > 0
    again = _run([*args, *cache], tmp_path / "again")["models"][0]["cache"]
    assert again == {**first, "found": first["scored"], "scored": 0}
    _same_tables(tmp_path / "again", tmp_path / "plain")
    _same_tables(tmp_path / "first", tmp_path / "plain")


@pytest.mark.slow
def test_another_question_shares_what_it_can(tiny_gpt2, toy_norms_path, tmp_path):
    """`--normalize` ranks the same span scores another way: a run that changes only it asks
    nothing new of the model (pmi's baselines aside)."""
    args = ["retrieve", "-m", tiny_gpt2, "--norms", str(toy_norms_path), "--max-props", "2"]
    args += ["--candidates", "concepts", "--cache", str(tmp_path / "cache")]
    _run(args, tmp_path / "sum")
    mean = _run([*args, "--normalize", "mean"], tmp_path / "mean")["models"][0]["cache"]
    assert mean["scored"] == 0 and mean["found"] > 0


@pytest.mark.slow
def test_another_model_or_precision_never_takes_an_entry(
    tiny_gpt2, tiny_llama, toy_norms_path, tmp_path
):
    args = ["retrieve", "--norms", str(toy_norms_path), "--max-props", "1"]
    args += ["--candidates", "concepts", "--cache", str(tmp_path / "cache")]
    first = _run([*args, "-m", tiny_gpt2], tmp_path / "gpt2")["models"][0]["cache"]
    other = _run([*args, "-m", tiny_llama], tmp_path / "llama")["models"][0]["cache"]
    assert other["found"] == 0 and other["model"] != first["model"]
    half = _run([*args, "-m", f"{tiny_gpt2},dtype=bfloat16"], tmp_path / "half")
    assert half["models"][0]["cache"]["found"] == 0


def test_a_damaged_entry_is_scored_again(tiny_gpt2, toy_norms_path, tmp_path):
    args = ["retrieve", "-m", tiny_gpt2, "--norms", str(toy_norms_path), "--max-props", "1"]
    args += ["--candidates", "concepts", "--cache", str(tmp_path / "cache")]
    first = _run(args, tmp_path / "first")["models"][0]["cache"]
    entries = sorted((tmp_path / "cache").rglob("*.npz"))
    assert len(entries) == first["scored"]
    entries[0].write_bytes(entries[0].read_bytes()[:40])  # cut short
    again = _run(args, tmp_path / "again")["models"][0]["cache"]
    assert (again["found"], again["scored"]) == (first["scored"] - 1, 1)
    # the one template scored again ran in another batch: within batching's float noise
    import pandas as pd

    old, new = (pd.read_csv(tmp_path / run / "prompts.csv") for run in ("first", "again"))
    pd.testing.assert_frame_equal(old, new, check_exact=False, atol=1e-4, rtol=0)
