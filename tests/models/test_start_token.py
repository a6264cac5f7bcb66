"""The token a causal model's sentences start from (tacit.models.causal.start_token): one rule
per kind of tokenizer, a loading option to choose another, and the choice in the manifest."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from support import (
    TOY_WORDS,
    fails_cleanly,
    real_gpt2_tokenizer,
    save_tiny_gpt2,
    sentencepiece_style_tokenizer,
    toy_gpt2_tokenizer,
)
from transformers import AutoModelForCausalLM
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec
from tacit.models.causal import CausalLMScorer
from tacit.models.start import start_token


def adding_bos(tokenizer):
    """The tokenizer made to put `<s>` before every text itself, as Llama's and Gemma's do."""
    from tokenizers.processors import TemplateProcessing

    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", tokenizer.bos_token_id)]
    )
    return tokenizer


def test_one_rule_per_kind_of_tokenizer(tmp_path):
    # GPT-2: no BOS of its own; `<|endoftext|>` is its BOS, EOS and end of text
    gpt2 = start_token(real_gpt2_tokenizer(), None)
    assert (gpt2.text, gpt2.id) == ("<|endoftext|>", 50260)
    assert gpt2.rule == "end of text (the tokenizer adds no BOS)"
    # declares a BOS it does not add (SmolLM2-Instruct's `<|im_start|>`, a chat token): the
    # end of text its family put between texts, not the declared BOS
    declared = real_gpt2_tokenizer(bos="<s>")
    assert declared("a")["input_ids"] == declared("a", add_special_tokens=False)["input_ids"]
    assert start_token(declared, None).text == "<|endoftext|>"
    # adds a BOS itself (Llama, Gemma, OPT): that one, the token the model saw first
    sentencepiece = sentencepiece_style_tokenizer()
    assert start_token(sentencepiece, None).text == "<|endoftext|>"
    own = start_token(adding_bos(sentencepiece), None)
    assert (own.text, own.rule) == ("<s>", "the tokenizer's own BOS")
    # no end of text in the vocabulary: its EOS
    toy = start_token(toy_gpt2_tokenizer(tmp_path / "toy"), None)
    assert (toy.text, toy.rule) == ("</s>", "EOS (the tokenizer adds no BOS)")


def test_a_start_token_asked_for():
    tokenizer = real_gpt2_tokenizer(bos="<s>")
    assert start_token(tokenizer, "bos").text == "<s>"
    assert start_token(tokenizer, "EOS").text == "</s>"
    assert start_token(tokenizer, "<|endoftext|>").id == 50260
    assert start_token(tokenizer, "bos").rule == "asked: bos"
    with pytest.raises(TacitError, match="=none: a causal model scores a sentence's first"):
        start_token(tokenizer, "none")
    with pytest.raises(TacitError, match="=<|nothing|>: not a token of its tokenizer"):
        start_token(tokenizer, "<|nothing|>")
    tokenizer.bos_token = None
    with pytest.raises(TacitError, match="=bos: the tokenizer has no BOS token"):
        start_token(tokenizer, "bos")


@pytest.mark.slow
def test_the_start_token_is_a_loading_option(tiny_llama):
    """`DIR,start_token=bos` scores every sentence from `<s>` (lm-evaluation-harness's and
    minicons' choice where a tokenizer declares a BOS), and the record says so."""
    spec = ModelSpec.parse(f"{tiny_llama},start_token=bos")
    assert spec.start_token == "bos" and spec.text.endswith(",start_token=bos")
    default = CausalLMScorer(tiny_llama, device="cpu")
    chosen = CausalLMScorer(f"{tiny_llama},start_token=bos", device="cpu")
    assert default.record()["start_token"] == {
        "token": "<|endoftext|>",
        "id": 50260,
        "rule": "end of text (the tokenizer adds no BOS)",
    }
    assert chosen.record()["start_token"] == {"token": "<s>", "id": 0, "rule": "asked: bos"}
    sentence = "A bear has fur."
    model = AutoModelForCausalLM.from_pretrained(tiny_llama).eval()
    ids = chosen.tokenizer(sentence, add_special_tokens=False)["input_ids"]
    for scorer, start in ((default, 50260), (chosen, 0)):
        got = scorer.score_spans(["<mask> has fur."], ["A bear"], progress=False).sentence
        tokens = torch.tensor([[start, *ids]])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(input_ids=tokens).logits[0].double(), -1)
        want = logprobs[:-1].gather(1, tokens[0, 1:].unsqueeze(1)).sum().item()
        np.testing.assert_allclose(got[0, 0], want, atol=1e-4)


@pytest.mark.slow
def test_the_manifest_records_the_start_token(tiny_gpt2, toy_norms_path, tmp_path):
    words = tmp_path / "words.txt"  # a small vocabulary: a random model's every suffix is scored
    words.write_text("\n".join(TOY_WORDS) + "\n")
    base = ["elicit", "--norms", str(toy_norms_path), "--relation", "has", "-q"]
    base += ["--vocab-file", str(words)]
    out = tmp_path / "run"
    model = f"{tiny_gpt2},start_token=eos"
    result = CliRunner().invoke(app, [*base, "-m", model, "--out", str(out)])
    assert result.exit_code == 0, result.output
    (record,) = json.loads((out / "manifest.json").read_text())["models"]
    assert record["start_token"] == {"token": "<|endoftext|>", "id": 50260, "rule": "asked: eos"}
    fails_cleanly(
        [*base, "-m", f"{tiny_gpt2},start_token=<|nothing|>", "--out", str(tmp_path / "bad")],
        "start_token=<|nothing|>: not a token of its tokenizer",
    )


def test_a_toy_model_starts_from_its_eos(tmp_path):
    """No ../shared needed: the toy BPE has no end-of-text token, so its EOS starts sentences."""
    model_dir = save_tiny_gpt2(tmp_path / "toy", toy_gpt2_tokenizer(tmp_path / "toy"))
    scorer = CausalLMScorer(str(model_dir), device="cpu")
    assert scorer.start_id == scorer.tokenizer.eos_token_id
    assert scorer.record()["start_token"]["token"] == "</s>"
