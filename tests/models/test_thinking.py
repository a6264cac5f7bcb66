"""Thinking models (issue 60): a completion's `<think>...</think>`, and a server's
`reasoning_content`, kept apart from the answer (Completion.reasoning), counted in the cost
(reasoning tokens), never parsed as answers; a completion that spent its whole max_tokens
thinking is told (Completion.thought_to_limit, generation_thought_to_limit)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from support import CHAT_TEMPLATE, real_gpt2_tokenizer, with_chat_template
from support_server import TestServer

import tacit
from tacit.matching import answers_frame, concept_matcher
from tacit.models import load_scorer
from tacit.models.answers import (
    Completion,
    GenerationRequest,
    Sampling,
    generation_counts,
    thought,
)
from tacit.models.base import Needs
from tacit.models.causal import CausalLMScorer
from tacit.models.causal_generate import _completion

CHAT = [GenerationRequest.chat([{"role": "user", "content": "Which animal has fur?"}])]
# a chat template that opens the think in the prompt, as DeepSeek-R1's and Qwen3's do
THINKING_TEMPLATE = CHAT_TEMPLATE.replace("<|assistant|>\n", "<|assistant|>\n<think>\n")


@pytest.mark.parametrize(
    ("text", "reason", "answer", "reasoning", "to_limit"),
    [
        (
            "<think>Fur: a bear.</think>\n\n1. bear\n2. wolf",
            "stop",
            "1. bear\n2. wolf",
            "Fur: a bear.",
            False,
        ),
        ("  <think>\nhmm\n</think>bear", "stop", "bear", "hmm", False),
        ("Fur means a mammal.</think> bear", "stop", "bear", "Fur means a mammal.", False),
        ("<think>a bear, or a wolf, or", "length", "", "a bear, or a wolf, or", True),
        ("<think></think>bear", "stop", "bear", "", False),
        ("1. bear\n2. wolf", "stop", "1. bear\n2. wolf", None, False),
    ],
)
def test_thinking_is_kept_apart(text, reason, answer, reasoning, to_limit):
    said = thought(Completion(text, reason))
    assert (said.text, said.reasoning, said.thought_to_limit) == (answer, reasoning, to_limit)


def test_a_reasoning_given_apart_is_left_as_it_is():
    given = Completion("<think>x</think> y", "stop", reasoning="apart")
    assert thought(given) is given


def test_the_thinking_is_never_read_as_answers():
    """answers.csv reads the answer alone; a `reasoning` column holds the thinking, only where
    a completion thought."""
    matcher = concept_matcher(["bear", "wolf"])
    said = [thought(Completion("<think>Is it a wolf? No.</think>1. bear", "stop"))]
    frame = answers_frame(
        pd_prompts := __import__("pandas").DataFrame({"prompt": ["p"]}), ["prompt"], [said], matcher
    )
    assert frame["answer"].tolist() == ["bear"] and frame["matched"].tolist() == ["bear"]
    assert frame["reasoning"].tolist() == ["Is it a wolf? No."]
    assert list(frame.columns).index("reasoning") == list(frame.columns).index("completion") + 1
    plain = answers_frame(pd_prompts, ["prompt"], [[Completion("bear", "stop")]], matcher)
    assert "reasoning" not in plain.columns


def test_the_cost_counts_reasoning_tokens_and_thoughts_to_the_limit():
    answers = [
        [Completion("bear", "stop", None, 10, 20, reasoning="hmm", reasoning_tokens=12)],
        [Completion("", "length", None, 10, 30, reasoning="a bear or", reasoning_tokens=30)],
    ]
    counts = generation_counts(answers)
    assert counts["generation_completion_tokens"] == 50
    assert counts["generation_reasoning_tokens"] == 42
    assert counts["generation_thought_to_limit"] == 1
    assert "generation_reasoning_tokens" not in generation_counts([[Completion("bear", "stop")]])


def test_a_completion_record_keeps_the_thinking():
    said = Completion("bear", "stop", None, 3, 9, reasoning="hmm", reasoning_tokens=5)
    assert Completion.from_record(said.record()) == said
    assert "reasoning" not in Completion("bear", "stop").record()  # cache entries as before


def test_in_process_reasoning_tokens_end_at_the_close():
    """A generated row `<think>a bear is big</think> It is big.`: the thinking's tokens are
    those up to and including `</think>`, as the tokenizer splits the thinking alone."""
    tokenizer = real_gpt2_tokenizer()
    think, rest = "<think>a bear is big</think>", " It is big."
    ids = tokenizer(think + rest)["input_ids"]
    assert ids[: len(tokenizer(think)["input_ids"])] == tokenizer(think)["input_ids"]
    scorer = SimpleNamespace(tokenizer=tokenizer)
    said = _completion(scorer, ids, 4, [], Sampling(max_tokens=64), None, 0)
    assert (said.text, said.reasoning, said.finish_reason) == (
        "It is big.",
        "a bear is big",
        "length",
    )
    assert said.reasoning_tokens == len(tokenizer(think)["input_ids"])
    assert said.completion_tokens == len(ids)
    opened = _completion(
        scorer, tokenizer("big</think>bear")["input_ids"], 4, [], Sampling(), None, 0, True
    )
    assert (opened.text, opened.reasoning) == ("bear", "big")


@pytest.fixture(scope="module")
def thinking_model(tiny_gpt2, tmp_path_factory) -> str:
    return with_chat_template(tiny_gpt2, tmp_path_factory.mktemp("thinks"), THINKING_TEMPLATE)


def test_a_think_opened_in_the_prompt_never_closed_is_all_thinking(thinking_model):
    """A tiny random model after `<think>` never writes `</think>`: all of its 8 tokens are
    thinking, no answer, thought to the limit; the same text as plain generate's."""
    scorer = CausalLMScorer(thinking_model, device="cpu")
    (said,) = scorer.generate(CHAT, Sampling(max_tokens=8), progress=False)[0]
    assert said.text == "" and said.thought_to_limit and said.finish_reason == "length"
    assert said.reasoning_tokens == said.completion_tokens == 8
    prompt = scorer.tokenizer.apply_chat_template(
        [dict(m) for m in CHAT[0].messages], add_generation_prompt=True, tokenize=False
    )
    assert prompt.endswith("<think>\n")
    ids = scorer.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
    out = scorer.model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert said.reasoning == scorer.tokenizer.decode(out[0, ids.shape[1] :]).strip()
    counts = generation_counts([[said]])
    assert counts["generation_thought_to_limit"] == 1


@pytest.fixture(scope="module")
def server():
    with TestServer(None) as running:
        yield running


def test_a_servers_reasoning_content_is_kept_apart(server):
    """`reasoning_content` beside the content; usage's reasoning tokens counted; a choice with
    reasoning and no content, stopped at its length, thought to the limit."""
    server.faults.clear()
    server.faults.extend(["think:Fur, so a mammal.", "thought-out:A bear? A wolf?"])
    generator = load_scorer(
        server.spec(concurrency=1), tacit.RunOptions(quiet=True), needs=Needs.of("generate")
    )
    asked = [
        GenerationRequest.chat([{"role": "user", "content": q}]) for q in ("Name one.", "Name two.")
    ]
    first, second = generator.generate(asked, Sampling(max_tokens=16), progress=False)
    assert first[0].reasoning == "Fur, so a mammal." and first[0].reasoning_tokens == 7
    assert first[0].text.startswith("1.") and not first[0].thought_to_limit
    assert second[0].text == "" and second[0].finish_reason == "length"
    assert second[0].reasoning == "A bear? A wolf?" and second[0].thought_to_limit


def test_a_think_in_a_servers_content_is_kept_apart(tmp_path):
    """A server without a reasoning parser (llama.cpp's default) sends the think inline."""
    with TestServer(None, answer=lambda body: "<think>hmm</think>\n1. bear") as running:
        generator = load_scorer(
            running.spec(), tacit.RunOptions(quiet=True), needs=Needs.of("generate")
        )
        (said,) = generator.generate(CHAT, Sampling(max_tokens=16), progress=False)[0]
    assert (said.text, said.reasoning) == ("1. bear", "hmm")


def test_an_answer_kept_before_thinking_was_read_is_read_apart(tmp_path):
    """A completion kept in --cache with its think in its text (by a tacit before this one)
    is read back with its thinking apart."""
    from support import Scripted

    from tacit.models.score_cache import ScoreCache

    model = Scripted({})
    model.cache = ScoreCache(tmp_path, model.record())
    sampling = Sampling(max_tokens=8)
    request = GenerationRequest.chat([{"role": "user", "content": "Name one."}])
    model.cache.keep_completions(request, sampling, [Completion("<think>hmm</think>bear", "stop")])
    (said,) = model.generate([request], sampling, progress=False)[0]
    assert (said.text, said.reasoning, said.cached) == ("bear", "hmm", True)
    assert model.asked == []  # read from the cache, not asked
