"""Per-token scores of candidate spans (`score_spans(..., tokens=True)`, issue 41): for every
family that scores spans, each pair's tokens and their terms come from the same pass as the
sums; they add up to the span's score (float tolerance), their count is `n_tokens`, and asking
for them changes no sum. A causal LM's equal `token_scores` of the filled sentence on the
span's tokens; a masked LM's one-token span equals its PLL when scored `independent`. The
score cache keeps them with the sums."""

from __future__ import annotations

import numpy as np
import pytest
from support_server import TestServer
from transformers import AutoTokenizer

import tacit
from tacit.core.blank import filled
from tacit.core.errors import TacitError
from tacit.models import load_scorer
from tacit.models.base import Scorer
from tacit.models.causal import CausalLMScorer
from tacit.models.fake import FakeScorer
from tacit.models.masked import MaskedLMScorer
from tacit.models.score_cache import ScoreCache
from tacit.models.seq2seq import Seq2SeqScorer

TEMPLATES = [
    "<mask> has fur, is big, and has claws.",
    "Everyone knows that a bear has <mask>.",
    "A knife is made of <mask>",
    "<mask> has fur, is big, and has claws.",  # repeated: scored once, in its place
]
SPANS = ["A bear", "fur", "four legs", "An aardvark", "sharp metal claws", "fur"]


def assert_tokens_add_up(scorer: Scorer, **options) -> None:
    """The invariant of every family: the same sums with tokens as without, the tokens' terms
    adding up to them, as many as n_tokens, each token a non-empty text."""
    plain = scorer.score_spans(TEMPLATES, SPANS, progress=False, **options)
    got = scorer.score_spans(TEMPLATES, SPANS, progress=False, tokens=True, **options)
    assert plain.tokens is None  # the default pass keeps none
    np.testing.assert_array_equal(got.span, plain.span)
    np.testing.assert_array_equal(got.n_tokens, plain.n_tokens)
    if plain.sentence is not None:
        np.testing.assert_array_equal(got.sentence, plain.sentence)
    assert got.tokens is not None and got.tokens.shape == got.span.shape
    for (t, s), found in np.ndenumerate(got.tokens):
        assert len(found.tokens) == len(found.logprob) == got.n_tokens[t, s]
        assert all(isinstance(token, str) and token for token in found.tokens)
        assert found.logprob.dtype == np.float64 and (found.logprob <= 0).all()
        np.testing.assert_allclose(found.logprob.sum(), got.span[t, s], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("model", ["tiny_bert", "tiny_roberta"])
@pytest.mark.parametrize("scoring", ["l2r", "independent"])
def test_masked_span_tokens_add_up(request, model, scoring):
    scorer = MaskedLMScorer(request.getfixturevalue(model), device="cpu", batch_size=3)
    assert_tokens_add_up(scorer, scoring=scoring)


def test_masked_span_tokens_are_the_spans_tokens_in_the_sentence(tiny_roberta):
    """RoBERTa's sentence-initial span has no leading space; later ones have it."""
    scorer = MaskedLMScorer(tiny_roberta, device="cpu")
    got = scorer.score_spans(["<mask> has fur.", "It is <mask>."], ["A bear"], tokens=True)
    assert got.tokens is not None
    assert got.tokens[0, 0].tokens == ("A", "Ġbear")
    assert got.tokens[1, 0].tokens == ("ĠA", "Ġbear")


@pytest.mark.parametrize("model", ["tiny_gpt2", "tiny_llama"])
@pytest.mark.parametrize("cache", [True, False])
def test_causal_span_tokens_are_the_sentences_token_scores(request, model, cache):
    """With the prefix's key/value cache or each sentence whole: the span's tokens and terms
    are those token_scores gives the filled sentence at the tokens overlapping the span."""
    scorer = CausalLMScorer(request.getfixturevalue(model), device="cpu", batch_size=4)
    assert_tokens_add_up(scorer, cache=cache)
    got = scorer.score_spans(TEMPLATES, SPANS, progress=False, tokens=True, cache=cache)
    assert got.tokens is not None
    for t, template in enumerate(TEMPLATES):
        for s, span in enumerate(SPANS):
            sentence, first, last = filled(template, span)
            whole = scorer.token_scores([sentence], progress=False)[0]
            inside = (whole.offsets[:, 0] < last) & (whole.offsets[:, 1] > first)
            assert got.tokens[t, s].tokens == tuple(np.asarray(whole.tokens)[inside])
            np.testing.assert_allclose(got.tokens[t, s].logprob, whole.logprob[inside], atol=1e-5)


@pytest.mark.parametrize("cache", [True, False])
def test_seq2seq_span_tokens_add_up(tiny_t5, cache):
    scorer = Seq2SeqScorer(tiny_t5, device="cpu", batch_size=5)
    assert_tokens_add_up(scorer, cache=cache)
    got = scorer.score_spans(["A <mask> has fur."], ["bear"], progress=False, tokens=True)
    assert got.tokens is not None
    assert "<extra_id_0>" not in got.tokens[0, 0].tokens  # the sentinels' terms are not the span's


def test_fake_span_tokens_add_up(tiny_bert):
    assert_tokens_add_up(FakeScorer(AutoTokenizer.from_pretrained(tiny_bert)))


@pytest.mark.slow
def test_served_span_tokens_equal_in_process(tiny_gpt2):
    """The server family's tokens are the echo's texts (` bear`), its terms the in-process
    model's."""
    in_process = CausalLMScorer(tiny_gpt2, device="cpu")
    with TestServer(tiny_gpt2) as server:
        served = load_scorer(server.spec(tokenizer=tiny_gpt2), tacit.RunOptions(quiet=True))
        assert_tokens_add_up(served)
        got = served.score_spans(TEMPLATES, SPANS, progress=False, tokens=True)
    want = in_process.score_spans(TEMPLATES, SPANS, progress=False, tokens=True)
    assert got.tokens is not None and want.tokens is not None
    for (t, s), found in np.ndenumerate(got.tokens):
        np.testing.assert_allclose(found.logprob, want.tokens[t, s].logprob, atol=1e-5)
        decoded = [
            in_process.tokenizer.convert_tokens_to_string([n]) for n in want.tokens[t, s].tokens
        ]
        assert list(found.tokens) == decoded


def test_the_score_cache_keeps_the_tokens(tiny_gpt2, tmp_path):
    """A run with tokens rescores the rows kept without them and keeps them with them; then
    either kind of run reads them, with the same sums and tokens as fresh scoring."""
    scorer = CausalLMScorer(tiny_gpt2, device="cpu")
    fresh = scorer.score_spans(TEMPLATES, SPANS, progress=False, tokens=True)
    scorer.cache = ScoreCache(tmp_path, scorer.record())
    scorer.score_spans(TEMPLATES, SPANS, progress=False)  # kept without tokens
    assert (scorer.cache.found, scorer.cache.scored) == (0, 3)
    first = scorer.score_spans(TEMPLATES, SPANS, progress=False, tokens=True)
    assert (scorer.cache.found, scorer.cache.scored) == (0, 6)  # no tokens kept: scored again
    again = scorer.score_spans(TEMPLATES, SPANS, progress=False, tokens=True)
    plain = scorer.score_spans(TEMPLATES, SPANS, progress=False)
    assert (scorer.cache.found, scorer.cache.scored) == (6, 6)
    assert plain.tokens is None
    for got in (first, again, plain):
        np.testing.assert_array_equal(got.span, fresh.span)
        np.testing.assert_array_equal(got.n_tokens, fresh.n_tokens)
    assert fresh.tokens is not None and again.tokens is not None
    for (t, s), found in np.ndenumerate(again.tokens):
        assert found.tokens == fresh.tokens[t, s].tokens
        np.testing.assert_array_equal(found.logprob, fresh.tokens[t, s].logprob)


def test_a_family_whose_hook_takes_no_tokens_is_one_line(tiny_bert):
    """A family written before per-token scores (its `_span_scores` takes no `tokens`) still
    scores spans, and says in one line that it cannot keep their tokens."""

    class Older(FakeScorer):
        def _span_scores(self, templates, spans, scoring, progress, cache):  # type: ignore[override]
            return super()._span_scores(templates, spans, scoring, progress, cache)

    scorer = Older(AutoTokenizer.from_pretrained(tiny_bert), name="older")
    assert scorer.score_spans(["<mask> has fur."], ["A bear"], progress=False).tokens is None
    with pytest.raises(TacitError, match="^older is a masked model: it cannot keep the per-token"):
        scorer.score_spans(["<mask> has fur."], ["A bear"], progress=False, tokens=True)
