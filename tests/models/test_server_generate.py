"""Generation through an OpenAI-compatible server (tacit.models.server.generation) against the
tests' server (tests/support_server.py: a tiny GPT-2 with a chat template, transformers'
generate behind `/v1/chat/completions` and `/v1/completions`): the same text as in-process
generation of the same model (greedy; sampled under the same seed), its tokens'
log-probabilities, the start checks a generation-only model needs, the faults (429 retried;
500, a timeout, a dropped connection: one line naming the URL; an empty content, a missing
choice, a refusal: a completion, not a crash), and the cache."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from support import assert_declared, with_chat_template
from support_server import REFUSAL, TITLE, TestServer

import tacit
from tacit.core.errors import TacitError
from tacit.models import load_scorer
from tacit.models.answers import NO_CHOICE, GenerationRequest, Sampling, generation_counts
from tacit.models.base import Needs
from tacit.models.causal import CausalLMScorer
from tacit.models.score_cache import ScoreCache
from tacit.models.server.generation import draw_seed
from tacit.models.server.scorer import ServerGenerator, ServerScorer

QUIET = tacit.RunOptions(quiet=True)
GENERATE = Needs.of("generate")
QUESTIONS = ["Which animal has fur, is big, and has claws?", "Name a tool.", "Hi"]
CHATS = [GenerationRequest.chat([{"role": "user", "content": q}]) for q in QUESTIONS]


@pytest.fixture(scope="module")
def instruct(tiny_gpt2, tmp_path_factory) -> str:
    return with_chat_template(tiny_gpt2, tmp_path_factory.mktemp("served-instruct"))


@pytest.fixture(scope="module")
def server(instruct):
    with TestServer(instruct) as running:
        yield running


@pytest.fixture(scope="module")
def in_process(instruct):
    return CausalLMScorer(instruct, device="cpu", batch_size=4)


@pytest.fixture()
def generator(server):
    server.faults.clear()
    return load_scorer(server.spec(), QUIET, needs=GENERATE)


def texts(answers):
    return [[c.text for c in completions] for completions in answers]


def test_greedy_chat_equals_in_process(generator, in_process):
    """Identical text, finish reason and counts; each token's log-probability to 1e-4 nats,
    its text and its top alternatives as the in-process model gives them."""
    sampling = Sampling(max_tokens=6, logprobs=2, n=2)
    served = generator.generate(CHATS, sampling, progress=False)
    local = in_process.generate(CHATS, sampling, progress=False)
    assert texts(served) == texts(local)
    for mine, theirs in zip(served, local):
        for a, b in zip(mine, theirs):
            assert (a.finish_reason, a.prompt_tokens) == (b.finish_reason, b.prompt_tokens)
            assert a.completion_tokens == b.completion_tokens == 6
            assert [t.text for t in a.tokens] == [t.text for t in b.tokens]
            np.testing.assert_allclose(
                [t.logprob for t in a.tokens], [t.logprob for t in b.tokens], atol=1e-4
            )
            assert [[x for x, _ in t.top] for t in a.tokens] == [
                [x for x, _ in t.top] for t in b.tokens
            ]
    assert all(c.finish_reason == "length" for r in served for c in r)


def test_a_plain_prompt_goes_to_the_completions_endpoint(generator, in_process, server):
    asked = [GenerationRequest.text("A bear has"), GenerationRequest.text("Everyone knows")]
    before = server.completions_generated
    served = generator.generate(asked, Sampling(max_tokens=5, logprobs=1), progress=False)
    assert server.completions_generated == before + 2
    local = in_process.generate(asked, Sampling(max_tokens=5, logprobs=1), progress=False)
    assert texts(served) == texts(local)
    assert [t.text for t in served[0][0].tokens] == [t.text for t in local[0][0].tokens]


def test_seeded_sampling_sends_each_requests_seed(generator, in_process):
    """The server draws under the seed tacit sends (request_seed): the same samples as
    in-process sampling under the same seed, again on a rerun."""
    sampling = Sampling(n=3, temperature=0.9, max_tokens=6, seed=11)
    served = generator.generate(CHATS, sampling, progress=False)
    assert texts(served) == texts(generator.generate(CHATS, sampling, progress=False))
    assert texts(served) == texts(in_process.generate(CHATS, sampling, progress=False))
    assert len(set(texts(served)[0])) > 1


def test_a_server_that_refuses_n_is_asked_for_each_draw(server):
    """A 400 to n > 1: the request and every later one asked one draw a request (n 1, draw d
    seeded by draw_seed), N draws each, the same on a rerun; the record says so."""
    server.takes_n, server.refused_n = False, 0
    try:
        generator = load_scorer(server.spec(concurrency=1), QUIET, needs=GENERATE)
        sampling = Sampling(n=3, temperature=0.9, max_tokens=6, seed=11)
        before = len(server.answered)
        served = generator.generate(CHATS, sampling, progress=False)
        bodies = server.answered[before:]
        again = generator.generate(CHATS, sampling, progress=False)
    finally:
        server.takes_n = True
    assert server.refused_n == 1  # the first request; none after it asked for n again
    assert [len(said) for said in served] == [3, 3, 3]
    assert len(bodies) == 9 and all(b["n"] == 1 for b in bodies)
    ordered = sorted(CHATS, key=lambda r: json.dumps(r.record(), sort_keys=True))
    assert [b["seed"] for b in bodies] == [draw_seed(11, r, d) for r in ordered for d in range(3)]
    assert texts(served) == texts(again)
    assert len(set(texts(served)[0])) > 1
    assert generator.record()["server"]["draws"] == "one request a draw"
    assert generation_counts(served)["generation_requests"] == 3


def test_a_generation_only_model_skips_the_scoring_checks(server):
    """A probe that asks only for generation loads a ServerGenerator: no echo, no
    consistency check (a chat API gives no prompt log-probabilities); the engine recorded."""
    before = server.prompts
    generator = load_scorer(server.spec(), QUIET, needs=GENERATE)
    assert type(generator) is ServerGenerator and server.prompts == before
    record = generator.record()["server"]
    assert record["engine"]["name"] == TITLE and "consistency_check" not in record
    assert record["model"]["id"] == "tiny"
    full = load_scorer(server.spec(tokenizer=server.model_dir), QUIET)
    assert type(full) is ServerScorer and full.can("generate")
    assert full.record()["server"]["consistency_check"]["passed"]


def test_passing_faults_are_retried(generator, in_process, server):
    server.faults.extend(["429", "500"])
    got = generator.generate(CHATS[:1], Sampling(max_tokens=3), progress=False)
    assert texts(got) == texts(
        in_process.generate(CHATS[:1], Sampling(max_tokens=3), progress=False)
    )
    assert generator.record()["server"]["retries_made"] == 2


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("500", r"/v1/chat/completions: 500 Internal Server Error: fault injected$"),
        ("sleep:1", r"/v1/chat/completions: no whole answer within 0.5 s \(timeout=\)$"),
        ("drop", r"/v1/chat/completions: the connection was dropped"),
    ],
)
def test_a_failing_server_is_one_line_naming_the_url(server, fault, said):
    generator = load_scorer(server.spec(retries=0, timeout=0.5), QUIET, needs=GENERATE)
    server.faults.clear()
    server.faults.append(fault)
    answered = server.completions
    with pytest.raises(TacitError, match=said) as failed:
        generator.generate(CHATS[:1], Sampling(max_tokens=2), progress=False)
    assert "\n" not in str(failed.value) and server.url in str(failed.value)
    deadline = time.monotonic() + 10
    while fault.startswith("sleep") and server.completions == answered:
        assert time.monotonic() < deadline
        time.sleep(0.05)  # the late answer's generation over before the server stops


def test_a_model_the_server_does_not_serve_is_one_line(server):
    with pytest.raises(TacitError, match="serves tiny, not other"):
        load_scorer(server.spec("other"), QUIET, needs=GENERATE)


def test_answers_that_say_nothing_are_completions(server):
    """An empty content, a missing choice and a refusal are answers (the caller counts them),
    not errors; the truncated one says `length`. One request at a time: the faults in order."""
    generator = load_scorer(server.spec(concurrency=1), QUIET, needs=GENERATE)
    server.faults.clear()
    server.faults.extend(["empty", "missing", "refusal"])
    # distinct requests go in sorted order: "Hi", "Name a tool.", "Which ..."
    refused, missing, empty = generator.generate(
        CHATS, Sampling(max_tokens=3, n=2, temperature=1.0, seed=1), progress=False
    )
    assert [(c.text, c.finish_reason) for c in empty] == [("", "length")] * 2
    assert [(c.text, c.finish_reason) for c in missing] == [("", NO_CHOICE)] * 2
    assert [c.text for c in refused] == [REFUSAL] * 2


def test_counts_and_the_cache(server, tmp_path):
    """The manifest's counts from the server's usage; a rerun with the cache asks nothing."""
    first = load_scorer(server.spec(), QUIET, needs=GENERATE)
    first.cache = ScoreCache(tmp_path, first.record())
    answers = first.generate(CHATS, Sampling(max_tokens=4), progress=False)
    counts = generation_counts(answers)
    assert counts["generation_requests"] == 3 and counts["generation_completion_tokens"] == 12
    assert counts["generation_prompt_tokens"] == sum(a[0].prompt_tokens for a in answers) > 0
    asked = server.completions
    second = load_scorer(server.spec(), QUIET, needs=GENERATE)
    second.cache = ScoreCache(tmp_path, second.record())
    again = second.generate(CHATS, Sampling(max_tokens=4), progress=False)
    assert server.completions == asked
    assert texts(again) == texts(answers)
    assert generation_counts(again)["generation_cached"] == 3


@pytest.mark.slow
def test_elicitation_by_generation_through_a_server_equals_in_process(
    server, instruct, toy_norms_path
):
    """The norming task asked of a chat-completions server: the same answers, matches and
    scores as the same model asked in process (greedy)."""
    server.faults.clear()
    given = dict(norms=toy_norms_path, by="generation", relations=["has"], max_tokens=6)
    served = tacit.elicit([server.spec()], quiet=True, **given)
    local = tacit.elicit([instruct], quiet=True, **given)
    columns = ["concept", "recall_pf", "precision", "n_answers", "novel"]
    assert served.prompts[columns].equals(local.prompts[columns])
    said = served.extra["answers"]["completion"]
    assert list(said) == list(local.extra["answers"]["completion"]) and said.str.len().sum() > 0
    assert served.manifest["models"][0]["generation_requests"] == len(served.prompts)
    assert_declared(dict(served.manifest))
