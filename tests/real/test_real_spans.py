"""Span mode on real pretrained weights: tacit's causal sentence scores against a plain
whole-sentence computation (support.causal_span_reference: start token + the sentence, one
forward pass, log_softmax, gather, sum) and against minicons (a recorded run,
tests/real/minicons.json, and a live one where minicons is installed).

Tolerance: TOLERANCE nats on a sentence's log-probability (scores of -29 to -73 nats here).
tacit batches sentences, right-pads them and reuses a prefix's key/value cache, the plain way
runs each sentence alone: float32 sums in another order, measured at 4.8e-5 nats at most for
SmolLM2 and 2.0e-4 for Gemma (with the prefix cache; 5.4e-5 without), and minicons within
6.8e-5 and 2.0e-4 of tacit; any real mistake (a token dropped, the wrong start token, a
shifted position) moves a score by nats. The candidates' order must be the plain one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import causal_span_reference, sentence_of
from support_real import SPANS, TEMPLATES

from tacit.models.causal import CACHE_MIN_SPANS

pytestmark = pytest.mark.real

TOLERANCE = 1e-3  # nats, on a sentence's log-probability
RECORDED = Path(__file__).with_name("minicons.json")


@pytest.fixture(scope="module")
def plain_scores(real_plain):
    """(span, sentence, n_tokens) [templates x spans] arrays, computed the plain way."""
    return causal_span_reference(real_plain, TEMPLATES, SPANS)


@pytest.fixture(scope="module")
def tacit_scores(real_scorer):
    """tacit's SpanScores of the same, as a probe computes them (the prefix cache reused)."""
    return real_scorer.score_spans(TEMPLATES, SPANS, progress=False)


@pytest.fixture(scope="module")
def tacit_bos_scores(real_checkpoint):
    """The same from sentences that start with the tokenizer's declared BOS (`start_token=bos`),
    as minicons starts them (SmolLM2's `<|im_start|>`, with `bos_token=True`; Gemma's `<bos>`,
    which its tokenizer adds): tacit's own rule does not choose SmolLM2's, which its tokenizer
    does not add (tests/real/test_real_vocab.py)."""
    from tacit.models.causal import CausalLMScorer

    scorer = CausalLMScorer(f"{real_checkpoint.directory},start_token=bos", device="cpu")
    return scorer.score_spans(TEMPLATES, SPANS, progress=False)


def assert_same_order(got: np.ndarray, expected: np.ndarray, tolerance: float) -> None:
    """Every two candidates of a row that `expected` tells apart by more than twice the
    tolerance are in the same order in `got`: the ranks a probe reports are the plain ones."""
    for row_got, row_expected in zip(np.atleast_2d(got), np.atleast_2d(expected)):
        apart = np.abs(row_expected[:, None] - row_expected[None, :]) > 2 * tolerance
        same = np.sign(row_got[:, None] - row_got[None, :]) == np.sign(
            row_expected[:, None] - row_expected[None, :]
        )
        assert same[apart].all(), (row_got, row_expected)


def test_span_scores_equal_the_plain_sentence_log_probability(tacit_scores, plain_scores):
    """Each sentence's log-probability and its span's tokens' as the plain computation's,
    within TOLERANCE, with the same ranks; the prefix's cache was reused."""
    assert len(SPANS) >= CACHE_MIN_SPANS  # every template's prefix runs once, for every span
    span, total, n = plain_scores
    np.testing.assert_array_equal(tacit_scores.n_tokens, n)
    np.testing.assert_allclose(tacit_scores.sentence, total, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(tacit_scores.span, span, rtol=0, atol=TOLERANCE)
    assert_same_order(tacit_scores.sentence, total, TOLERANCE)
    work = tacit_scores.work
    assert work["span_tokens"] < work["span_tokens_naive"]
    assert (total < -5).all()  # real sentences, real log-probabilities: nowhere near 0


def test_without_the_prefix_cache_the_scores_are_the_same(real_scorer, plain_scores):
    """`cache=False` scores every sentence whole, batched: the plain scores too."""
    span, total, _ = plain_scores
    scores = real_scorer.score_spans(TEMPLATES, SPANS, progress=False, cache=False)
    np.testing.assert_allclose(scores.sentence, total, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(scores.span, span, rtol=0, atol=TOLERANCE)
    assert scores.work["span_tokens"] == scores.work["span_tokens_naive"]


def recorded(name: str) -> dict:
    """The model's entry in minicons.json (written by tests/real/record_minicons.py)."""
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    if name not in record["models"]:
        pytest.skip(f"{RECORDED.name} has no {name} run: python tests/real/record_minicons.py")
    assert record["sentences"] == [sentence_of(t, s)[0] for t in TEMPLATES for s in SPANS], (
        f"{RECORDED.name} scored other sentences: run tests/real/record_minicons.py again"
    )
    return record["models"][name]


def test_span_scores_equal_a_recorded_minicons_run(real_checkpoint, tacit_bos_scores):
    """minicons' `IncrementalLMScorer.sequence_score` on the same sentences, recorded (so that
    minicons need not be installed), for the same GGUF file and start token: equal within
    TOLERANCE."""
    run = recorded(real_checkpoint.model.name)
    assert run["gguf_sha256"] == real_checkpoint.model.sha256
    minicons = np.reshape(run["scores"], (len(TEMPLATES), len(SPANS)))
    np.testing.assert_allclose(tacit_bos_scores.sentence, minicons, rtol=0, atol=TOLERANCE)
    assert_same_order(tacit_bos_scores.sentence, minicons, TOLERANCE)


def test_span_scores_equal_minicons_run_now(real_checkpoint, tacit_bos_scores):
    """The same, with minicons run here where it is installed (`pip install minicons`): the
    recording still holds for this transformers and torch."""
    pytest.importorskip("minicons", reason="minicons is not installed (pip install minicons)")
    from record_minicons import minicons_scores

    run = recorded(real_checkpoint.model.name)
    now = minicons_scores(real_checkpoint.directory, run["bos_token"])
    np.testing.assert_allclose(now, run["scores"], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(tacit_bos_scores.sentence.ravel(), now, rtol=0, atol=TOLERANCE)
