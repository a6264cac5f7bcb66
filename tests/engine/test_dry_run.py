"""`--dry-run` in seconds, and honest (issue 47): the plan's counts with no model loaded
(`--dry-run-seconds 0`); a calibration bounded in sentences and seconds that says what it
timed, stops part-way through a long prompt and scales what it timed by the share done (a
causal LM's word suffixes counted); a note past ten minutes with what takes less; and a real
run's own estimate beside its actual time in the manifest."""

from __future__ import annotations

import pytest
from support import save_tiny_gpt2, toy_gpt2_tokenizer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.engine import estimate as estimates
from tacit.engine import runner
from tacit.models import meter as meters


@pytest.fixture(scope="module")
def toy_gpt2(tmp_path_factory) -> str:
    """A tiny random GPT-2 on the toy BPE: a vocabulary small enough to score every suffix."""
    where = tmp_path_factory.mktemp("toy-gpt2")
    return str(save_tiny_gpt2(where, toy_gpt2_tokenizer(where)))


@pytest.mark.slow
def test_the_counts_alone_load_no_model(tiny_gpt2, toy_norms_path, monkeypatch):
    import tacit.models

    def no_loading(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(tacit.models, "load_scorer", no_loading)
    given = dict(norms=toy_norms_path, max_props=2, candidates="concepts")
    estimate = tacit.retrieve([tiny_gpt2], dry_run=True, dry_run_seconds=0, **given)
    (model,) = estimate.models
    assert model.seconds is None and estimate.seconds is None
    assert model.sentences == estimate.sentences == estimate.prompts * 8  # 8 concept spans
    assert "no model loaded" in str(estimate) and "dry_run_seconds 0" in str(estimate)
    args = ["retrieve", "-m", tiny_gpt2, "--norms", str(toy_norms_path), "--max-props", "2"]
    done = CliRunner().invoke(
        app, [*args, "--candidates", "concepts", "--dry-run", "--dry-run-seconds", "0"]
    )
    assert done.exit_code == 0, done.output
    assert f"{estimate.sentences:,} sentences per model" in done.stdout
    refused = CliRunner().invoke(app, [*args, "--dry-run-seconds", "3"])
    assert refused.exit_code == 1 and "give it with --dry-run" in refused.output


@pytest.mark.slow
def test_a_calibration_is_bounded_in_sentences_and_says_what_it_timed(
    tiny_gpt2, toy_norms_path, monkeypatch
):
    monkeypatch.setattr(estimates, "CALIBRATION_SENTENCES", 20)
    given = dict(norms=toy_norms_path, max_props=2, candidates="concepts", batch_size=8)
    estimate = tacit.retrieve([tiny_gpt2], dry_run=True, **given)
    (model,) = estimate.models
    # groups of a batch of sentences (one prompt text of 8 spans each) until 20 are timed
    assert 20 <= model.calibration_sentences <= 20 + 8 < estimate.sentences
    assert model.calibration_prompts == model.calibration_sentences // 8
    said = str(estimate)
    assert f"timed {model.calibration_sentences} sentences of {model.calibration_prompts}" in said


def test_a_long_prompt_is_stopped_part_way_and_scaled(
    toy_gpt2, toy_norms_path, tmp_path, monkeypatch
):
    """A prompt of many candidate spans is timed on part of its sentences, not all of them
    (the old calibration scored two whole prompts: 636 sentences each over CSLB's concepts)."""
    words = [f"thing {n}" for n in range(300)]
    (tmp_path / "spans.txt").write_text("\n".join(["fur", "claws", *words]) + "\n")
    monkeypatch.setattr(estimates, "CALIBRATION_SENTENCES", 40)
    given = dict(norms=toy_norms_path, relations=["has"], candidates=str(tmp_path / "spans.txt"))
    estimate = tacit.elicit([toy_gpt2], dry_run=True, batch_size=16, **given)
    (model,) = estimate.models
    assert model.calibration_partial and model.calibration_prompts == 1
    assert 40 <= model.calibration_sentences < 302  # one prompt, stopped part-way
    assert model.seconds > model.calibration_seconds  # scaled to every prompt's sentences


def test_a_causal_vocabulary_run_is_timed_with_its_words_suffixes(toy_gpt2, toy_norms_path):
    """Over the vocabulary a causal LM scores each word's text after the blank ("."): the
    calibration counts those sentences (the plan knows only one per prompt)."""
    estimate = tacit.elicit(
        [toy_gpt2], norms=toy_norms_path, relations=["has"], dry_run=True, dry_run_seconds=2
    )
    (model,) = estimate.models
    assert estimate.sentences == estimate.prompts
    assert model.sentences > 10 * estimate.prompts  # the suffixes of many words per prompt
    assert f"({model.sentences:,} sentences)" in str(estimate)


@pytest.mark.slow
def test_a_long_estimate_says_what_takes_less(
    tiny_bert, tiny_gpt2, toy_gpt2, toy_norms_path, monkeypatch
):
    monkeypatch.setattr(estimates, "LONG_RUN_SECONDS", 0)
    args = ["retrieve", "-m", tiny_gpt2, "--norms", str(toy_norms_path), "--max-props", "2"]
    done = CliRunner().invoke(app, [*args, "--candidates", "concepts", "--dry-run"])
    assert done.exit_code == 0, done.output
    (note,) = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    concepts = len(
        set(
            tacit.retrieve(
                [tiny_gpt2],
                norms=toy_norms_path,
                max_props=2,
                candidates="concepts",
                quiet=True,
            ).prompts["concept"]
        )
    )
    assert "--limit 1 takes about" in note and f"(1 of {concepts} concepts, a first look)" in note
    assert "--candidates FILE" in note and "--span-scoring" not in note  # a causal LM
    vocab = tacit.elicit(
        [toy_gpt2], norms=toy_norms_path, relations=["has"], dry_run=True, dry_run_seconds=1
    )
    assert "vocab_words lower" in vocab.notes[0]  # from Python: the API's names
    assert "suffix_top 1000 (on a CPU" in vocab.notes[0]
    bounded = tacit.elicit(
        [toy_gpt2],
        norms=toy_norms_path,
        relations=["has"],
        dry_run=True,
        dry_run_seconds=1,
        suffix_top=5,
    )
    assert "suffix_top" not in bounded.notes[0]  # asked already
    assert bounded.models[0].sentences < vocab.models[0].sentences  # timed on its budget
    monkeypatch.setattr(estimates, "LONG_RUN_SECONDS", 10**9)
    quick = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, dry_run=True)
    assert quick.notes == []


@pytest.mark.slow
def test_a_run_records_its_estimate_beside_its_time(tiny_gpt2, toy_norms_path, monkeypatch):
    monkeypatch.setattr(runner, "CHUNK_SENTENCES", 40)
    run = tacit.retrieve(
        [tiny_gpt2], norms=toy_norms_path, max_props=2, candidates="concepts", quiet=True
    )
    timing = run.manifest["models"][0]["timing"]
    assert timing["sentences"] == run.prompts["prompt"].nunique() * 8  # 8 spans a text
    assert 0 < timing["estimated_from_sentences"] <= 40 < timing["sentences"]
    assert timing["estimate_seconds"] > 0 and timing["scoring_seconds"] > 0
    assert timing["load_seconds"] >= 0


def test_the_meter_scales_what_it_timed(monkeypatch):
    """A fake clock: the text's time before its block counts once, the block is scaled by the
    share of its tokens done (longest first), the texts done to all of them."""
    now = [0.0]
    monkeypatch.setattr(meters.time, "monotonic", lambda: now[0])
    meter = meters.Meter(seconds=5, sentences=10**6, texts=4)
    now[0] = 1.0
    meter.plan(4, lengths=[3, 1, 1, 1])  # 6 tokens; a second before it (a prefix)
    now[0] = 2.0
    with pytest.raises(meters.Spent):
        meter.did(2)  # budget not spent: goes on
        now[0] = 6.0
        meter.did(1)  # 5 seconds: stopped, 5 of the 6 tokens done in 5 s
    seconds, sentences = meter.whole()
    assert seconds == pytest.approx((1 + 5 * 6 / 5) * 4) and sentences == 16
    done = meters.Meter(seconds=1, sentences=10, texts=2)
    done.text_done(2)  # the last text: never stopped, measured as it is
    assert done.whole() == (pytest.approx(0.0), 2.0) and not done.stopped


def test_dry_run_seconds_must_be_a_number_of_seconds():
    with pytest.raises(TacitError, match="dry_run_seconds -1: must be at least 0"):
        tacit.RunOptions(dry_run=True, dry_run_seconds=-1)
