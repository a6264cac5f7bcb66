"""Every token's log-probability (`Scorer.token_scores`, the `tokens` capability): against a
plain computation written here, one text and one token at a time (causal: the start token and
the text in one forward pass, support.causal_logprobs; masked: each token's own masked copy of
the text, as Salazar et al. 2020 and Kauf & Ivanova 2023 define the pseudo-log-likelihood),
and against minicons run live on the same model folders where it is installed.

minicons' masked scorer is called through its own steps (`prepare_text` on the tokenizer's
encoding, then `compute_stats`): `MaskedLMScorer.token_score` does exactly that, but the
release on the package index (0.3.39) encodes with `batch_encode_plus`, which transformers 5
removed; minicons' main branch encodes as `tokenizer(texts, padding="longest")`, as here.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import causal_logprobs, plain_causal
from transformers import AutoModelForMaskedLM, AutoTokenizer

from tacit.core.errors import TacitError
from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer
from tacit.probes.surprisal.words import word_of_tokens, word_spans

TEXTS = [
    "A bear has fur.",
    "Everyone knows that a zebra has stripes, doesn't it?",
    "The unbelievably tiny aardvark snored twice (in 2024)!",
]
TOLERANCE = 1e-5  # nats, on a token's log-probability (float32 sums in another order)


def plain_pll(directory: str, texts: list[str], pll: str) -> list[np.ndarray]:
    """Each token's pseudo-log-likelihood, one masked copy of the text at a time: token i
    masked (with `within_word_l2r`, the later tokens of its word too: the tokenizer's words),
    the special tokens around the text seen and never scored."""
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForMaskedLM.from_pretrained(directory).eval()
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    out = []
    for text in texts:
        encoded = tokenizer(text)
        ids, word_of = encoded["input_ids"], encoded.word_ids()
        scores = []
        for i, token in enumerate(ids):
            if token in special:
                continue
            masked = list(ids)
            for j in range(i, len(ids)):
                later = pll == "within_word_l2r" and word_of[i] is not None
                if j == i or (later and word_of[j] == word_of[i]):
                    masked[j] = tokenizer.mask_token_id
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([masked])).logits[0, i].double()
            scores.append(torch.log_softmax(logits, -1)[token].item())
        out.append(np.array(scores))
    return out


def largest(pairs) -> float:
    return max(float(np.max(np.abs(np.subtract(a, b)))) for a, b in pairs)


@pytest.mark.slow
@pytest.mark.parametrize("pll", ["original", "within_word_l2r"])
@pytest.mark.parametrize("model", ["real_bert", "real_roberta"])
def test_masked_pll_equals_the_plain_computation(model, pll, request):
    directory = request.getfixturevalue(model)
    scorer = MaskedLMScorer(directory, device="cpu", batch_size=4)
    scores = scorer.token_scores(TEXTS, pll=pll, progress=False)
    assert largest(zip((s.logprob for s in scores), plain_pll(directory, TEXTS, pll))) < TOLERANCE
    for text, score in zip(TEXTS, scores):  # the text's tokens, no [CLS] or [SEP]
        assert_tokens_of(scorer.tokenizer, text, score)
        assert score.logprob.dtype == np.float64 and (score.logprob < 0).all()


def assert_tokens_of(tokenizer, text: str, score) -> None:
    """The scores are of the text's own tokens, as the tokenizer writes them, each at its
    characters in the text (these texts are ASCII: a token decodes alone)."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert score.tokens == tuple(tokenizer.convert_ids_to_tokens(ids))
    for token_id, (start, end) in zip(ids, score.offsets.tolist()):
        written = tokenizer.decode([token_id]).strip().removeprefix("##")
        assert text[start:end].strip() == written


def test_the_rows_mask_what_each_metric_says(real_bert):
    """One row per token, read at that token: `original` masks it alone, `within_word_l2r`
    with the later tokens of its word (BERT's words: `aardvark` is a ##ard ##var ##k)."""
    from tacit.models.masked_pll import plan_tokens

    scorer = MaskedLMScorer(real_bert, device="cpu")
    encoded = scorer.tokenizer(["The aardvark snored."])
    tokens = scorer.tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    assert tokens[1:6] == ["The", "a", "##ard", "##var", "##k"]
    masked = {}
    for pll in ("original", "within_word_l2r"):
        plan, scored = plan_tokens(scorer, encoded, pll)
        assert scored == [list(range(1, len(tokens) - 1))]  # all but [CLS] and [SEP]
        assert [reads for reads in plan.reads] == [[i] for i in scored[0]]
        mask = scorer.tokenizer.mask_token_id
        masked[pll] = [[j for j, t in enumerate(row) if t == mask] for row in plan.rows]
    assert masked["original"] == [[i] for i in scored[0]]
    assert masked["within_word_l2r"][:5] == [[1], [2, 3, 4, 5], [3, 4, 5], [4, 5], [5]]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny_gpt2", "tiny_llama"])
def test_causal_token_scores_equal_the_plain_computation(model, request):
    """log P(token | the start token and the tokens before it), the start token as the
    scorer's own rule picks it (start_id: GPT-2's <|endoftext|>, the Llama-shaped model's
    <s>), batched longest first."""
    directory = request.getfixturevalue(model)
    scorer = CausalLMScorer(directory, device="cpu", batch_size=2)
    scores = scorer.token_scores(TEXTS + TEXTS[:1], progress=False)
    plain = causal_logprobs(*plain_causal(directory), TEXTS, scorer.start_id)
    assert largest(zip((s.logprob for s in scores), plain)) < TOLERANCE
    np.testing.assert_array_equal(scores[0].logprob, scores[-1].logprob)  # scored once
    for text, score in zip(TEXTS, scores):
        assert_tokens_of(scorer.tokenizer, text, score)


@pytest.mark.slow
def test_a_text_too_long_and_a_pll_not_known_are_one_line(tiny_gpt2, tiny_bert):
    causal = CausalLMScorer(tiny_gpt2, device="cpu")
    with pytest.raises(TacitError, match=r"tokens: longer than .* takes \(128\)"):
        causal.token_scores(["fur " * 200], progress=False)
    masked = MaskedLMScorer(tiny_bert, device="cpu")
    with pytest.raises(TacitError, match="pll 'l2r': expected one of original, within_word_l2r"):
        masked.token_scores(TEXTS, pll="l2r", progress=False)


# --- minicons, live ------------------------------------------------------------------------


def minicons_masked(directory: str, texts: list[str], pll: str) -> list[np.ndarray]:
    """minicons' MaskedLMScorer.token_score's steps (see the module docstring)."""
    scorer = pytest.importorskip("minicons.scorer", reason="minicons is not installed")
    lm = scorer.MaskedLMScorer(directory, "cpu")
    encoded = lm.tokenizer(texts, padding="longest", return_attention_mask=True)
    stats = lm.compute_stats(list(lm.prepare_text(encoded, PLL_metric=pll)), return_tensors=True)
    return [s.numpy() for s in stats]


@pytest.mark.parametrize("pll", ["original", "within_word_l2r"])
@pytest.mark.parametrize("model", ["real_bert", "real_roberta"])
def test_masked_pll_equals_minicons(model, pll, request):
    pytest.importorskip("minicons", reason="minicons is not installed (pip install minicons)")
    directory = request.getfixturevalue(model)
    ours = MaskedLMScorer(directory, device="cpu", batch_size=4).token_scores(
        TEXTS, pll=pll, progress=False
    )
    theirs = minicons_masked(directory, TEXTS, pll)
    assert largest(zip((s.logprob for s in ours), theirs)) < TOLERANCE


@pytest.mark.parametrize("model", ["tiny_gpt2", "tiny_llama"])
def test_causal_tokens_and_words_equal_minicons(model, request):
    """minicons' token_score and word_score_tokenized(tokenize_function=str.split), with
    `bos_token=True` (these tokenizers add no start token of their own: minicons then puts the
    tokenizer's BOS first), against tacit started from the same token (`start_token=bos`; its
    own rule may take another: the Llama-shaped model's EOS)."""
    scorer = pytest.importorskip("minicons.scorer", reason="minicons is not installed")
    directory = request.getfixturevalue(model)
    tacit_lm = CausalLMScorer(f"{directory},start_token=bos", device="cpu", batch_size=2)
    ours = tacit_lm.token_scores(TEXTS, progress=False)
    lm = scorer.IncrementalLMScorer(directory, "cpu")
    tokens = lm.token_score(TEXTS, bos_token=True)
    for theirs, mine in zip(tokens, ours):  # minicons' first: the start token, unscored
        assert [t for t, _ in theirs[1:]] == list(mine.tokens)
    assert largest(([s for _, s in t[1:]], m.logprob) for t, m in zip(tokens, ours)) < TOLERANCE
    words = lm.word_score_tokenized(TEXTS, tokenize_function=str.split, bos_token=True)
    for text, theirs, mine in zip(TEXTS, words, ours):
        spans = word_spans(text)
        sums = np.bincount(word_of_tokens(text, mine.offsets, spans), weights=mine.logprob)
        assert [w for w, _ in theirs] == [text[a:b] for a, b in spans.tolist()]
        np.testing.assert_allclose(sums, [s for _, s in theirs], rtol=0, atol=TOLERANCE)
