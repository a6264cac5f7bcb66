"""A causal model's vocabulary mode on real pretrained weights (issue 38): the text after the
blank counted (a word's score is log P(w | before) + log P(after | before, w)), exactly where a
reduction reads it though most words' suffixes are left unscored, the same score and rank as
span mode gives a one-token word, and the start token chosen by the documented rule.

Each word's plain score is a forward pass over its whole sentence (support.causal_vocab_reference),
so the vocabulary here is a few dozen words: the point is the real weights' peaked scores,
where pruning prunes and a wrong bound would show.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import causal_logprobs, causal_vocab_reference

from tacit.models.answers import Needed, ScoredBatch
from tacit.ranking import Question
from tacit.ranking.vocabulary import WorkCount, reduce
from tacit.vocab.shared import single_token_words

pytestmark = pytest.mark.real

PROMPTS = [
    "Everyone knows that a bear has <mask>.",
    "Everyone knows that a knife is used for <mask>.",
    "Everyone knows that a house has <mask>.",
]
WORDS = [
    "teeth",
    "claws",
    "fur",
    "eyes",
    "ears",
    "cubs",
    "legs",
    "paws",
    "tails",
    "wings",
    "a",
    "the",
    "to",
    "an",
    "no",
    "been",
    "value",
    "water",
    "windows",
    "doors",
    "walls",
    "rooms",
    "roofs",
    "cutting",
    "food",
    "bread",
    "meat",
    "wood",
    "paper",
    "eating",
    "cooking",
    "killing",
    "power",
    "energy",
    "money",
    "people",
    "children",
    "friends",
]
GOLDS = [["claws", "fur", "teeth"], ["cutting", "eating"], ["windows", "doors", "rooms"]]


@pytest.fixture(scope="module")
def vocabulary(real_scorer):
    """The WORDS that are one token for this model, and their ids."""
    found = single_token_words(real_scorer.tokenizer)
    words = [w for w in WORDS if w in found]
    assert len(words) >= 25, words
    return words, np.array([found[w] for w in words])


def log_probabilities(batches, n):
    out = np.zeros((n, 0)).tolist()
    for batch in batches:
        shared = np.asarray(batch.shared) - np.asarray(batch.log_z)[:, None]
        for row, at in zip(np.asarray(batch.rows).tolist(), np.asarray(batch.batch_rows).tolist()):
            out[row] = shared[at]
    return np.array(out)


def test_pruned_vocabulary_mode_reads_as_the_plain_sentence_scores(
    real_scorer, real_checkpoint, vocabulary
):
    """Gold ranks, average precision and the top 5 from tacit's pruned vocabulary mode equal
    those of every word's plain sentence score; the words scored exactly equal it to 1e-3 nats;
    and the real model's peaked scores leave some suffixes unscored."""
    words, ids = vocabulary
    golds = [[words.index(w) for w in gold if w in words] for gold in GOLDS]
    plain = causal_vocab_reference(str(real_checkpoint.directory), PROMPTS, ids)
    work = WorkCount()
    batches = list(
        work.passing(real_scorer.score_vocab(PROMPTS, ids, progress=False, needed=Needed(golds, 5)))
    )
    question = Question(PROMPTS, golds, 5)
    words_ = np.asarray(words, dtype=object)
    ours = reduce(batches, question, words_, torch.device("cpu"), None).ranking(words_)
    rows = torch.arange(len(PROMPTS))
    reference = ScoredBatch(
        rows, rows, torch.as_tensor(plain, dtype=torch.float32), torch.zeros(len(PROMPTS))
    )
    theirs = reduce([reference], question, words_, torch.device("cpu"), None).ranking(words_)
    np.testing.assert_array_equal(ours.top_index, theirs.top_index)
    np.testing.assert_allclose(ours.ap, theirs.ap, atol=1e-12)
    for row, gold in enumerate(golds):  # rows of fewer golds are padded
        np.testing.assert_array_equal(ours.rank[row, : len(gold)], theirs.rank[row, : len(gold)])
    scored = log_probabilities(batches, len(PROMPTS))
    for row, gold in enumerate(golds):
        exact = [*gold, *np.argsort(-plain[row])[:5]]
        np.testing.assert_allclose(scored[row][exact], plain[row][exact], atol=1e-3)
        assert (scored[row] >= plain[row] - 1e-3).all()  # the rest: upper bounds
    assert 0 < work.counts["vocab_suffixes"] < work.counts["vocab_suffixes_naive"]


def test_one_token_words_score_alike_in_both_modes(real_scorer, real_plain, vocabulary):
    """Vocabulary mode's score of a one-token word is span mode's sentence score less the text
    before the blank, which every word shares: one question, one answer."""
    words, ids = vocabulary
    vocab = log_probabilities(real_scorer.score_vocab(PROMPTS, ids, progress=False), len(PROMPTS))
    spans = real_scorer.score_spans(PROMPTS, words, progress=False).sentence
    model, tokenizer = real_plain
    for row, prompt in enumerate(PROMPTS):
        before = prompt.split("<mask>")[0].rstrip()
        shared = causal_logprobs(model, tokenizer, [before])[0].sum()
        np.testing.assert_allclose(vocab[row], spans[row] - shared, atol=1e-3)


def test_the_start_token_follows_the_rule(real_scorer, real_checkpoint):
    """SmolLM2's tokenizer names `<|im_start|>` its BOS without adding it: sentences start from
    `<|endoftext|>`; Gemma's adds `<bos>`: its own. The record says which, and why."""
    record = real_scorer.record()["start_token"]
    expected = {"smollm2": "<|endoftext|>", "gemma3": "<bos>"}[real_checkpoint.model.name]
    assert record["token"] == expected
    assert record["id"] == real_scorer.tokenizer.convert_tokens_to_ids(expected)
    assert record["rule"]
