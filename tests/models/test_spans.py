"""Candidate spans of any length in the blank, scored exactly (issue 17): the prefix tree and
the batching change no score; checked against a plain computation, one candidate and one step
at a time."""

from __future__ import annotations

import numpy as np
import pytest
from support import plain_span_scores
from transformers import AutoTokenizer

from tacit.core.errors import TacitError
from tacit.models.masked import MaskedLMScorer
from tacit.models.masked_spans import span_tokens_in_context

TEMPLATES = [
    "<mask> has fur, is big, and has claws.",
    "<mask> has a tail.",
    "Everyone knows that a knife is made of <mask>.",
]
SPANS = ["A bear", "An apple", "A cat", "Scissors", "A knife", "the dog and a cat", "metal"]


@pytest.fixture(params=["tiny_bert", "tiny_roberta", "real_bert", "real_roberta"])
def model_dir(request) -> str:
    return request.getfixturevalue(request.param)


@pytest.mark.slow
@pytest.mark.parametrize("scoring", ["l2r", "independent"])
def test_span_scores_equal_the_plain_computation(model_dir, scoring):
    scorer = MaskedLMScorer(model_dir, batch_size=64)
    got = scorer.score_spans(TEMPLATES, SPANS, scoring=scoring, progress=False)
    want, lengths = plain_span_scores(model_dir, TEMPLATES, SPANS, scoring)
    np.testing.assert_array_equal(got.n_tokens, lengths)
    np.testing.assert_allclose(got.span, want, rtol=1e-5, atol=1e-4)
    assert got.sentence is None
    # the tree shares rows: fewer rows than one pass per token per pair, never more
    work = got.work
    assert 0 < work["span_rows"] <= work["span_rows_naive"]
    if scoring == "l2r" and lengths.max() > 1:
        assert work["span_rows"] < work["span_rows_naive"]


def test_batch_size_and_repeats_change_no_score(tiny_roberta):
    templates = [*TEMPLATES, TEMPLATES[0]]  # a repeated template is scored once
    one = MaskedLMScorer(tiny_roberta, batch_size=1)
    many = MaskedLMScorer(tiny_roberta, batch_size=64)
    a = one.score_spans(templates, SPANS, progress=False)
    b = many.score_spans(templates, [*SPANS[::-1]], progress=False)
    np.testing.assert_allclose(a.span, b.span[:, ::-1], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(a.span[0], a.span[-1])
    assert a.work == b.work


def test_spans_take_their_in_sentence_form(real_roberta):
    """RoBERTa reads a sentence-initial span without a leading space, and one after a word with
    it ("Ġbear"): the tokens are those of the whole sentence."""
    tokenizer = AutoTokenizer.from_pretrained(real_roberta)
    ((left, first, _),) = span_tokens_in_context(tokenizer, "<mask> has fur.", ["A bear"])
    ((_, later, _),) = span_tokens_in_context(tokenizer, "It is <mask>.", ["a bear"])
    assert tokenizer.convert_ids_to_tokens(list(first)) == ["A", "Ġbear"]
    assert tokenizer.convert_ids_to_tokens(list(later)) == ["Ġa", "Ġbear"]
    assert left == (tokenizer.bos_token_id,)


def test_bad_templates_and_spans_are_one_line_errors(tiny_bert):
    scorer = MaskedLMScorer(tiny_bert)
    with pytest.raises(TacitError, match="exactly once"):
        scorer.score_spans(["no blank here."], ["A bear"], progress=False)
    with pytest.raises(TacitError, match="no tokens"):
        scorer.score_spans(["<mask> has fur."], [" "], progress=False)
    with pytest.raises(TacitError, match="^span_scoring 'right'"):
        scorer.score_spans(["<mask> has fur."], ["A bear"], scoring="right", progress=False)
