"""Generation by an in-process causal LM (Scorer.generate, tacit.models.causal_generate) on a
tiny random GPT-2 whose tokenizer carries a chat template: greedy completions equal a plain
transformers `generate` of the template's conversation, one request at a time; the batch size
changes nothing, greedy or sampled; sampling is reproducible under a seed; the end of a
completion (length, a stop text), its token log-probabilities, the counts for the manifest,
the cache (a rerun generates nothing) and the refusals, each in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import plain_causal, with_chat_template

from tacit.core.errors import TacitError
from tacit.models.answers import (
    Completion,
    GenerationRequest,
    Sampling,
    generation_counts,
    request_seed,
)
from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer
from tacit.models.score_cache import ScoreCache

QUESTIONS = [
    "Which animal has fur, is big, and has claws?",
    "Name a tool.",
    "What has wings and lays eggs, and is often kept on farms for its meat?",
    "Hi",
    "Which concept is described: it is made of metal, it cuts, it has a handle?",
]
REQUESTS = [GenerationRequest.chat([{"role": "user", "content": q}]) for q in QUESTIONS]


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """generate runs a tiny model a token at a time: on a loaded 2-core machine torch's
    threads, waiting on each other for every small step, made it 10-20x slower than one."""
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


def texts(answers) -> list[list[str]]:
    return [[c.text for c in completions] for completions in answers]


@pytest.fixture(scope="module")
def instruct(tiny_gpt2, tmp_path_factory) -> str:
    return with_chat_template(tiny_gpt2, tmp_path_factory.mktemp("generate-instruct"))


@pytest.fixture(scope="module")
def scorer(instruct) -> CausalLMScorer:
    return CausalLMScorer(instruct, device="cpu", batch_size=8)


def plain_greedy(model_dir: str, messages: list[dict], max_tokens: int) -> tuple[str, list]:
    """transformers alone: the template rendered and tokenised by apply_chat_template, greedy
    generate, the new tokens decoded without special tokens; (text, the new token ids)."""
    model, tokenizer = plain_causal(model_dir)
    inputs = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    with torch.no_grad():
        out = model.generate(
            **inputs,
            do_sample=False,
            max_new_tokens=max_tokens,
            pad_token_id=model.config.eos_token_id,
        )
    new = out[0, inputs["input_ids"].shape[1] :].tolist()
    return tokenizer.decode(new, skip_special_tokens=True), new


@pytest.mark.slow
def test_greedy_equals_a_plain_generate(scorer, instruct):
    sampling = Sampling(max_tokens=6)
    got = scorer.generate(REQUESTS, sampling, progress=False)
    assert [len(c) for c in got] == [1] * len(REQUESTS)
    for request, (completion,) in zip(REQUESTS, got):
        text, new = plain_greedy(instruct, list(request.messages), 6)
        assert completion.text == text
        assert completion.finish_reason == "length"  # random weights never end by themselves
        assert completion.completion_tokens == len(new) == 6
        assert completion.tokens is None  # none asked for
    rendered = scorer.tokenizer.apply_chat_template(
        list(REQUESTS[0].messages), add_generation_prompt=True, return_dict=True
    )["input_ids"]
    assert got[0][0].prompt_tokens == len(rendered)


def test_the_batch_size_changes_no_greedy_text(instruct, scorer):
    sampling = Sampling(max_tokens=8, n=2)
    one = CausalLMScorer(instruct, device="cpu", batch_size=1)
    batched = scorer.generate(REQUESTS, sampling, progress=False)
    assert [[c.text for c in r] for r in one.generate(REQUESTS, sampling, progress=False)] == [
        [c.text for c in r] for r in batched
    ]
    assert all(r[0] == r[1] for r in batched)  # greedy: N completions are one


@pytest.mark.slow
def test_sampling_is_seeded_per_request(instruct, scorer):
    """The same seed draws the same samples, whatever the batch size or the other requests
    asked; another seed draws others; the caller's random state is left alone."""
    sampling = Sampling(n=3, temperature=1.0, max_tokens=8, seed=7)
    first = scorer.generate(REQUESTS, sampling, progress=False)
    state = torch.random.get_rng_state()
    alone = CausalLMScorer(instruct, device="cpu", batch_size=1).generate(
        REQUESTS[2:3], sampling, progress=False
    )
    assert torch.equal(state, torch.random.get_rng_state())
    assert [c.text for c in alone[0]] == [c.text for c in first[2]]
    again = scorer.generate(REQUESTS[::-1], sampling, progress=False)[::-1]
    assert [[c.text for c in r] for r in again] == [[c.text for c in r] for r in first]
    assert len({c.text for c in first[0]}) > 1  # three draws, not one
    other = scorer.generate(
        REQUESTS, Sampling(n=3, temperature=1.0, max_tokens=8, seed=8), progress=False
    )
    assert [[c.text for c in r] for r in other] != [[c.text for c in r] for r in first]
    assert request_seed(7, REQUESTS[0]) != request_seed(7, REQUESTS[1])


@pytest.mark.slow
def test_token_logprobs_are_the_models(scorer, instruct):
    """Each generated token's log-probability is the model's (one forward pass over the
    conversation and the completion), the top alternatives most likely first, the chosen
    token (greedy) the first of them."""
    (completion,) = scorer.generate(
        REQUESTS[:1], Sampling(max_tokens=5, logprobs=3), progress=False
    )[0]
    model, tokenizer = plain_causal(instruct)
    context = tokenizer.apply_chat_template(
        list(REQUESTS[0].messages), add_generation_prompt=True, return_dict=True
    )["input_ids"]
    _, new = plain_greedy(instruct, list(REQUESTS[0].messages), 5)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context + new])).logits[0].double()
    expected = torch.log_softmax(logits, -1)[len(context) - 1 : -1].gather(
        1, torch.tensor(new)[:, None]
    )
    assert completion.tokens is not None and len(completion.tokens) == 5
    np.testing.assert_allclose(
        [t.logprob for t in completion.tokens], expected[:, 0].numpy(), atol=1e-4
    )
    assert "".join(t.text for t in completion.tokens) == completion.text
    for token in completion.tokens:
        assert len(token.top) == 3
        assert token.top[0][1] == pytest.approx(token.logprob, abs=1e-6)
        assert [v for _, v in token.top] == sorted((v for _, v in token.top), reverse=True)


def test_a_stop_text_ends_a_completion(scorer):
    """The completion is cut where a stop text first appears (the text left out), and ends
    with `stop`."""
    (whole,) = scorer.generate(REQUESTS[:1], Sampling(max_tokens=8), progress=False)[0]
    stop = whole.text[len(whole.text) // 2 : len(whole.text) // 2 + 2]
    assert stop.strip()
    (cut,) = scorer.generate(REQUESTS[:1], Sampling(max_tokens=8, stop=(stop,)), progress=False)[0]
    assert cut.finish_reason == "stop"
    assert cut.text == whole.text[: whole.text.find(stop)]
    assert cut.completion_tokens < whole.completion_tokens


def test_a_plain_prompt_is_read_as_the_tokenizer_encodes_it(scorer, instruct):
    """No template: the prompt's tokens as the tokenizer encodes a text (GPT-2 adds none)."""
    (completion,) = scorer.generate(
        [GenerationRequest.text("A bear has")], Sampling(max_tokens=4), progress=False
    )[0]
    model, tokenizer = plain_causal(instruct)
    ids = tokenizer("A bear has", return_tensors="pt")
    with torch.no_grad():
        out = model.generate(
            **ids, do_sample=False, max_new_tokens=4, pad_token_id=model.config.eos_token_id
        )
    assert completion.text == tokenizer.decode(out[0, ids["input_ids"].shape[1] :])
    assert completion.prompt_tokens == ids["input_ids"].shape[1]


@pytest.mark.slow
def test_an_end_token_ends_with_stop(tiny_gpt2, tmp_path):
    """A model that says its end-of-sequence token first: an empty text that ended (`stop`),
    its end token counted."""
    directory = with_chat_template(tiny_gpt2, tmp_path / "ends")
    model, tokenizer = plain_causal(directory)
    with torch.no_grad():
        model.lm_head.weight.zero_()
        model.lm_head.weight[tokenizer.eos_token_id] = 1.0  # tied: the input embedding too
    model.save_pretrained(directory)
    (completion,) = CausalLMScorer(directory, device="cpu").generate(
        REQUESTS[:1], Sampling(max_tokens=5), progress=False
    )[0]
    assert (completion.text, completion.finish_reason, completion.completion_tokens) == (
        "",
        "stop",
        1,
    )


def test_counts_for_the_manifest(scorer):
    answers = scorer.generate(REQUESTS[:2], Sampling(max_tokens=3, n=2), progress=False)
    counts = generation_counts(answers)
    assert counts["generation_requests"] == 2
    assert counts["generation_completion_tokens"] == 2 * 2 * 3
    assert counts["generation_prompt_tokens"] == sum(c[0].prompt_tokens for c in answers)
    assert counts["generation_cached"] == 0


def test_a_rerun_with_the_cache_generates_nothing(instruct, tmp_path, monkeypatch):
    """Greedy and seeded completions are kept and read back whole (tokens included); the
    second run calls the model's generate not once; unseeded samples are never kept."""
    first = CausalLMScorer(instruct, device="cpu")
    first.cache = ScoreCache(tmp_path, first.record())
    sampling = Sampling(max_tokens=4, logprobs=2)
    kept = first.generate(REQUESTS, sampling, progress=False)
    seeded = Sampling(n=2, temperature=0.8, max_tokens=4, seed=3)
    kept_sampled = first.generate(REQUESTS[:2], seeded, progress=False)
    second = CausalLMScorer(instruct, device="cpu")
    second.cache = ScoreCache(tmp_path, second.record())
    calls = []
    real = second.model.generate
    monkeypatch.setattr(second.model, "generate", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = second.generate(REQUESTS, sampling, progress=False)
    again_sampled = second.generate(REQUESTS[:2], seeded, progress=False)
    assert calls == []
    assert again == [[Completion(**{**c.__dict__, "cached": True}) for c in r] for r in kept]
    assert [[c.text for c in r] for r in again_sampled] == [
        [c.text for c in r] for r in kept_sampled
    ]
    assert generation_counts(again)["generation_cached"] == len(REQUESTS)
    assert second.cache.record()["found"] == len(REQUESTS) + 2
    unseeded = Sampling(n=3, temperature=1.0, max_tokens=8)
    drawn = [second.generate(REQUESTS[:1], unseeded, progress=False) for _ in range(2)]
    assert len(calls) == 2  # unseeded: drawn anew each time, never kept
    assert texts(drawn[0]) != texts(drawn[1])


def test_repeated_requests_are_generated_once(scorer, monkeypatch):
    calls = []
    real = scorer.model.generate
    monkeypatch.setattr(
        scorer.model, "generate", lambda *a, **k: calls.append(len(k["input_ids"])) or real(*a, **k)
    )
    got = scorer.generate(
        [REQUESTS[0], REQUESTS[1], REQUESTS[0]], Sampling(max_tokens=2), progress=False
    )
    assert sum(calls) == 2
    assert got[0] == got[2]


def test_refusals_are_one_line(tiny_gpt2, tiny_bert, scorer):
    base = CausalLMScorer(tiny_gpt2, device="cpu")
    with pytest.raises(TacitError, match="carries no chat template.*plain prompt"):
        base.generate(REQUESTS[:1], progress=False)
    with pytest.raises(TacitError, match="it cannot generate text"):
        MaskedLMScorer(tiny_bert, device="cpu").generate(REQUESTS[:1], progress=False)
    with pytest.raises(TacitError, match=r"sampling temperature=-1: expected 0 \(greedy\) or more"):
        Sampling(temperature=-1)
    with pytest.raises(TacitError, match="messages or a prompt"):
        GenerationRequest()
    with pytest.raises(TacitError, match="a chat message is"):
        GenerationRequest.chat([{"role": "user"}])
    with pytest.raises(TacitError, match="longer than"):
        scorer.generate(
            [GenerationRequest.text("a " * 100)], Sampling(max_tokens=60), progress=False
        )


def test_system_option_applies_to_the_conversation(instruct):
    """`system=TEXT` puts a system message first where the messages hold none (as for
    scoring's prefix); their own system message wins; `system=none` cuts only a system turn
    the template writes by itself."""
    from tacit.models.causal_generate import prompt_ids

    mine = CausalLMScorer(f"{instruct},chat_template=true,system=Be brief.", device="cpu")
    user = list(REQUESTS[0].messages)

    def written(messages: list[dict]) -> str:
        return mine.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )

    assert mine.tokenizer.decode(prompt_ids(mine, REQUESTS[0])) == written(
        [{"role": "system", "content": "Be brief."}, *user]
    )
    own = [{"role": "system", "content": "Be long."}, *user]
    assert mine.tokenizer.decode(prompt_ids(mine, GenerationRequest.chat(own))) == written(own)
    # a template that writes no system turn of its own: system=none leaves the messages be
    none = CausalLMScorer(f"{instruct},chat_template=true,system=none", device="cpu")
    assert none.tokenizer.decode(prompt_ids(none, REQUESTS[0])) == written(user)
