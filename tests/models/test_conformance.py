"""Every model family against every question a probe can ask: it answers in the contract's
shape (tacit.models.base), or refuses in one line naming the model and what it cannot do.

And the fake scorer (tacit.models.fake), a stand-in with a real tokenizer and no weights, runs
the probes end to end through the same API a model does."""

from __future__ import annotations

import numpy as np
import pytest
from support_nli import save_nli_classifier
from transformers import AutoTokenizer

import tacit
from tacit.core.errors import TacitError
from tacit.models.answers import GenerationRequest, Sampling
from tacit.models.base import HOOKS, Scorer
from tacit.models.causal import CausalLMScorer
from tacit.models.classifier import NLIClassifier
from tacit.models.fake import FakeScorer
from tacit.models.masked import MaskedLMScorer
from tacit.models.seq2seq import Seq2SeqScorer

PROMPTS = ["A <mask> has fur.", "Everyone knows that a cat has <mask>.", "A <mask> has fur."]
SPANS = ["A bear", "fur", "a dog"]


@pytest.fixture(scope="module")
def families(tiny_bert, tiny_gpt2, tiny_t5, tmp_path_factory) -> dict[str, Scorer]:
    classifier = save_nli_classifier(
        tmp_path_factory.mktemp("conformance-clf"),
        {0: "entailment", 1: "neutral", 2: "contradiction"},
    )
    return {
        "masked": MaskedLMScorer(tiny_bert, device="cpu"),
        "causal": CausalLMScorer(tiny_gpt2, device="cpu"),
        "seq2seq": Seq2SeqScorer(tiny_t5, device="cpu"),
        "classifier": NLIClassifier(classifier, device="cpu"),
        "fake": FakeScorer(AutoTokenizer.from_pretrained(tiny_bert)),
    }


def ask(scorer: Scorer, capability: str) -> object:
    """The question of each capability, asked through the public method."""
    ids = np.arange(5, 9)
    at_end = [p for p in PROMPTS if p.endswith("<mask>.")]
    if capability == "vocab":
        prompts = PROMPTS if scorer.blank_anywhere else at_end
        return list(scorer.score_vocab(prompts, ids, progress=False)), len(prompts)
    if capability == "words":
        return list(scorer.score_words(PROMPTS, ids, ["a", "b", "c", "d"], progress=False))
    if capability == "spans":
        return scorer.score_spans(PROMPTS, SPANS, progress=False)
    if capability == "encode":
        return scorer.encode(["the cat <mask>", "a dog <mask> here"], progress=False)
    if capability == "tokens":
        return scorer.token_scores(["the cat sat.", "a dog", "the cat sat."], progress=False)
    if capability == "generate":
        asked = [GenerationRequest.text(t) for t in ("the cat", "a dog", "the cat")]
        return scorer.generate(asked, Sampling(n=2, max_tokens=3), progress=False)
    return scorer.label_probabilities(["It rained."], ["The ground is wet."], progress=False)


def answers(scorer: Scorer, capability: str) -> bool:
    """What the family declares it answers: `words` (a blank anywhere, over some words) by
    reading the blank itself where it can, else by putting each word in it."""
    if capability == "words":
        return scorer.can("vocab") and (scorer.blank_anywhere or scorer.can("words"))
    return scorer.can(capability)


@pytest.mark.parametrize("capability", list(HOOKS))
@pytest.mark.parametrize("family", ["masked", "causal", "seq2seq", "classifier", "fake"])
def test_each_family_answers_or_refuses_each_question(families, family, capability):
    scorer = families[family]
    if not answers(scorer, capability):
        with pytest.raises(TacitError) as refused:
            ask(scorer, capability)
        message = str(refused.value)
        assert "\n" not in message and scorer.name in message and "cannot" in message
        return
    answer = ask(scorer, capability)
    if capability == "vocab":
        batches, n = answer
        rows = sorted(r for b in batches for r in b.rows.tolist())
        assert rows == list(range(n))  # every prompt in exactly one batch
        assert all(b.shared.shape[1] == 4 for b in batches)
    elif capability == "words":
        rows = sorted(r for b in answer for r in b.rows.tolist())
        assert rows == list(range(len(PROMPTS)))
    elif capability == "spans":
        assert answer.span.shape == answer.n_tokens.shape == (len(PROMPTS), len(SPANS))
        np.testing.assert_array_equal(answer.span[0], answer.span[2])  # a repeated template
        assert set(answer.work) and all(v > 0 for v in answer.work.values())
    elif capability == "encode":
        features, cut = answer
        assert features.shape[0] == 2 and cut == 0
    elif capability == "tokens":
        assert len(answer) == 3 and answer[0].tokens == answer[2].tokens  # in the order asked
        for scores in answer:
            assert len(scores.tokens) == len(scores.logprob) == len(scores.offsets) > 0
            assert (scores.logprob <= 0).all()
    elif capability == "generate":
        assert [len(completions) for completions in answer] == [2, 2, 2]  # N each, in order
        assert answer[0] == answer[2]  # a repeated request
        assert all(0 < c.completion_tokens <= 3 for completions in answer for c in completions)
    else:
        probs, too_long = answer
        np.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-6)
        assert too_long.tolist() == [False]


def test_a_family_declares_what_it_implements():
    with pytest.raises(TypeError, match="capabilities say otherwise"):

        class Liar(MaskedLMScorer):  # says it encodes nothing, yet implements _encode
            capabilities = frozenset({"vocab", "spans"})


def test_the_fake_scorer_runs_the_probes_end_to_end(tiny_bert, toy_norms_path):
    """Fast probe tests: no weights load, yet every stage runs (vocabulary, prompts, runner,
    summary, report); the same text scores the same in a second run."""
    fake = FakeScorer(AutoTokenizer.from_pretrained(tiny_bert), name="fake")
    first = tacit.retrieve([fake], norms=toy_norms_path, max_props=3, quiet=True)
    again = tacit.retrieve([fake], norms=toy_norms_path, max_props=3, quiet=True)
    assert list(first.prompts["model"].unique()) == ["fake"]
    np.testing.assert_array_equal(first.prompts["rank"], again.prompts["rank"])
    assert first.manifest["models"][0]["class"] == "FakeScorer"
    spans = tacit.retrieve(
        [fake], norms=toy_norms_path, max_props=2, candidates="concepts", quiet=True
    )
    assert spans.manifest["span_work"]["span_rows"] > 0
    elicited = tacit.elicit([fake], norms=toy_norms_path, relations=["has"], quiet=True)
    assert set(elicited.summary["relation"]) == {"has"}
