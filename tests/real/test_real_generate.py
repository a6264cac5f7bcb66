"""Generation on real weights: SmolLM2-135M-Instruct in-process with its own chat template
(ChatML, its default system turn), greedy, equals a plain transformers `generate` of the same
conversation (apply_chat_template, the assistant's turn opened), batched or not. Kept cheap:
three short questions, 16 tokens each."""

from __future__ import annotations

import pytest
import torch
from support import plain_causal

from tacit.models.answers import GenerationRequest, Sampling
from tacit.models.causal import CausalLMScorer

pytestmark = pytest.mark.real

QUESTIONS = [
    "Which animal has fur, is big, and has claws? Answer in one word.",
    "Name three things a knife has.",
    "What is a robin?",
]
MAX_TOKENS = 16


def test_smollm2_greedy_answers_equal_plain_generate(smollm2):
    scorer = CausalLMScorer(str(smollm2.directory), device="cpu", batch_size=3)
    requests = [GenerationRequest.chat([{"role": "user", "content": q}]) for q in QUESTIONS]
    got = scorer.generate(requests, Sampling(max_tokens=MAX_TOKENS), progress=False)
    model, tokenizer = plain_causal(smollm2.directory)
    for request, (completion,) in zip(requests, got):
        inputs = tokenizer.apply_chat_template(
            list(request.messages),
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        with torch.no_grad():
            out = model.generate(**inputs, do_sample=False, max_new_tokens=MAX_TOKENS)
        new = out[0, inputs["input_ids"].shape[1] :].tolist()
        assert completion.text == tokenizer.decode(new, skip_special_tokens=True)
        assert completion.text.strip()  # an instruct model answers in words
        ended = tokenizer.convert_tokens_to_ids("<|im_end|>") in new
        assert completion.finish_reason == ("stop" if ended else "length")
        assert completion.prompt_tokens == inputs["input_ids"].shape[1]


def test_smollm2_system_none_cuts_its_default_system_turn(smollm2):
    """`system=none` writes the conversation without the system turn SmolLM2's template adds
    by itself (as for scoring): the user's turn first, then the assistant's opened."""
    from tacit.models.causal_generate import prompt_ids

    scorer = CausalLMScorer(f"{smollm2.directory},chat_template=true,system=none", device="cpu")
    request = GenerationRequest.chat([{"role": "user", "content": QUESTIONS[0]}])
    text = scorer.tokenizer.decode(prompt_ids(scorer, request))
    assert text == f"<|im_start|>user\n{QUESTIONS[0]}<|im_end|>\n<|im_start|>assistant\n"
    default = CausalLMScorer(str(smollm2.directory), device="cpu")
    assert scorer.tokenizer.decode(prompt_ids(default, request)).startswith(
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM"
    )
