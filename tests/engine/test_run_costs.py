"""What a run costs and how it goes: checkpoint chunks cut by the work they hold (a span run
keeps about a minute of work per chunk, so an interruption loses little), a note when a run
will be long, `--dry-run` (the plan counted, each model timed, nothing written) and `--threads`
(recorded either way)."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

import tacit
from tacit.ask.base import Work
from tacit.cli import app
from tacit.engine import runner
from tacit.engine.estimate import RunEstimate
from tacit.models.base import Needs


def _work(costs: list[int]) -> Work:
    rows = pd.DataFrame({"prompt": [f"p{i}" for i in range(len(costs))], "cost": costs})

    def cost(chosen: pd.DataFrame) -> pd.Series:
        return chosen.set_index("prompt")["cost"]

    return Work(rows, "prompt", lambda *_: rows, Needs.of("spans"), cost=cost)


def test_chunks_are_cut_by_the_sentences_they_hold():
    costs = [636] * 10  # retrieval's prompts, each with every CSLB concept in its blank
    chunks = runner.chunked(_work(costs))
    sizes = [len(c) for c in chunks]
    assert sizes == [3, 3, 3, 1] and sum(sizes) == 10
    assert all(int(c["cost"].sum()) <= runner.CHUNK_SENTENCES for c in chunks)
    one_each = runner.chunked(_work([1] * 600))  # over the vocabulary: texts decide
    assert [len(c) for c in one_each] == [256, 256, 88]
    huge = runner.chunked(_work([5000, 5000]))  # a text costlier than a chunk is one alone
    assert [len(c) for c in huge] == [1, 1]


@pytest.mark.slow
def test_a_span_run_keeps_many_chunks_and_resumes_from_them(
    tiny_gpt2, toy_norms_path, tmp_path, monkeypatch
):
    """A run over candidate spans keeps a chunk every CHUNK_SENTENCES sentences; stopped after
    its first chunk, it resumes from there and ends as an uninterrupted run does."""
    monkeypatch.setattr(runner, "CHUNK_SENTENCES", 40)
    args = ["retrieve", "-m", tiny_gpt2, "--norms", str(toy_norms_path), "--max-props", "2"]
    args += ["--candidates", "concepts", "-q"]
    whole = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output

    saved = []

    def stop_after_two(*_a, **_k):
        saved.append(1)
        if len(saved) == 2:
            raise KeyboardInterrupt

    from tacit.core import faults

    monkeypatch.setattr(
        faults, "point", lambda name: stop_after_two() if name == "checkpoint:saved" else None
    )
    stopped = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert stopped.exit_code == 130
    kept = list((tmp_path / "run" / ".partial").glob("0-*.npz"))
    assert len(kept) == 1  # the model's record, then one chunk
    monkeypatch.setattr(faults, "point", lambda name: None)
    resumed = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    for name in ("prompts.csv", "summary.csv"):
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def test_a_long_run_says_so_once_its_first_chunk_is_timed(
    tiny_gpt2, toy_norms_path, monkeypatch, capsys
):
    monkeypatch.setattr(runner, "CHUNK_SENTENCES", 40)
    monkeypatch.setattr(runner, "LONG_RUN_SECONDS", 0)
    monkeypatch.setattr(runner, "PACE_AFTER_SECONDS", 0)
    tacit.retrieve([tiny_gpt2], norms=toy_norms_path, max_props=2, candidates="concepts")
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert len(said) == 1 and "more minutes at this pace" in said[0] and "--dry-run" not in said[0]
    assert "dry_run" in said[0]  # the API's name for it


@pytest.mark.slow
def test_a_dry_run_counts_times_and_writes_nothing(
    tiny_gpt2, toy_norms_path, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    estimate = tacit.retrieve(
        [tiny_gpt2], norms=toy_norms_path, max_props=2, candidates="concepts", dry_run=True
    )
    assert isinstance(estimate, RunEstimate)
    full = tacit.retrieve(
        [tiny_gpt2], norms=toy_norms_path, max_props=2, candidates="concepts", quiet=True
    )
    (spans,) = {s["size"] for s in full.manifest["candidates"].values()}
    assert estimate.prompts == full.prompts["prompt"].nunique()
    (model,) = estimate.models
    assert model.sentences == estimate.prompts * spans
    assert model.seconds > 0 and model.calibration_sentences >= 1
    assert model.tokens["span_tokens"] > 0
    done = CliRunner().invoke(
        app,
        ["retrieve", "-m", tiny_gpt2, "--norms", str(toy_norms_path), "--max-props", "2"]
        + ["--candidates", "concepts", "--dry-run"],
    )
    assert done.exit_code == 0, done.output
    assert "dry run" in done.stdout and f"{model.sentences:,} sentences" in done.stdout
    assert not (tmp_path / "results").exists()  # no run directory


@pytest.mark.slow
def test_threads_are_set_and_recorded(tiny_bert, toy_norms_path):
    import torch

    before = torch.get_num_threads()
    try:
        run = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, threads=1, quiet=True)
        assert run.manifest["threads"] == 1 == torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    default = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, quiet=True)
    assert default.manifest["threads"] == torch.get_num_threads()
