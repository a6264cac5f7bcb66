"""An instruct model's own chat template on real weights: SmolLM2-135M-Instruct, whose
tokenizer carries ChatML (a default system turn, `<|im_start|>ROLE ... <|im_end|>`), with
`chat_template=true`: the prefix is the one its template writes, and each sentence's score
after it equals the plain computation (support.chat_logprobs). Tolerance as in
test_real_spans.py (float32 sums in another order, batched and padded)."""

from __future__ import annotations

import numpy as np
import pytest
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
