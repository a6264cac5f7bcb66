"""Per-token and per-word scores on real pretrained weights (`probe surprisal`): tacit's
against a plain computation (support.causal_logprobs: the start token and the text, one
forward pass, log_softmax, gather) and against minicons, recorded (tests/real/
minicons_tokens.json, written by record_minicons_tokens.py: `token_score` and
`word_score_tokenized(..., tokenize_function=str.split)`) and run here where it is installed.

Tolerance: TOLERANCE nats on a token's or a word's log-probability, as issue 41 asks; measured
(transformers 5.24, torch 2.13, CPU): tacit against minicons 1.5e-5 nats at most for SmolLM2
(tokens and words) and 1.7e-5 for Gemma, against the plain computation 1.9e-5 and 1.3e-5
(float32 sums in another order). Tokens and words must be minicons' own, one for one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import causal_logprobs
from support_real import TEXTS

import tacit

pytestmark = pytest.mark.real

TOLERANCE = 1e-4  # nats, on a token's or a word's log-probability
RECORDED = Path(__file__).with_name("minicons_tokens.json")


def recorded(name: str) -> dict:
    """The model's entry in minicons_tokens.json (written by record_minicons_tokens.py)."""
    record = json.loads(RECORDED.read_text(encoding="utf-8"))
    if name not in record["models"]:
        pytest.skip(
            f"{RECORDED.name} has no {name} run: python tests/real/record_minicons_tokens.py"
        )
    assert record["texts"] == TEXTS, (
        f"{RECORDED.name} scored other texts: run tests/real/record_minicons_tokens.py again"
    )
    return record["models"][name]


@pytest.fixture(scope="module")
def tacit_tokens(real_scorer):
    return real_scorer.token_scores(TEXTS, progress=False)


@pytest.fixture(scope="module")
def like_minicons(real_checkpoint):
    """tacit's tokens and words (the probe's rows by word, result.prompts) from the start
    token minicons' recorded run began from: `bos_token=True` puts the tokenizer's BOS first
    (SmolLM2-Instruct's `<|im_start|>`, where tacit's own rule takes `<|endoftext|>`), which
    tacit's `start_token=bos` loading option does; otherwise the tokenizer's own BOS, tacit's
    rule too."""
    from tacit.models.causal import CausalLMScorer

    run = recorded(real_checkpoint.model.name)
    name = str(real_checkpoint.directory) + (",start_token=bos" if run["bos_token"] else "")
    scorer = CausalLMScorer(name, device="cpu")
    tokens = scorer.token_scores(TEXTS, progress=False)
    result = tacit.surprisal(list(TEXTS), [scorer], by="word", quiet=True)
    words = [list(rows.itertuples()) for _, rows in result.prompts.groupby("text_id", sort=True)]
    return run, tokens, words


def largest(pairs) -> float:
    return max(float(np.max(np.abs(np.subtract(a, b)))) for a, b in pairs)


def test_token_scores_equal_the_plain_computation(real_plain, tacit_tokens):
    plain = causal_logprobs(*real_plain, TEXTS)
    assert largest(zip((t.logprob for t in tacit_tokens), plain)) < TOLERANCE
    assert all((t.logprob < 0).all() for t in tacit_tokens)


def compare_with(run: dict, tacit_tokens, tacit_words) -> None:
    """tacit's tokens and words against minicons' (the start token minicons returns, unscored,
    left out): the same units, scores within TOLERANCE."""
    for theirs, ours in zip(run["tokens"], tacit_tokens):
        assert [unit for unit, _ in theirs[1:]] == list(ours.tokens)
    diff = largest(
        ([s for _, s in theirs[1:]], ours.logprob)
        for theirs, ours in zip(run["tokens"], tacit_tokens)
    )
    assert diff < TOLERANCE, f"tokens: {diff:.2e} nats"
    for theirs, ours in zip(run["words"], tacit_words):
        assert [unit for unit, _ in theirs] == [row.word for row in ours]
    diff = largest(
        ([s for _, s in theirs], [row.logprob for row in ours])
        for theirs, ours in zip(run["words"], tacit_words)
    )
    assert diff < TOLERANCE, f"words: {diff:.2e} nats"


def test_equal_to_a_recorded_minicons_run(real_checkpoint, like_minicons):
    """minicons' token_score and word_score_tokenized on the same texts, recorded (so that
    minicons need not be installed), for the same GGUF file."""
    run, tokens, words = like_minicons
    assert run["gguf_sha256"] == real_checkpoint.model.sha256
    compare_with(run, tokens, words)


def test_equal_to_minicons_run_now(real_checkpoint, like_minicons):
    """The same, with minicons run here where it is installed (`pip install minicons`)."""
    pytest.importorskip("minicons", reason="minicons is not installed (pip install minicons)")
    from record_minicons_tokens import minicons_runs

    run, tokens, words = like_minicons
    theirs_tokens, theirs_words = minicons_runs(real_checkpoint.directory, run["bos_token"])
    compare_with({"tokens": theirs_tokens, "words": theirs_words}, tokens, words)
