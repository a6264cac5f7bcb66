"""`--suffix-top K` (tacit.models.causal_words): a causal LM's vocabulary mode on a budget. The
text after the blank is scored for the golds, the top k and the K words most likely before it;
the top k stays exact, a gold's rank is exact wherever nothing left unscored can pass it and
otherwise an upper bound, said per gold (Ranking.bounded) and per row (`ranks_bounded`).
Checked against every suffix scored (the brute force) on a GPT-2 whose scores are spread like
a trained model's (support.save_peaked_gpt2), and through the CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support import (
    fails_cleanly,
    probe_in_one_thread,
    real_gpt2_tokenizer,
    save_peaked_gpt2,
)

from tacit.models.causal import CausalLMScorer
from tacit.ranking import Question, SharedVocabulary, rank
from tacit.vocab.shared import Vocabulary, single_token_words

PROMPTS = [
    "Everyone knows that a bear has <mask>.",
    "A knife is used for <mask>!",
    "Everyone knows that a cat has <mask>.",
]


@pytest.fixture(scope="module")
def peaked(tmp_path_factory) -> tuple[str, np.ndarray]:
    """A peaked tiny GPT-2 and 200 one-token words of GPT-2's BPE (every 120th) with ids."""
    tokenizer = real_gpt2_tokenizer()
    directory = save_peaked_gpt2(tmp_path_factory.mktemp("peaked-gpt2"), tokenizer)
    found = single_token_words(tokenizer)
    chosen = sorted(found)[::120][:200]
    return str(directory), np.array([found[w] for w in chosen])


def ranked(model: str, ids: np.ndarray, golds, k: int, batch_size: int, groups=None):
    """The prompts' ranking over the words with a budget of `k` (0: exact)."""
    scorer = CausalLMScorer(model, device="cpu", batch_size=batch_size)
    words = tuple(str(n) for n in range(len(ids)))
    vocab = Vocabulary(words, {scorer.name: ids}, {scorer.name: frozenset(words)})
    question = Question(PROMPTS, golds, 5, groups)
    return rank(scorer, question, SharedVocabulary(vocab, suffix_top=k), progress=False)


@pytest.mark.slow
def test_a_budget_keeps_the_top_k_and_every_rank_it_calls_exact(peaked):
    """With a budget of 10 of 200 words: every top 5 not flagged is the exact run's, every
    gold rank not flagged bounded is the exact rank, every flagged one at least it (an upper
    bound), so AP is at most the exact AP; fewer suffixes are scored; and batch size changes
    nothing. A budget as large as the vocabulary is the exact run."""
    model, ids = peaked
    scorer = CausalLMScorer(model, device="cpu", batch_size=64)
    best = {
        int(row): np.argsort(-(batch.shared[at] - batch.log_z[at]).numpy(), kind="stable")
        for batch in scorer.score_vocab(PROMPTS, ids, progress=False)
        for row, at in zip(batch.rows.tolist(), batch.batch_rows.tolist())
    }
    golds = [
        best[0][[0, 2, 40, 150]].tolist(),  # high and far down
        best[1][[1, 90]].tolist(),
        best[2][[3]].tolist(),
    ]
    want = ranked(model, ids, golds, 0, 1)
    gold = np.array([[j < len(g) for j in range(4)] for g in golds])
    reads = {b: ranked(model, ids, golds, 10, b) for b in (1, 64)}
    for got in reads.values():
        sure = ~got.top_bounded
        np.testing.assert_array_equal(got.top_index[sure], want.top_index[sure])
        np.testing.assert_allclose(got.top_value[sure], want.top_value[sure], rtol=1e-4)
        assert got.counts.get("tops_bounded", 0) == int(got.top_bounded.sum())
        assert got.bounded is not None
        flagged = got.bounded & gold
        assert flagged.any() and (gold & ~got.bounded).any()
        np.testing.assert_array_equal(got.rank[gold & ~flagged], want.rank[gold & ~flagged])
        assert (got.rank[flagged] >= want.rank[flagged]).all()
        assert (got.ap <= want.ap + 1e-6).all()
        assert got.counts["ranks_bounded"] == int(flagged.sum())
        assert got.counts["vocab_suffixes"] < 0.7 * want.counts["vocab_suffixes"]
    for name in ("rank", "bounded", "top_bounded", "top_index", "ap"):
        np.testing.assert_array_equal(
            getattr(reads[1], name), getattr(reads[64], name), err_msg=name
        )
    whole = ranked(model, ids, golds, len(ids), 64)
    assert not whole.bounded.any() and not whole.top_bounded.any()
    assert "ranks_bounded" not in whole.counts and "tops_bounded" not in whole.counts
    np.testing.assert_array_equal(whole.top_index, want.top_index)
    np.testing.assert_array_equal(whole.rank[gold], want.rank[gold])
    np.testing.assert_allclose(whole.ap, want.ap, rtol=1e-6)


@pytest.mark.slow
def test_an_ensemble_on_a_budget_flags_what_its_means_bound(peaked):
    """Two templates of one item (Needed.groups): the mean over them ranks the golds exactly
    where nothing left at a bound can pass them, and at least as low elsewhere; the same at
    batch sizes 1 and 64."""
    model, ids = peaked
    golds = [[3, 50, 120], [3, 50, 120], [7]]
    groups = [0, 0, 1]
    want = ranked(model, ids, golds, 0, 64, groups).ensemble
    reads = [ranked(model, ids, golds, 10, b, groups).ensemble for b in (1, 64)]
    gold = np.array([[True] * 3, [True, False, False]])
    for got in reads:
        flagged = got.bounded & gold
        np.testing.assert_array_equal(got.rank[gold & ~flagged], want.rank[gold & ~flagged])
        assert (got.rank[flagged] >= want.rank[flagged]).all() and flagged.any()
    np.testing.assert_array_equal(reads[0].rank, reads[1].rank)
    np.testing.assert_array_equal(reads[0].bounded, reads[1].bounded)


@pytest.mark.slow
def test_the_cli_says_what_the_budget_bounded(tiny_gpt2, toy_norms_path, tmp_path):
    """`probe elicit --suffix-top K`: prompts.csv counts each prompt's bounded gold ranks, the
    summary and its printed table each model's, the manifest records the rule and each model's
    count, and a note says the ranks are approximate (the golden runs pin that a run without a budget writes none of them)."""
    out = tmp_path / "run"
    args = ["elicit", "-m", tiny_gpt2, "--norms", toy_norms_path, "--relation", "has", "-q"]
    result = probe_in_one_thread([*args, "--suffix-top", "3", "-o", out])
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    manifest = json.loads((out / "manifest.json").read_text())
    record = manifest["models"][0]
    assert manifest["options"]["suffix_top"]["k"] == 3
    assert record["ranks_bounded"] == prompts["ranks_bounded"].sum() > 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["ranks_bounded"].tolist() == [record["ranks_bounded"]]
    assert "ranks bounded" in result.output  # the printed table's column
    assert f"approximate (--suffix-top 3): {record['ranks_bounded']} gold rank(s)" in (
        result.output
    )


def test_suffixes_are_batched_by_tokens_and_one_stays_one():
    """rows_per_batch: a batch of suffixes `factor` times shorter than a sentence holds
    `factor` x the batch size rows; a batch size of 1 (the tie rule's canonical scores) stays
    one row; a size halved on running out of memory comes back divided by the factor."""
    from types import SimpleNamespace

    from tacit.models.batching import rows_per_batch

    model = SimpleNamespace(name="m", device="cpu", batch_size=32)
    with rows_per_batch(model, 10):
        assert model.batch_size == 320
        model.batch_size = 80  # halved twice on the device
    assert model.batch_size == 8
    model.batch_size = 1
    with rows_per_batch(model, 10):
        assert model.batch_size == 1
    assert model.batch_size == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--candidates", "answers"], "--suffix-top is an option of the shared vocabulary"),
        (["--by", "generation"], "--suffix-top is an option of the shared vocabulary"),
    ],
)
def test_a_budget_where_it_has_no_place_is_one_line(toy_norms_path, tmp_path, extra, message):
    """--suffix-top over candidate spans (each scored whole) or by generation (no scores):
    refused before any model loads, not silently ignored."""
    out = tmp_path / "run"
    args = ["elicit", "-m", "gpt2", "--norms", toy_norms_path, "--suffix-top", "10", *extra]
    fails_cleanly([*args, "-o", out], message, out)
