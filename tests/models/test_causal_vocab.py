"""A causal model's vocabulary mode counts the text after the blank (tacit.models.causal_vocab):
a word's score is log P(w | before) + log P(after | before, w), the same as span mode's for a
one-token word, and the words that cannot change what a reduction reads are left unscored
without changing a rank, a top-k word, an average precision or a gold's probability. Checked
on tiny GPT-2- and Llama-shaped models with GPT-2's real byte-level BPE, and on a GPT-2 whose
scores are spread like a trained model's (support.save_peaked_gpt2), where pruning prunes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import (
    causal_reference,
    causal_vocab_reference,
    real_gpt2_tokenizer,
    save_peaked_gpt2,
)

from tacit.models.answers import Needed, ScoredBatch
from tacit.models.causal import CausalLMScorer
from tacit.ranking import Question, Ranking, rank_targets
from tacit.ranking.vocabulary import GroupMean, WorkCount, reduce
from tacit.vocab.shared import single_token_words

PROMPTS = [
    "Everyone knows that a bear has <mask>.",
    "A knife is used for <mask>!",
    "Everyone knows that a cat has <mask>.",
    "A house has <mask> .",
    "Everyone knows that a bear has <mask>.",  # a repeat: scored once, read twice
]
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def peaked_gpt2(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("peaked-gpt2")
    return str(save_peaked_gpt2(directory, real_gpt2_tokenizer()))


@pytest.fixture(scope="module")
def words() -> tuple[list[str], np.ndarray]:
    """300 one-token words of GPT-2's BPE (every 80th, alphabetically) and their ids."""
    found = single_token_words(real_gpt2_tokenizer())
    chosen = sorted(found)[::80][:300]
    return chosen, np.array([found[w] for w in chosen])


@pytest.fixture(scope="module")
def few_words(words) -> tuple[list[str], np.ndarray]:
    """The first 200 of those words, for the pruning checks, which score every word's suffix
    one sentence at a time (batch size 1): enough words for the bounds to leave most suffixes
    unscored (a third of the words for the best-read prompt, as with 300), and no more."""
    texts, ids = words
    return texts[:200], ids[:200]


def scores_of(batches) -> dict[int, np.ndarray]:
    """Each prompt's log-probabilities, from the batches that cover it."""
    found = {}
    for batch in batches:
        for row, at in zip(batch.rows.tolist(), batch.batch_rows.tolist()):
            found[row] = (batch.shared[at] - batch.log_z[at]).numpy()
    return found


def as_batch(scores: np.ndarray) -> ScoredBatch:
    """Scores computed elsewhere as one batch of log-probabilities, for the reductions."""
    rows = torch.arange(len(scores))
    return ScoredBatch(
        rows, rows, torch.as_tensor(scores, dtype=torch.float32), torch.zeros(len(rows))
    )


def read(batches, golds, among, relation, shares=False) -> Ranking:
    """What the ranking layer reads of these batches: each row's golds, top 5, AP over every
    word and over its relation's subset (`among`: a mask per relation)."""
    batches = list(batches)
    n_words = batches[0].shared.shape[1]
    subsets = [] if among is None else [np.flatnonzero(m) for m in np.asarray(among)]
    question = Question(
        [""] * len(golds), golds, 5, subsets=subsets, subset_of_row=relation, shares=shares
    )
    words = np.asarray([str(n) for n in range(n_words)], dtype=object)
    return reduce(batches, question, words, CPU, None).ranking(words)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny_gpt2", "tiny_llama", "peaked_gpt2"])
def test_one_token_words_rank_and_score_alike_in_both_modes(model, words, request):
    """For every word that is one token in its sentence, vocabulary mode's score is span
    mode's sentence score less the text before the blank (which every word shares), so both
    modes rank alike. A word BPE merges with the text after it ("!" before "!" is one token,
    `!!`) is another sentence in span mode: vocabulary mode keeps its token."""
    model_dir = request.getfixturevalue(model)
    texts, ids = words
    scorer = CausalLMScorer(model_dir, device="cpu", batch_size=64)
    tokenizer = scorer.tokenizer
    prompts = PROMPTS[:4]
    vocab = scores_of(scorer.score_vocab(prompts, ids, progress=False))
    spans = scorer.score_spans(prompts, texts, progress=False).sentence
    for row, prompt in enumerate(prompts):
        before, after = prompt.split("<mask>")
        prefix = tokenizer(before.rstrip(), add_special_tokens=False)["input_ids"]
        sentences = tokenizer([before + w + after for w in texts], add_special_tokens=False)
        one = np.array([s[len(prefix)] == i for s, i in zip(sentences["input_ids"], ids)])
        assert one.mean() > 0.9
        shared = causal_reference(model_dir, [before.rstrip()])[0].sum()
        np.testing.assert_allclose(vocab[row][one], spans[row][one] - shared, atol=1e-4)
        vocab_rank = 1 + (vocab[row][None, one] > vocab[row][one, None]).sum(1)
        span_rank = 1 + (spans[row][None, one] > spans[row][one, None]).sum(1)
        gaps = np.abs(spans[row][None, one] - spans[row][one, None]) + np.eye(one.sum())
        clear = gaps.min(1) > 1e-4  # words with no other within float noise of them
        np.testing.assert_array_equal(vocab_rank[clear], span_rank[clear])


@pytest.mark.slow
def test_pruned_scores_read_as_every_suffix_scored(peaked_gpt2, few_words):
    """Gold answers high and low, the top 5, AP over the vocabulary and over a subset, the
    golds' probabilities: the same read from the pruned scores, from every word's suffix
    scored by the scorer (brute force), and from a plain forward pass per sentence; at batch
    size 1 the pruned and brute-force reads are bit for bit the same. Most suffixes are left
    unscored, and the work counts say how many were scored."""
    _, ids = few_words
    plain = causal_vocab_reference(peaked_gpt2, PROMPTS, ids)
    order = np.argsort(-plain, axis=1, kind="stable")
    golds = [
        order[0, [0, 3, 7]].tolist(),  # the model's best answers
        order[1, [1, 100]].tolist(),  # and one far down
        order[2, [0]].tolist(),
        [],  # a prompt with no gold read: its top 5 only
        order[4, [2, 5]].tolist(),
    ]
    among = torch.zeros((2, len(ids)), dtype=torch.bool)
    among[0, order[0, :40]] = among[1, ::3] = True
    for gold, relation in zip(golds, [0, 1, 0, 1, 0]):
        among[relation, gold] = True
    relation = [0, 1, 0, 1, 0]
    reads = {}
    for batch_size in (1, 64):
        scorer = CausalLMScorer(peaked_gpt2, device="cpu", batch_size=batch_size)
        work = WorkCount()
        needed = Needed(golds, 5)
        pruned = list(work.passing(scorer.score_vocab(PROMPTS, ids, progress=False, needed=needed)))
        brute = list(scorer.score_vocab(PROMPTS, ids, progress=False))
        reads[batch_size] = (
            read(pruned, golds, among, relation),
            read(brute, golds, among, relation),
        )
        np.testing.assert_allclose(
            [scores_of(brute)[r] for r in range(len(PROMPTS))], plain, atol=1e-4
        )
        assert work.counts["vocab_suffixes_naive"] == 4 * len(ids)  # distinct texts x words
        assert work.counts["vocab_suffixes"] < 0.7 * work.counts["vocab_suffixes_naive"]
        # a prompt whose golds the model ranks high leaves most words unscored
        assert min(b.work["vocab_suffixes"] for b in pruned) < len(ids) / 3
    plain_read = read([as_batch(plain)], golds, among, relation)
    gold = np.array([[j < len(g) for j in range(3)] for g in golds])  # the rest is padding
    for got, brute_read in reads.values():
        for want in (brute_read, plain_read):
            np.testing.assert_array_equal(got.rank[gold], want.rank[gold])
            np.testing.assert_array_equal(got.top_index, want.top_index)
            np.testing.assert_allclose(got.ap, want.ap, rtol=1e-6)
            np.testing.assert_allclose(got.ap_among, want.ap_among, rtol=1e-6)
            np.testing.assert_allclose(got.prob[gold], want.prob[gold], rtol=1e-3)
            np.testing.assert_allclose(got.top_value, want.top_value, rtol=1e-3)
    got, brute_read = reads[1]
    for name in ("ap", "ap_among", "top_index", "top_value"):
        np.testing.assert_array_equal(getattr(got, name), getattr(brute_read, name), err_msg=name)
    for name in ("prob", "rank"):
        np.testing.assert_array_equal(getattr(got, name)[gold], getattr(brute_read, name)[gold])


@pytest.mark.slow
def test_the_ensemble_of_pruned_prompts_reads_as_every_suffix_scored(peaked_gpt2, few_words):
    """An item's templates (Needed.groups): the mean over them of each word's score ranks the
    gold answers, the top 5 and AP as the brute force's mean does."""
    _, ids = few_words
    scorer = CausalLMScorer(peaked_gpt2, device="cpu", batch_size=1)
    groups = [0, 0, 1, 1, 0]
    brute = list(scorer.score_vocab(PROMPTS, ids, progress=False))
    means = GroupMean(groups, CPU)
    list(means.passing(brute))
    mean = (means.batch().shared).numpy()
    order = np.argsort(-mean, axis=1, kind="stable")
    item_golds = [order[0, [0, 60]].tolist(), order[1, [2]].tolist()]
    golds = [item_golds[g] for g in groups]
    ensembles = []
    pruned = scorer.score_vocab(PROMPTS, ids, progress=False, needed=Needed(golds, 5, groups))
    for batches in (pruned, brute):
        ensemble = GroupMean(groups, CPU)
        list(ensemble.passing(batches))
        ensembles.append(read([ensemble.batch()], item_golds, None, None))
    got, want = ensembles
    for name in ("ap", "top_index", "top_value"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    gold = np.array([[j < len(g) for j in range(2)] for g in item_golds])  # the rest is padding
    for name in ("prob", "rank"):
        np.testing.assert_array_equal(getattr(got, name)[gold], getattr(want, name)[gold])


@pytest.mark.slow
def test_retrieval_reads_every_word(peaked_gpt2, words):
    """rank_targets reads the target's share of the whole shared vocabulary: every suffix is
    scored, and the share is the plain computation's."""
    _, ids = words
    scorer = CausalLMScorer(peaked_gpt2, device="cpu", batch_size=64)
    prompts = PROMPTS[:2]
    plain = causal_vocab_reference(peaked_gpt2, prompts, ids)
    targets = [5, 17]
    got = rank_targets(scorer, prompts, targets, ids, progress=False)
    want = read([as_batch(plain)], [[t] for t in targets], None, None, shares=True)
    np.testing.assert_array_equal(got.rank, want.rank)
    np.testing.assert_array_equal(got.top_index, want.top_index)
    np.testing.assert_allclose(got.share[:, 0], want.share[:, 0], rtol=1e-3)


def test_needs_of_a_subset_of_prompts():
    """score_words reads some prompts at the blank and puts words in the others: a group cut
    in two cannot be bounded from one part, so that part's every word is read."""
    needed = Needed([[1], [2], [3], [4]], 5, [0, 0, 1, 1])
    assert needed.subset(np.array([0, 1])) == Needed([[1], [2]], 5, [0, 0], False)
    assert needed.subset(np.array([0, 2])).every_word
    assert not Needed([[1], [2]], 5).subset(np.array([1])).every_word
