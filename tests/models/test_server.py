"""The server family (tacit.models.server) against a real OpenAI-compatible server started here
(tests/support_server.py: a tiny transformers model behind HTTP on 127.0.0.1), checked equal
to in-process scoring of the same model (CausalLMScorer) to 1e-5 nats; the checks at start
(the model served, the start token, the consistency of the server's log-probabilities), the
faults a server shows (429, 5xx, a timeout, a dropped connection, a wrong model name, a server
that is down or asks for a key) each retried or refused in one line, and a run a fault stopped
resumed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support import assert_declared, fails_cleanly
from support_server import TestServer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.models import load_scorer
from tacit.models.base import HOOKS
from tacit.models.causal import CausalLMScorer
from tacit.models.families import family_of
from tacit.models.server import FAMILY
from tacit.models.server.client import API_KEY_VARIABLES
from tacit.models.server.tokenizer import ServerTokenizer
from tacit.vocab.shared import span_problems

TEMPLATES = [
    "<mask> has fur.",
    "Everyone knows that <mask> has fur.",
    "A bear has <mask>.",
    "<mask> has fur.",  # repeated: scored once
]
SPANS = ["A bear", "A knife", "fur", "four legs", "An aardvark", "Scissors"]
QUIET = tacit.RunOptions(quiet=True)


@pytest.fixture(scope="module")
def server(tiny_gpt2):
    with TestServer(tiny_gpt2) as running:
        yield running


@pytest.fixture(scope="module")
def in_process(tiny_gpt2):
    return CausalLMScorer(tiny_gpt2, device="cpu")


@pytest.fixture(scope="module")
def served(server, tiny_gpt2):
    """The server's model, its start token from its tokenizer (GPT-2's BOS, which the server
    does not add)."""
    return load_scorer(server.spec(tokenizer=tiny_gpt2), QUIET)


def assert_same_spans(served_scores, in_process_scores):
    np.testing.assert_array_equal(served_scores.n_tokens, in_process_scores.n_tokens)
    np.testing.assert_allclose(served_scores.sentence, in_process_scores.sentence, atol=1e-5)
    np.testing.assert_allclose(served_scores.span, in_process_scores.span, atol=1e-5)


def test_a_base_url_is_the_server_familys(server):
    assert family_of(tacit.ModelSpec.parse(server.spec())).name == "openai"
    assert family_of(tacit.ModelSpec.parse("gpt2")).name == "huggingface"


@pytest.mark.slow
def test_spans_equal_in_process_scoring(served, in_process):
    """The start token the server does not add is written before each sentence by tacit (the
    tokenizer's BOS, as the in-process family chooses it)."""
    scores = served.score_spans(TEMPLATES, SPANS, progress=False)
    assert_same_spans(scores, in_process.score_spans(TEMPLATES, SPANS, progress=False))
    assert scores.sentence.shape == (len(TEMPLATES), len(SPANS))
    record = served.record()["server"]
    assert record["start_token"] == {
        "text": "<|endoftext|>",
        "added_by": "tacit",
        "chosen": "tokenizer",
    }
    assert record["consistency_check"]["passed"] and record["consistency_check"]["compared"] >= 3
    assert record["engine"] == {
        "name": "tacit test server",
        "version": "1",
        "from": "/openapi.json",
    }
    assert record["model"]["id"] == "tiny" and record["prompts_per_request"] == 32


@pytest.mark.slow
def test_a_server_that_adds_its_own_start_token_equals_in_process(tiny_llama):
    """A tokenizer that puts BOS before every prompt (Llama's): the server's start token is
    kept, none is written, and the scores are the in-process family's starting from BOS
    (the test tokenizer declares `<s>` but does not add it itself: asked for, as a Llama
    tokenizer's own BOS would be chosen)."""
    with TestServer(tiny_llama, "llama", add_bos=True) as server:
        scorer = load_scorer(server.spec(), QUIET)
        scores = scorer.score_spans(TEMPLATES, SPANS, progress=False)
    reference = CausalLMScorer(f"{tiny_llama},start_token=bos", device="cpu").score_spans(
        TEMPLATES, SPANS, progress=False
    )
    assert_same_spans(scores, reference)
    assert scorer.record()["server"]["start_token"] == {"text": "<s>", "added_by": "server"}


@pytest.mark.slow
def test_words_in_place_equal_in_process(served, in_process):
    """Each word in the blank, its sentence scored: what in-process causal models do for a
    blank inside a sentence (a server does so wherever the blank is)."""
    prompts = ["A <mask> has parents and a job.", "Everyone knows that a cat has <mask>."]
    words = ["person", "dog", "fur", "tail"]
    ids = np.arange(len(words))  # ids of a shared vocabulary: a server puts the words in place
    expected = in_process.score_spans(prompts, words, progress=False).sentence
    batches = list(served.score_words(prompts, ids, words, progress=False))
    assert sorted(int(r) for b in batches for r in b.rows) == [0, 1]
    for batch in batches:
        got = batch.shared[batch.batch_rows[0]]
        np.testing.assert_allclose(got, expected[int(batch.rows[0])], atol=1e-5)
    in_place = next(b for b in in_process.score_words(prompts[:1], ids, words, progress=False))
    np.testing.assert_allclose(expected[0], in_place.shared[0].numpy(), atol=1e-5)


@pytest.mark.parametrize(
    "capability", [c for c in HOOKS if c not in ("spans", "words", "generate")]
)
def test_what_a_server_cannot_answer_is_one_line(served, capability):
    asks = {
        "vocab": lambda: list(served.score_vocab(["A bear has <mask>."], np.arange(3))),
        "encode": lambda: served.encode(["a text"]),
        "classify": lambda: served.label_probabilities(["It rained."], ["It is wet."]),
        "tokens": lambda: served.token_scores(["A bear has fur."], progress=False),
    }
    with pytest.raises(TacitError, match="is a server model: it cannot") as refused:
        asks[capability]()
    assert "\n" not in str(refused.value)


def test_the_planning_tokenizer_comes_from_the_servers_tokenize_endpoint(server, in_process):
    tokenizer = FAMILY.tokenizer(tacit.ModelSpec.parse(server.spec()))
    assert isinstance(tokenizer, ServerTokenizer) and tokenizer.source.endswith("/tokenize")
    texts = ["A bear has fur.", " four legs"]
    expected = in_process.tokenizer(texts, add_special_tokens=False)["input_ids"]
    assert tokenizer(texts)["input_ids"] == expected
    assert tokenizer.decode(expected[0]) == texts[0]
    assert span_problems(tokenizer, ["An aardvark", "Scissors"]) == {}


def run_cli(args) -> tuple[pd.DataFrame, dict]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    out = Path(args[args.index("--out") + 1])
    return pd.read_csv(out / "prompts.csv"), json.loads((out / "manifest.json").read_text())


@pytest.mark.slow
def test_retrieval_over_concepts_from_the_cli_equals_in_process(
    server, tiny_gpt2, toy_norms_path, tmp_path, monkeypatch
):
    monkeypatch.setenv("TACIT_API_KEY", "sk-not-sent-anywhere-else")
    common = ["retrieve", "--norms", toy_norms_path, "--max-props", "2", "--candidates", "concepts"]
    spec = server.spec(tokenizer=tiny_gpt2)
    served_rows, manifest = run_cli([*common, "--model", spec, "--out", tmp_path / "served"])
    local_rows, _ = run_cli([*common, "--model", tiny_gpt2, "--out", tmp_path / "local"])
    np.testing.assert_allclose(served_rows["target_score"], local_rows["target_score"], atol=1e-5)
    assert served_rows["rank"].tolist() == local_rows["rank"].tolist()
    record = manifest["models"][0]
    assert_declared(manifest)
    assert record["kind"] == "server" and record["server"]["base_url"] == server.url
    assert "sk-not" not in (tmp_path / "served" / "manifest.json").read_text()
    assert manifest["span_work"]["span_tokens"] > 0


@pytest.mark.slow
def test_own_items_from_the_api_and_the_cli(server, tiny_gpt2, in_process, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(
        '{"text": "[Y] has fur.", "candidates": ["A bear", "A knife", "Scissors"], "answer": "A bear"}\n'
        '{"text": "A bear has [Y].", "candidates": ["fur", "four legs", "wheels"], "answer": "fur"}\n'
    )
    spec = server.spec(start_token="<|endoftext|>")
    from_api = tacit.items(str(items), [spec], quiet=True)
    local = tacit.items(str(items), [tiny_gpt2], quiet=True)
    np.testing.assert_allclose(from_api.prompts["score"], local.prompts["score"], atol=1e-5)
    rows, _ = run_cli(["items", items, "--model", spec, "--out", tmp_path / "cli"])
    np.testing.assert_allclose(rows["score"], local.prompts["score"], atol=1e-5)


def test_the_vocabulary_is_refused_naming_candidates(server, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    line = fails_cleanly(
        [
            "retrieve",
            "--model",
            server.spec(start_token="<|endoftext|>"),
            "--norms",
            toy_norms_path,
            "--out",
            out,
        ],
        "--candidates concepts",
        out,
    )
    assert "is a server model: it cannot score a <mask>" in line


@pytest.mark.slow
def test_passing_faults_are_retried(tiny_gpt2, in_process):
    """A 429, a 500, a dropped connection and a timeout, each once: retried, and the scores
    are those of a run without them."""
    with TestServer(tiny_gpt2) as server:
        scorer = load_scorer(
            server.spec(start_token="<|endoftext|>", timeout=1, concurrency=1), QUIET
        )
        server.faults.extend(["429", "500", "drop", "sleep:2"])
        scores = scorer.score_spans(TEMPLATES, SPANS, progress=False)
        assert not server.faults
    assert_same_spans(scores, in_process.score_spans(TEMPLATES, SPANS, progress=False))
    assert scorer.record()["server"]["retries_made"] == 4


@pytest.mark.slow
def test_a_kept_connection_the_server_closed_is_opened_again_without_a_retry(tiny_gpt2):
    """llama-cpp-python's server (uvicorn) closes a connection idle for 5 s, longer than a
    retry's first backoffs. The next request goes on a new connection: no retry is used up
    (retries=0 here)."""
    with TestServer(tiny_gpt2) as server:
        scorer = load_scorer(
            server.spec(start_token="<|endoftext|>", retries=0, concurrency=1), QUIET
        )
        body = {"model": "tiny", "prompt": "A bear has fur.", "echo": True, "logprobs": 1}
        server.faults.extend(["idle-close", "idle-close"])
        for _ in range(3):
            answer = scorer.client.post("/completions", {**body, "max_tokens": 1})
            assert answer["choices"][0]["logprobs"]["tokens"]
            time.sleep(0.2)  # the server closes the connection meanwhile
        assert not server.faults
    assert scorer.record()["server"]["retries_made"] == 0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("other,base_url={url}", "serves tiny, not other"),
        (
            "tiny,base_url=http://127.0.0.1:9/v1",
            "no server answers at base_url=http://127.0.0.1:9/v1",
        ),
        ("tiny,base_url={url}", "puts no start token before a prompt"),
        (
            "tiny,base_url={url},start_token=<|nope|>",
            "does not read the start token '<|nope|>' as one token",
        ),
        ("tiny,base_url={url},concurrency=0", "concurrency=0: expected a whole number >= 1"),
        (
            "tiny,base_url={url},dtype=bfloat16",
            "'dtype' is not a loading option of an OpenAI-compatible",
        ),
        ("tiny,base_url=ftp://host/v1", "expected http://HOST:PORT/v1"),
    ],
)
def test_a_server_that_cannot_serve_is_one_line(server, toy_norms_path, tmp_path, spec, message):
    out = tmp_path / "run"
    args = ["retrieve", "--candidates", "concepts", "--norms", toy_norms_path, "--out", out]
    fails_cleanly([*args, "--model", spec.format(url=server.url)], message, out)


@pytest.mark.slow
def test_a_server_that_reads_prompts_at_the_wrong_position_is_refused(
    tiny_gpt2, toy_norms_path, tmp_path
):
    """llama-cpp-python 0.3's echo: each prompt token under the distribution at its own
    position. Its next-token answers are right, so the check sees the difference."""
    with TestServer(tiny_gpt2, own_position=True) as server:
        out = tmp_path / "run"
        args = ["retrieve", "--candidates", "concepts", "--norms", toy_norms_path, "--out", out]
        line = fails_cleanly(
            [*args, "--model", server.spec(start_token="<|endoftext|>")], "wrong position", out
        )
    assert "disagree with its own next-token ones" in line and "check_tolerance=0.1" in line


@pytest.mark.slow
def test_a_server_that_takes_one_prompt_a_request(tiny_gpt2, in_process):
    with TestServer(tiny_gpt2, batching=False) as server:
        scorer = load_scorer(server.spec(start_token="<|endoftext|>"), QUIET)
        scores = scorer.score_spans(TEMPLATES, SPANS, progress=False)
    assert scorer.batch_size == 1 and scorer.record()["server"]["prompts_per_request"] == 1
    assert_same_spans(scores, in_process.score_spans(TEMPLATES, SPANS, progress=False))


@pytest.mark.slow
def test_the_api_key_comes_from_the_environment(tiny_gpt2, monkeypatch):
    with TestServer(tiny_gpt2, api_key="sk-test") as server:
        for variable in API_KEY_VARIABLES:
            monkeypatch.delenv(variable, raising=False)
        with pytest.raises(
            TacitError,
            match="401 Unauthorized: Invalid API key: the server wants an API key: set TACIT_API_KEY or OPENAI_API_KEY",
        ):
            load_scorer(server.spec(start_token="<|endoftext|>"), QUIET)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        scorer = load_scorer(server.spec(start_token="<|endoftext|>"), QUIET)
        assert scorer.score_spans(
            ["<mask> has fur."], ["A bear"], progress=False
        ).sentence.shape == (1, 1)
    assert "sk-test" not in json.dumps(scorer.record())


@pytest.mark.slow
def test_a_run_a_failing_server_stopped_resumes(tiny_gpt2, toy_norms_path, tmp_path, monkeypatch):
    """The server fails for good after the first chunk is kept: the run ends in one line that
    says how to go on; with the server mended, --resume scores only what is left and equals a
    run that was never stopped."""
    import tacit.engine.runner
    from tacit.engine.checkpoint import Checkpoint

    monkeypatch.setattr(tacit.engine.runner, "CHUNK_TEXTS", 4)
    keep = Checkpoint.keep_chunk
    with TestServer(tiny_gpt2) as server:

        def then_fail(self, *args):
            keep(self, *args)
            server.fail_after = 0  # every request from now on answers 500

        monkeypatch.setattr(Checkpoint, "keep_chunk", then_fail)
        out = tmp_path / "run"
        spec = server.spec(start_token="<|endoftext|>", retries=1)
        args = [
            "retrieve",
            "-q",
            "--candidates",
            "concepts",
            "--norms",
            toy_norms_path,
            "--max-props",
            "2",
            "--model",
            spec,
            "--out",
            out,
        ]
        line = fails_cleanly(
            args, "500 Internal Server Error: fault injected: the server is failing"
        )
        assert "gave up after 2 tries (retries=1)" in line and "--resume --out" in line
        monkeypatch.setattr(Checkpoint, "keep_chunk", keep)
        server.fail_after = None
        scored_before = server.prompts
        resumed, manifest = run_cli([*args, "--resume"])
        assert len(manifest["resumed"]) == 1  # the resume, with its time and command
        resumed_prompts = server.prompts - scored_before
        fresh, _ = run_cli([*args[:-2], "--out", tmp_path / "fresh"])
        fresh_prompts = server.prompts - scored_before - resumed_prompts
    pd.testing.assert_frame_equal(resumed, fresh)
    assert resumed_prompts < fresh_prompts  # the kept chunk was not sent again


@pytest.mark.slow
def test_a_rerun_with_the_cache_asks_the_server_nothing(server, toy_norms_path, tmp_path):
    """--cache keeps a served model's answers under its address, name, engine and start token
    (not under how the requests ran): a rerun reads them all and writes the same tables; it
    sends the server only the start checks and the near ties the tie rule settles on prompts
    scored alone (tacit.ranking.ties: never from the cache), fewer than the first run."""
    spec = server.spec(start_token="<|endoftext|>")
    args = ["retrieve", "-q", "--candidates", "concepts", "--norms", toy_norms_path]
    args += ["--max-props", "2", "--cache", tmp_path / "cache"]
    start = server.prompts
    _, first = run_cli([*args, "--model", spec, "--out", tmp_path / "first"])
    before = server.prompts
    _, again = run_cli([*args, "--model", spec, "--out", tmp_path / "again"])
    _, other = run_cli([*args, "--model", f"{spec},concurrency=2", "--out", tmp_path / "other"])
    kept = first["models"][0]["cache"]
    assert kept["scored"] > 0
    for rerun in (again, other):
        assert rerun["models"][0]["cache"] == {**kept, "found": kept["scored"], "scored": 0}
    assert server.prompts - before < 2 * (before - start)
    for name in ("prompts.csv", "summary.csv"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


@pytest.mark.slow
def test_retrieval_from_the_python_api_equals_in_process(server, tiny_gpt2, toy_norms_path):
    """docs/scaling.md's Python example, on the test server."""
    common = {"norms": str(toy_norms_path), "candidates": "concepts", "max_props": 2}
    spec = server.spec(start_token="<|endoftext|>")
    served = tacit.retrieve([spec], quiet=True, **common)
    local = tacit.retrieve([tiny_gpt2], quiet=True, **common)
    np.testing.assert_allclose(
        served.prompts["target_score"], local.prompts["target_score"], atol=1e-5
    )
    assert served.prompts["rank"].tolist() == local.prompts["rank"].tolist()
    assert served.manifest["models"][0]["server"]["consistency_check"]["passed"]
