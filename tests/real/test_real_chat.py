"""An instruct model's own chat template on real weights: SmolLM2-135M-Instruct, whose
tokenizer carries ChatML (a default system turn, `<|im_start|>ROLE ... <|im_end|>`), with
`chat_template=true`: the prefix is the one its template writes, and each sentence's score
after it equals the plain computation (support.chat_logprobs). Tolerance as in
test_real_spans.py (float32 sums in another order, batched and padded)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import chat_logprobs, sentence_of
from support_real import SPANS, TEMPLATES

from tacit.models.causal import CausalLMScorer
from tacit.models.chat import REQUEST

pytestmark = pytest.mark.real

TOLERANCE = 1e-3  # nats, on a sentence's log-probability


def test_smollm2_sentences_after_its_own_chat_template(smollm2):
    scorer = CausalLMScorer(f"{smollm2.directory},chat_template=true", device="cpu")
    record = scorer.record()["chat_template"]
    assert record["source"] == "tokenizer"
    assert record["prefix"].startswith("<|im_start|>system\n")
    assert record["prefix"].endswith(
        f"<|im_start|>user\n{REQUEST}<|im_end|>\n<|im_start|>assistant\n"
    )
    templates, spans = TEMPLATES[:2], SPANS[:4]
    got = scorer.score_spans(templates, spans, progress=False)
    sentences = [sentence_of(t, s)[0] for t in templates for s in spans]
    expected = [lp.sum() for lp in chat_logprobs(smollm2.directory, sentences)]
    np.testing.assert_allclose(got.sentence.ravel(), expected, atol=TOLERANCE)


def test_smollm2_without_its_system_turn_or_with_another(smollm2):
    """SmolLM2's template writes "You are a helpful AI assistant named SmolLM, trained by
    Hugging Face" when given no system message (issue 47): `system=none` writes no system turn,
    `system=TEXT` writes that one, as transformers renders the same conversation; a sentence's
    score after the shorter prefix equals the plain computation on it."""
    from support import plain_causal
    from transformers import AutoTokenizer

    default = CausalLMScorer(f"{smollm2.directory},chat_template=true", device="cpu")
    assert (
        "You are a helpful AI assistant named SmolLM" in default.record()["chat_template"]["prefix"]
    )
    user = f"<|im_start|>user\n{REQUEST}<|im_end|>\n<|im_start|>assistant\n"
    none = CausalLMScorer(f"{smollm2.directory},chat_template=true,system=none", device="cpu")
    assert none.record()["chat_template"]["prefix"] == user
    tokenizer = AutoTokenizer.from_pretrained(smollm2.directory)
    mine = CausalLMScorer(
        f"{smollm2.directory},chat_template=true,system=Answer briefly.", device="cpu"
    )
    assert mine.record()["chat_template"]["prefix"] == tokenizer.apply_chat_template(
        [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": REQUEST}],
        add_generation_prompt=True,
        tokenize=False,
    )
    sentence = "A bear has fur."
    got = none.token_scores([sentence], progress=False)[0].logprob
    model, _ = plain_causal(smollm2.directory)
    context = tokenizer(user, add_special_tokens=False)["input_ids"]
    ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context + ids])).logits[0].double()
    logprobs = torch.log_softmax(logits, -1)[len(context) - 1 : -1]
    expected = logprobs.gather(1, torch.tensor(ids).unsqueeze(1)).squeeze(1).numpy()
    np.testing.assert_allclose(got, expected, atol=TOLERANCE)
