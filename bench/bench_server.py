"""Scoring through a completions server: how much of the engine's own rate tacit's client
reaches, and the same sentences scored in process.

The server runs in its own process on 127.0.0.1: the tests' OpenAI-compatible server
(tests/support_server.py: a transformers model, one prompt at a time, as an engine on one CPU
would), or with --llama-cpp FILE.gguf llama-cpp-python's `llama_cpp.server` (where it is
installed). The same sentences (retrieval's paper template with concept spans: "A bear has
fur.") are sent three ways, taking turns (--repeats rounds, the fastest of each counting):

- bare: the engine's own rate: the exact requests tacit sends (the same prompts, start token
  and all, the same prompts per request and requests in flight), from a bare thread pool that
  only sends them and parses the JSON: what any client could get out of this server;
- tacit: `Scorer.score_spans` of the server family (`--model NAME,base_url=...`): the requests,
  reading the echo, the spans' shares, the sums;
- in process: the same model scored by tacit's in-process causal family (the key/value cache
  reusing the text before the blank), for scale.

With --generate, the same three ways generate instead: one chat per concept ("What does a
bear have? List a few of its properties."), greedy, --max-tokens at most, to
`/v1/chat/completions` (the model gets bench_generate's chat template): bare, the exact bodies
tacit sends (tacit.models.server.generation.body) from a bare thread pool; tacit,
`Scorer.generate` of the server family; in process, the in-process family's batched
`generate`. It checks that tacit's texts equal the bare requests' (one server, greedy), and
writes bench/results/server_generate.json.

The goal is a client that is never the bottleneck: tacit >= 90% of the bare rate. With
--llama-cpp, llama-cpp-python 0.3's echo reads each prompt token's log-probability at its own
position (not the one before: tacit's start check refuses it, which this reports), so its
rate is measured with the check relaxed (`check_tolerance=1000`), for speed only. Writes
bench/results/server.json (with --llama-cpp: server_llama_cpp.json), whose tables
docs/scaling.md shows. Run: `python bench/bench_server.py` (--quick: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from urllib.request import Request, urlopen

import torch
from bench_causal import SHARED, build_model

from tacit.core.blank import filled
from tacit.core.errors import TacitError
from tacit.core.options import RunOptions
from tacit.models import load_scorer
from tacit.norms import read_norms

BENCH = Path(__file__).resolve().parent
TESTS = BENCH.parent / "tests"
TEMPLATE = "<mask> has fur."
# the tests' server, serving MODEL_DIR as NAME on PORT until killed
TEST_SERVER = (
    "import sys, time; sys.path.insert(0, {tests!r}); from support_server import TestServer; "
    "s = TestServer({model!r}, {name!r}); s.start(); print(s.url, flush=True); time.sleep(1e9)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args: argparse.Namespace, model_dir: str) -> tuple[subprocess.Popen, str]:
    """The server process and its base URL, once it answers."""
    if args.llama_cpp:
        port = free_port()
        python = os.environ.get("TACIT_LLAMA_CPP_PYTHON", sys.executable)
        argv = [python, "-m", "llama_cpp.server", "--model", str(args.llama_cpp)]
        argv += ["--model_alias", args.name, "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--logits_all", "true", "--n_threads", str(args.threads), "--n_ctx", "512"]
        server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/v1"
    else:
        code = TEST_SERVER.format(tests=str(TESTS), model=model_dir, name=args.name)
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
        server = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
        )
        assert server.stdout is not None
        url = server.stdout.readline().strip()  # TestServer.url ends in /v1
    for _ in range(600):
        try:
            urlopen(url + "/models", timeout=1).read()
            return server, url
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit(f"the server at {url} did not answer")


def sentences(norms: Path, n_templates: int, n_concepts: int) -> tuple[list[str], list[str]]:
    """Templates (the paper's retrieval template for the first properties of CSLB's `has`)
    and concept spans ("A bear")."""
    table = read_norms(norms).table
    has = table[table["relation"] == "has"]
    features = list(dict.fromkeys(has["feature"]))[:n_templates]
    templates = [TEMPLATE.replace("has fur", f.replace("_", " ")) for f in features]
    concepts = list(dict.fromkeys(table["concept"]))[:n_concepts]
    return templates, [f"A {c.replace('_', ' ')}" for c in concepts]


def bare(url: str, name: str, prompts: list[str], per_request: int, concurrency: int) -> None:
    """The requests tacit sends, sent and parsed, nothing else."""
    bodies = [
        json.dumps(
            {
                "model": name,
                "prompt": prompts[i : i + per_request],
                "echo": True,
                "logprobs": 1,
                "max_tokens": 1,
                "temperature": 0.0,
            }
        ).encode()
        for i in range(0, len(prompts), per_request)
    ]

    def send(body: bytes) -> int:
        request = Request(url + "/completions", body, headers={"Content-Type": "application/json"})
        with urlopen(request, timeout=600) as answer:
            return len(json.loads(answer.read())["choices"])

    with ThreadPoolExecutor(concurrency) as pool:
        assert sum(pool.map(send, bodies)) == len(prompts)


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument("--tokenizer", type=Path, default=SHARED / "tokenizers" / "roberta-base")
    parser.add_argument("--model", help="a causal LM directory (default: GPT-2 small's shape)")
    parser.add_argument("--llama-cpp", type=Path, help="a GGUF file: llama-cpp-python's server")
    parser.add_argument("--name", default="bench", help="the model's name on the server")
    parser.add_argument("--templates", type=int, default=8)
    parser.add_argument("--concepts", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--per-request", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="the server's and tacit's")
    parser.add_argument("--repeats", type=int, default=2, help="fastest of these runs counts")
    parser.add_argument("--quick", action="store_true", help="tiny model, 2 x 6 sentences")
    parser.add_argument("--generate", action="store_true", help="chats, not scores")
    parser.add_argument("--max-tokens", type=int, default=16, help="with --generate")
    parser.add_argument("--json", type=Path, help="default: bench/results/server[_llama_cpp].json")
    args = parser.parse_args()
    name = "server_llama_cpp.json" if args.llama_cpp else "server.json"
    name = "server_generate.json" if args.generate else name
    args.json = args.json or BENCH / "results" / name
    if args.quick:
        args.templates, args.concepts, args.repeats = 2, 6, 1
    torch.set_num_threads(args.threads)
    templates, spans = sentences(args.norms, args.templates, args.concepts)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or build_model(
            args.tokenizer, "tiny" if args.quick else "gpt2", Path(tmp) / "model"
        )
        if args.generate and not args.model:
            with_chat_template(model_dir)
        server, url = start_server(args, model_dir)
        try:
            if args.generate:
                result = measure_generation(args, model_dir, url, spans)
            else:
                result = measure(args, model_dir, url, templates, spans)
        finally:
            server.kill()
    print(json.dumps(result["table"], indent=2))
    if not args.quick:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def measure(
    args: argparse.Namespace, model_dir: str, url: str, templates: list[str], spans: list[str]
) -> dict:
    """Each way timed in turns; the rates and tacit's share of the bare rate."""
    # the model's own tokenizer: the start-token rule of the in-process family, and planning
    spec = f"{args.name},base_url={url},concurrency={args.concurrency},tokenizer={model_dir}"
    options = RunOptions(device="cpu", batch_size=args.per_request, quiet=True)
    refusal = None
    if args.llama_cpp:
        try:
            load_scorer(spec, options)
        except TacitError as err:
            refusal = str(err)
        # for speed only: an ordinary start token it echoes, the known engine's refusal
        # (tacit.models.server.connect.refuse_known) left out and the check relaxed
        import tacit.models.server.connect as connect

        connect.refuse_known = lambda *given: None
        spec += ",start_token=Hello,check_tolerance=1000"
    served = load_scorer(spec, options)
    local = load_scorer(model_dir, RunOptions(device="cpu", batch_size=32, quiet=True))
    start = served.served.start
    prompts = [start + text for t in templates for s in spans for text, _, _ in [filled(t, s)]]
    ways = {
        "bare requests (the engine's rate)": lambda: bare(
            url, args.name, prompts, served.batch_size, args.concurrency
        ),
        "tacit's server client": lambda: served.score_spans(templates, spans, progress=False),
        "tacit in process": lambda: local.score_spans(templates, spans, progress=False),
    }
    times: dict[str, float] = {}
    for _ in range(args.repeats):
        for way, run in ways.items():
            times[way] = min(times.get(way, float("inf")), timed(run))
    got = served.score_spans(templates, spans, progress=False).sentence
    want = local.score_spans(templates, spans, progress=False).sentence
    gap = float(abs(got - want).max())
    return {
        **about(args),
        "prompts_per_request": served.batch_size,
        "concurrency": args.concurrency,
        "max_gap_nats_server_vs_in_process": gap,
        "start_check_refusal": refusal,
        "table": rates(times, len(prompts), "sentences"),
    }


def about(args: argparse.Namespace) -> dict:
    """The machine, date, command, server and model a result was measured with."""
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), torch {torch.__version__}",
        "date": str(date.today()),
        "command": "python bench/bench_server.py " + " ".join(sys.argv[1:]),
        "server": "llama-cpp-python" if args.llama_cpp else "tests/support_server.py",
        "model": args.llama_cpp.name if args.llama_cpp else (args.model or "GPT-2 small shape"),
    }


def rates(times: dict[str, float], n: int, unit: str) -> list[dict]:
    """Each way's time and rate of `n` `unit`s, and its share of the bare requests' rate."""
    engine = n / times["bare requests (the engine's rate)"]
    return [
        {
            "way": way,
            unit: n,
            "s": f"{t:.2f}",
            f"{unit} / s": f"{n / t:.2f}",
            "of the engine's rate": f"{(n / t) / engine:.0%}" if "in process" not in way else "",
        }
        for way, t in times.items()
    ]


def with_chat_template(model_dir: str) -> None:
    """bench_generate's chat template, given to the random-weight model's tokenizer."""
    from bench_generate import TEMPLATE as CHAT
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.chat_template = CHAT
    tokenizer.save_pretrained(model_dir)


def bare_chats(url: str, bodies: list[dict], concurrency: int) -> list[str]:
    """The chat requests tacit sends, sent and parsed, nothing else: each answer's text."""

    def send(body: dict) -> str:
        data = json.dumps(body).encode()
        request = Request(
            url + "/chat/completions", data, headers={"Content-Type": "application/json"}
        )
        with urlopen(request, timeout=600) as answer:
            return json.loads(answer.read())["choices"][0]["message"]["content"]

    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(send, bodies))


def measure_generation(
    args: argparse.Namespace, model_dir: str, url: str, spans: list[str]
) -> dict:
    """Each way of generating timed in turns; the rates in answers per second and tacit's
    share of the bare rate; tacit's texts against the bare requests' and in process."""
    from tacit.models.answers import GenerationRequest, Sampling
    from tacit.models.server.generation import body

    concepts = [span.removeprefix("A ") for span in spans]
    requests = [
        GenerationRequest.chat(
            [{"role": "user", "content": f"What does a {c} have? List a few of its properties."}]
        )
        for c in concepts
    ]
    sampling = Sampling(max_tokens=args.max_tokens)
    spec = f"{args.name},base_url={url},concurrency={args.concurrency},tokenizer={model_dir}"
    served = load_scorer(spec, RunOptions(device="cpu", quiet=True))
    local = load_scorer(model_dir, RunOptions(device="cpu", batch_size=16, quiet=True))
    bodies = [body(args.name, r, sampling)[1] for r in requests]
    said: dict[str, list[str]] = {}

    def texts(answers) -> list[str]:
        return [a[0].text for a in answers]

    ways = {
        "bare requests (the engine's rate)": lambda: bare_chats(url, bodies, args.concurrency),
        "tacit's server client": lambda: texts(served.generate(requests, sampling, progress=False)),
        "tacit in process": lambda: texts(local.generate(requests, sampling, progress=False)),
    }
    times: dict[str, float] = {}
    for _ in range(args.repeats):
        for way, run in ways.items():
            start = time.perf_counter()
            said[way] = run()
            times[way] = min(times.get(way, float("inf")), time.perf_counter() - start)
    bare_texts, client, in_process = said.values()
    return {
        **about(args),
        "max_tokens": args.max_tokens,
        "concurrency": args.concurrency,
        "texts_alike_tacit_vs_bare": sum(a == b for a, b in zip(client, bare_texts)),
        "texts_alike_server_vs_in_process": sum(a == b for a, b in zip(client, in_process)),
        "table": rates(times, len(requests), "answers"),
    }


if __name__ == "__main__":
    sys.exit(main())
