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
from support import CHAT_TEMPLATE, chat_logprobs, fails_cleanly, sentence_of, with_chat_template
from transformers import AutoModelForCausalLM, AutoTokenizer

import tacit
from tacit.core.errors import TacitError
from tacit.models.causal import CausalLMScorer
from tacit.models.chat import REQUEST
from tacit.models.masked import MaskedLMScorer

TEMPLATE = CHAT_TEMPLATE
TEMPLATES = ["A <mask> has fur.", "Everyone knows that a bear has <mask>.", "<mask> has claws."]
SPANS = ["bear", "fur", "a tail", "A coffee machine"]


@pytest.fixture(scope="module")
def instruct(tiny_gpt2, tmp_path_factory) -> str:
    """The tiny GPT-2 with TEMPLATE as its tokenizer's chat template."""
    return with_chat_template(tiny_gpt2, tmp_path_factory.mktemp("instruct"))


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# a template of the common shape that writes a system turn of its own when given none, as
# SmolLM2's and Qwen's do
WITH_SYSTEM = (
    "{% if messages[0]['role'] != 'system' %}<|system|>\nYou are a tiny test model.\n{% endif %}"
    + TEMPLATE
)


@pytest.fixture(scope="module")
def defaulting(tiny_gpt2, tmp_path_factory) -> str:
    """The tiny GPT-2 whose tokenizer's chat template writes a default system turn."""
    directory = tmp_path_factory.mktemp("defaulting")
    shutil.copytree(tiny_gpt2, directory, dirs_exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = WITH_SYSTEM
    tokenizer.save_pretrained(directory)
    return str(directory)


def _prefix(model: str) -> dict:
    return CausalLMScorer(model, device="cpu").record()["chat_template"]


@pytest.mark.slow
def test_the_system_message_is_set_dropped_or_left_as_the_template_writes_it(defaulting):
    """Issue 47: SmolLM2's template adds a system turn no doc mentioned, and nothing set or
    dropped it. `system=TEXT` writes yours, `system=none` none at all (the template's default
    turn cut out), no option the template's own; each recorded; the prefix is what
    transformers renders for that conversation."""
    user = f"<|user|>\n{REQUEST}<|assistant|>\n"
    own = _prefix(f"{defaulting},chat_template=true")
    assert own["prefix"] == f"<|system|>\nYou are a tiny test model.\n{user}"
    assert own["system"] == "default"
    mine = _prefix(f"{defaulting},chat_template=true,system=Answer in one sentence.")
    assert mine["prefix"] == f"<|system|>\nAnswer in one sentence.{user}"  # trim_blocks
    assert mine["system"] == "Answer in one sentence."
    tokenizer = AutoTokenizer.from_pretrained(defaulting)
    messages = [
        {"role": "system", "content": "Answer in one sentence."},
        {"role": "user", "content": REQUEST},
    ]
    rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert mine["prefix"] == rendered
    none = _prefix(f"{defaulting},chat_template=true,system=none")
    assert none["prefix"] == user and none["system"] == "none"


def test_no_system_turn_scores_as_the_plain_computation(defaulting):
    """With system=none, a sentence's score is that after the conversation without any system
    turn, computed plainly."""
    from support import plain_causal

    scorer = CausalLMScorer(f"{defaulting},chat_template=true,system=none", device="cpu")
    got = scorer.token_scores(["A bear has fur."], progress=False)[0]
    model, tokenizer = plain_causal(defaulting)
    context = tokenizer(f"<|user|>\n{REQUEST}<|assistant|>\n", add_special_tokens=False)
    ids = tokenizer("A bear has fur.", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context["input_ids"] + ids])).logits[0].double()
    logprobs = torch.log_softmax(logits, -1)[len(context["input_ids"]) - 1 : -1]
    expected = logprobs.gather(1, torch.tensor(ids).unsqueeze(1)).squeeze(1).numpy()
    np.testing.assert_allclose(got.logprob, expected, atol=1e-5)


@pytest.mark.slow
def test_the_system_option_is_recorded_and_refused_where_it_means_nothing(
    defaulting, instruct, tiny_gpt2, toy_norms_path, tmp_path
):
    result = tacit.retrieve(
        [f"{defaulting},chat_template=true,system=none"],
        norms=toy_norms_path,
        max_props=1,
        candidates="concepts",
        quiet=True,
    )
    record = result.manifest["models"][0]
    assert record["chat_template"]["system"] == "none"
    assert record["name"].endswith("chat_template=true,system=none")
    args = ["retrieve", "--norms", toy_norms_path, "--candidates", "concepts", "-q"]
    fails_cleanly(
        [*args, "-m", f"{tiny_gpt2},system=none", "--out", tmp_path / "a"], "add chat_template"
    )
    takes_none = tmp_path / "no-system.jinja"  # a template that drops system messages
    takes_none.write_text(
        "{% for m in messages %}{% if m['role'] != 'system' %}<|{{ m['role'] }}|>\n"
        "{{ m['content'] }}\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    fails_cleanly(
        [*args, "-m", f"{instruct},chat_template={takes_none},system=Be brief."]
        + ["--out", tmp_path / "b"],
        "leaves the system message out",
    )
