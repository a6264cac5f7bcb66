"""A hostile chat-completions server (tests/support_server.py without a model: canned answers,
faults on request) against the server family (issue 57): every behaviour is one line naming
the request, or an answer counted for what it is. A drip is cut at the request's deadline, an
enormous answer at its bound, a malformed field named; the model an answer names is kept;
credentials in the URL are sent as the server expects or refused; llama.cpp's servers are
refused for scoring at their first answer. A property-based test throws arbitrary JSON at the
one reader of an answer and finds no traceback."""

from __future__ import annotations

import json
import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_server import LLAMA_CPP_PYTHON_TITLE, TestServer

import tacit
from tacit.core.errors import TacitError
from tacit.models import load_scorer
from tacit.models.answers import OVERSIZED, GenerationRequest, Sampling, generation_counts
from tacit.models.base import Needs
from tacit.models.server.client import Client, Cut
from tacit.models.server.generation import CHAT, COMPLETIONS, answer_limit, read

QUIET = tacit.RunOptions(quiet=True)
GENERATE = Needs.of("generate")
CHAT_ONE = [GenerationRequest.chat([{"role": "user", "content": "Name a tool."}])]


@pytest.fixture(scope="module")
def server():
    with TestServer(None) as running:
        yield running


@pytest.fixture()
def hostile(server):
    server.faults.clear()
    yield server
    server.faults.clear()


def ask(server: TestServer, fault: str, sampling: Sampling | None = None, **options):
    generator = load_scorer(server.spec(retries=0, **options), QUIET, needs=GENERATE)
    server.faults.append(fault)
    return generator, generator.generate(CHAT_ONE, sampling or Sampling(), progress=False)


def test_a_drip_is_cut_at_the_requests_deadline(hostile):
    """4 bytes every 0.2 s: a whole answer takes over a minute; timeout=1 is the request's
    deadline, not each read's (which the drip would never reach)."""
    started = time.monotonic()
    with pytest.raises(TacitError, match=r"no whole answer within 1 s \(timeout=\)$") as failed:
        ask(hostile, "drip:0.2", timeout=1)
    assert time.monotonic() - started < 3
    assert "\n" not in str(failed.value)


@pytest.mark.parametrize("fault", ["huge:10000000", "lines:400000"])
def test_an_enormous_answer_is_cut_at_its_bound_and_counted(hostile, fault):
    """A 10 MB completion, or 400,000 numbered lines, for max_tokens=64: read up to
    answer_limit (264 KB), then cut; its completion says `oversized`, is counted, and holds
    no text to match."""
    started = time.monotonic()
    _, answers = ask(hostile, fault, Sampling(max_tokens=64))
    assert time.monotonic() - started < 5
    assert [(c.text, c.finish_reason) for c in answers[0]] == [("", OVERSIZED)]
    assert generation_counts(answers)["generation_oversized"] == 1


def test_max_answer_bytes_raises_the_bound(hostile):
    _, answers = ask(hostile, "huge:400000", max_answer_bytes=1_000_000)
    assert len(answers[0][0].text) == 400_000


def test_the_model_an_answer_names_is_recorded(hostile):
    generator, answers = ask(hostile, "model:gpt-evil-0")
    assert answers[0][0].model == "gpt-evil-0"
    record = generator.record()
    assert record["server"]["answered_as"] == {"gpt-evil-0": 1}
    assert record["batch_size_used"] is None  # nothing ran out of memory


def answer_body(**choice):
    return json.dumps(
        {
            "model": "tiny",
            "choices": [{"index": 0, "message": {"content": "1. fur"}, **choice}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        }
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (answer_body(index="zero"), r"choices\[0\]\.index is 'zero'"),
        (answer_body(index=None), r"choices\[0\]\.index is None"),
        (answer_body(index=3), r"choices\[0\]\.index is 3"),
        (answer_body(index=True), r"choices\[0\]\.index is True"),
        (answer_body(finish_reason=7), r"choices\[0\]\.finish_reason is 7"),
        (answer_body(message={"content": 5}), r"choices\[0\]\.message\.content is 5"),
        (answer_body(message=[1]), r"choices\[0\]\.message is a JSON list"),
        (answer_body(logprobs={"content": 1}), None),  # not asked for: not read
        ('{"choices": {"0": 1}}', r"choices is a JSON object"),
        ('{"choices": [], "model": 5}', r"model is 5"),
        ('{"choices": [], "usage": {"prompt_tokens": 1e400}}', r"usage\.prompt_tokens is inf"),
        ('{"choices": [], "usage": {"completion_tokens": NaN}}', r"completion_tokens is nan"),
        ('{"choices": [], "usage": {"prompt_tokens": -1}}', r"usage\.prompt_tokens is -1"),
        ('{"choices": [], "usage": {"prompt_tokens": 2.5}}', r"usage\.prompt_tokens is 2\.5"),
        ("[1, 2]", r"body is a JSON list"),
    ],
)
def test_a_malformed_field_is_one_line_naming_the_request_and_field(hostile, body, field):
    if field is None:
        _, answers = ask(hostile, f"body:{body}")
        assert answers[0][0].text == "1. fur"
        return
    with pytest.raises(TacitError, match=field) as failed:
        ask(hostile, f"body:{body}")
    said = str(failed.value)
    assert "\n" not in said and "/v1/chat/completions, request 1 of 1 ('Name a tool.')" in said


def test_content_parts_and_a_refusal_field_are_read(hostile):
    parts = [
        {"type": "text", "text": "1. fur"},
        {"type": "image_url"},
        {"type": "text", "text": "\n2. claws"},
    ]
    _, answers = ask(hostile, f"body:{answer_body(message={'content': parts})}")
    assert answers[0][0].text == "1. fur\n2. claws"
    refused = {"content": None, "refusal": "I'm sorry, I cannot."}
    _, answers = ask(hostile, f"body:{answer_body(message=refused)}")
    assert answers[0][0].text == "I'm sorry, I cannot."


def test_credentials_in_the_url_are_sent_as_basic_authentication(tmp_path):
    with TestServer(None, basic=("alice", "pw:1")) as server:
        url = server.url.replace("http://", "http://alice:pw%3A1@") + "?api-version=7"
        generator = load_scorer(server.spec(url=url), QUIET, needs=GENERATE)
        answers = generator.generate(CHAT_ONE, Sampling(), progress=False)
        assert answers[0][0].text.startswith("1. ")
        assert all(path.endswith("?api-version=7") for path in server.paths)
        assert "alice" not in json.dumps(generator.record())
        with pytest.raises(TacitError, match="401 Unauthorized"):  # without them
            load_scorer(server.spec(), QUIET, needs=GENERATE)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("{url}?api_key=k", "its query holds api_key=, a key every log of the URL would show"),
        ("{url},api_key=k", "api_key= would be seen in the command line"),
    ],
)
def test_a_key_in_the_model_text_is_refused_naming_the_variable(server, url, said):
    with pytest.raises(TacitError, match=said) as failed:
        load_scorer(server.spec(url=url.format(url=server.url)), QUIET, needs=GENERATE)
    assert "TACIT_API_KEY or OPENAI_API_KEY" in str(failed.value)
    assert "=k" not in str(failed.value)


def test_a_user_and_password_beside_an_api_key_is_refused(server, monkeypatch):
    monkeypatch.setenv("TACIT_API_KEY", "sk-secret")
    url = server.url.replace("http://", "http://alice:pw@")
    with pytest.raises(TacitError, match="holds a user name and password, and") as failed:
        load_scorer(server.spec(url=url), QUIET, needs=GENERATE)
    assert "pw" not in str(failed.value) and "sk-secret" not in str(failed.value)


@pytest.mark.parametrize(
    ("engine", "said"),
    [
        ("llama.cpp", "is llama.cpp's llama-server, which gives log-probabilities of generated"),
        ("llama-cpp-python", "is llama-cpp-python's server, whose echo reads each prompt token"),
    ],
)
def test_llama_cpps_servers_are_refused_for_scoring_at_once(engine, said):
    """From what they answer at start (/v1/models' owned_by, /props, the FastAPI title),
    before any sentence is sent; both serve generation."""
    with TestServer(None, engine=engine) as server:
        with pytest.raises(TacitError, match=said) as failed:
            load_scorer(server.spec(start_token="<s>"), QUIET)
        assert "--by generation" in str(failed.value) and "\n" not in str(failed.value)
        assert not any("completions" in path for path in server.paths)
        generator = load_scorer(server.spec(), QUIET, needs=GENERATE)
        assert generator.generate(CHAT_ONE, Sampling(), progress=False)[0][0].text
        assert generator.record()["server"]["engine"]["name"] in (
            "llama.cpp server",
            LLAMA_CPP_PYTHON_TITLE,
        )


# --- the reader, property-based -------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(
            ["choices", "index", "message", "content", "text", "finish_reason", "usage",
             "prompt_tokens", "completion_tokens", "logprobs", "token", "logprob",
             "top_logprobs", "tokens", "token_logprobs", "model", "type", "refusal"]
        ) | st.text(max_size=4),
        children,
        max_size=5,
    ),
    max_leaves=30,
)  # fmt: skip
CHOICE = st.fixed_dictionaries(
    {},
    optional={
        "index": JSON,
        "message": st.fixed_dictionaries({}, optional={"content": JSON, "refusal": JSON}) | JSON,
        "text": JSON,
        "finish_reason": JSON,
        "logprobs": JSON,
    },
)
ANSWER = (
    st.fixed_dictionaries(
        {}, optional={"choices": st.lists(CHOICE, max_size=3) | JSON, "usage": JSON, "model": JSON}
    )
    | JSON
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answer=ANSWER,
    path=st.sampled_from([CHAT, COMPLETIONS]),
    n=st.integers(1, 3),
    logprobs=st.integers(0, 2),
)
def test_the_reader_takes_any_json_without_a_traceback(answer, path, n, logprobs):
    """Whatever JSON a server answers, the reader gives n completions or one line naming the
    request (TacitError): never another exception."""
    sampling = Sampling(n=n, temperature=1.0 if n > 1 else 0.0, logprobs=logprobs)
    try:
        completions = read(answer, path, sampling, "http://h/v1/chat/completions, request 1")
    except TacitError as error:
        assert "\n" not in str(error) and "request 1: the answer's " in str(error)
        return
    assert len(completions) == n
    for c in completions:
        assert isinstance(c.text, str) and isinstance(c.finish_reason, str)
        for count in (c.prompt_tokens, c.completion_tokens):
            assert count is None or (isinstance(count, int) and count >= 0)
        for token in c.tokens or ():
            assert isinstance(token.text, str) and isinstance(token.logprob, float)


def test_a_cut_answer_reads_as_oversized():
    sampling = Sampling(n=2, temperature=1.0)
    assert [c.finish_reason for c in read(Cut(10), CHAT, sampling, "x")] == [OVERSIZED] * 2
    assert answer_limit(Sampling(max_tokens=64), 10**7) == 10**7
    assert not math.isnan(answer_limit(Sampling(n=3, temperature=1.0, logprobs=2)))


def test_a_client_refuses_a_query_key_before_any_request():
    with pytest.raises(TacitError, match="token="):
        Client("http://127.0.0.1:9/v1?token=abc", timeout=1, retries=0, concurrency=1)
