"""Instruct models' chat templates (tacit.models.chat, `chat_template=` on a causal model): the
sentence scored after the conversation the template writes, equal to the plain computation
(the template rendered by transformers, its tokens prepended, only the sentence's tokens
summed); recorded in the manifest; a template file the same as the tokenizer's; refusals in one
line. A tiny random GPT-2 whose tokenizer is given a made-up template of the common shape (a
role marker, the message, an end marker)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from support import chat_logprobs, fails_cleanly, sentence_of
from transformers import AutoModelForCausalLM, AutoTokenizer

import tacit
from tacit.core.errors import TacitError
from tacit.models.causal import CausalLMScorer
from tacit.models.chat import REQUEST
from tacit.models.masked import MaskedLMScorer

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}"
    "{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
TEMPLATES = ["A <mask> has fur.", "Everyone knows that a bear has <mask>.", "<mask> has claws."]
SPANS = ["bear", "fur", "a tail", "A coffee machine"]


@pytest.fixture(scope="module")
def instruct(tiny_gpt2, tmp_path_factory) -> str:
    """The tiny GPT-2 with TEMPLATE as its tokenizer's chat template."""
    directory = tmp_path_factory.mktemp("instruct")
    shutil.copytree(tiny_gpt2, directory, dirs_exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(directory)
    return str(directory)


@pytest.mark.parametrize("cache", [True, False])
def test_spans_after_the_chat_prefix_equal_the_plain_computation(instruct, cache):
    scorer = CausalLMScorer(f"{instruct},chat_template=true", device="cpu", batch_size=3)
    got = scorer.score_spans(TEMPLATES, SPANS, progress=False, cache=cache)
    sentences = [sentence_of(t, s)[0] for t in TEMPLATES for s in SPANS]
    expected = np.reshape(
        [lp.sum() for lp in chat_logprobs(instruct, sentences)], got.sentence.shape
    )
    np.testing.assert_allclose(got.sentence, expected, atol=1e-5)
    bare = CausalLMScorer(instruct, device="cpu").score_spans(TEMPLATES, SPANS, progress=False)
    assert np.abs(bare.sentence - got.sentence).max() > 1e-3  # the prefix is read


def test_vocabulary_after_the_chat_prefix(instruct):
    """Vocabulary mode, a blank with nothing after it: the next-token distribution after the
    chat prefix and the words before the blank, as transformers gives it."""
    scorer = CausalLMScorer(instruct, device="cpu", chat_template="true")
    ids = np.arange(100, 140)
    (batch,) = scorer.score_vocab(["Everyone knows that a bear has <mask>"], ids, progress=False)
    tokenizer = AutoTokenizer.from_pretrained(instruct)
    model = AutoModelForCausalLM.from_pretrained(instruct).eval()
    prefix = tokenizer.apply_chat_template(
        [{"role": "user", "content": REQUEST}], add_generation_prompt=True, tokenize=False
    )
    text = tokenizer(prefix + "Everyone knows that a bear has", add_special_tokens=False)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([text["input_ids"]])).logits[0, -1].double()
    expected = torch.log_softmax(logits, -1)[ids].numpy()
    np.testing.assert_allclose(
        (batch.shared - batch.log_z[:, None]).numpy()[0], expected, atol=1e-5
    )


def test_a_template_file_is_the_same_and_recorded(instruct, toy_norms_path, tmp_path):
    """From the API, `model_args` gives every model the option; the manifest says where the
    template came from, its sha256, the user's turn and the prefix."""
    jinja = tmp_path / "chat.jinja"
    jinja.write_text(TEMPLATE)
    runs = {}
    for setting in ["true", str(jinja)]:
        runs[setting] = tacit.retrieve(
            [instruct],
            norms=toy_norms_path,
            max_props=2,
            candidates="concepts",
            model_args={"chat_template": setting},
            quiet=True,
        )
    by_tokenizer, by_file = (runs[s].manifest["models"][0]["chat_template"] for s in runs)
    assert by_tokenizer["source"] == "tokenizer" and by_file["source"] == str(jinja.resolve())
    assert by_tokenizer["sha256"] == by_file["sha256"]
    assert by_tokenizer["prefix"] == f"<|user|>\n{REQUEST}<|assistant|>\n"  # trim_blocks
    assert by_tokenizer["user"] == REQUEST and by_tokenizer["prefix_tokens"] > 5
    assert runs["true"].manifest["models"][0]["start_token"]["replaced_by"] == "chat_template"
    ranks = [runs[s].prompts["rank"].tolist() for s in runs]
    assert ranks[0] == ranks[1]
    plain = tacit.retrieve(
        [instruct], norms=toy_norms_path, max_props=2, candidates="concepts", quiet=True
    )
    assert "chat_template" not in plain.manifest["models"][0]


def test_refusals_are_one_line(instruct, tiny_gpt2, tiny_bert, toy_norms_path, tmp_path):
    """A tokenizer without a template, a template that does not put the answer right after
    the turn it opens, an unreadable file, a masked model: each refused before scoring."""
    args = ["retrieve", "--norms", toy_norms_path, "--candidates", "concepts", "-q"]
    out = tmp_path / "run"
    fails_cleanly([*args, "-m", f"{tiny_gpt2},chat_template=true", "--out", out], "no chat")
    odd = tmp_path / "odd.jinja"
    odd.write_text(
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}Answer:{% endif %}"
    )
    fails_cleanly([*args, "-m", f"{instruct},chat_template={odd}", "--out", out], "right after")
    missing = tmp_path / "missing.jinja"
    fails_cleanly([*args, "-m", f"{instruct},chat_template={missing}"], "cannot read")
    with pytest.raises(TacitError, match="causal") as refused:
        MaskedLMScorer(f"{tiny_bert},chat_template=true", device="cpu")
    assert "\n" not in str(refused.value)
    manifest = out / "manifest.json"
    assert not manifest.exists() or "chat_template" not in json.loads(manifest.read_text())


def test_the_score_cache_keeps_chat_answers_apart(instruct, toy_norms_path, tmp_path):
    """`--cache`: a model read through its chat template never takes the answers it gave to
    bare sentences (the template is part of the model's identity), and reads its own back."""
    cache = tmp_path / "cache"
    kept = {}
    for name, model in [
        ("bare", instruct),
        ("chat", f"{instruct},chat_template=true"),
        ("again", f"{instruct},chat_template=true"),
    ]:
        result = tacit.retrieve(
            [model],
            norms=toy_norms_path,
            max_props=1,
            candidates="concepts",
            cache=str(cache),
            quiet=True,
        )
        kept[name] = result.manifest["models"][0]["cache"]
    assert kept["chat"]["found"] == 0 and kept["chat"]["model"] != kept["bare"]["model"]
    assert kept["again"]["found"] == kept["chat"]["scored"] > 0


def test_token_scores_after_the_chat_prefix(instruct):
    """Each token's log-probability (`probe surprisal`'s) after the chat prefix, as the plain
    computation gives it; the prefix's tokens are not among the text's."""
    scorer = CausalLMScorer(f"{instruct},chat_template=true", device="cpu")
    texts = ["A bear has fur.", "Everyone knows that a knife is sharp."]
    got = scorer.token_scores(texts, progress=False)
    for scores, expected in zip(got, chat_logprobs(instruct, texts)):
        assert len(scores.tokens) == len(expected)
        np.testing.assert_allclose(scores.logprob, expected, atol=1e-5)
