"""Sampled draws: a request's --samples N draws in one batched generate call against N calls.

Asks --requests questions (one per CSLB concept, as bench_generate.py asks them) as chat
messages, sampled (temperature 1, --max-tokens tokens at most), N draws each, two ways:

- one draw at a time: per request and draw, `torch.manual_seed` and a plain
  `model.generate(do_sample=True, num_return_sequences=1)`, the way a loop over samples does;
- tacit: CausalLMScorer.generate with Sampling(n=N, seed=0): a request's N draws in one call
  (`num_return_sequences=N`), seeded by request_seed(seed, request).

The model is bench_generate.py's GPT-2-shaped one with random weights on GPT-2's real BPE
(--shape), or `--model DIR` for a real instruct model. It times both (--repeats rounds, the
fastest counts), checks that tacit's draws are the same on a second run under the same seed
(and others under another seed), and writes bench/results/draws.json (--json). Run: `python
bench/bench_draws.py` (or `--quick` for a smoke run).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from bench_generate import (
    SHAPES,
    SHARED,
    build_model,
    questions,
    run_header,
    speed_table,
    write_record,
)
from transformers import AutoModelForCausalLM, AutoTokenizer

from tacit.models.answers import GenerationRequest, Sampling
from tacit.models.causal import CausalLMScorer

BENCH = Path(__file__).resolve().parent


def one_at_a_time(model: Any, tokenizer: Any, chats: list, n: int, max_tokens: int) -> int:
    """N draws of each request, one generate call a draw; the tokens generated."""
    pad = model.generation_config.pad_token_id or tokenizer.eos_token_id
    tokens = 0
    for at, messages in enumerate(chats):
        inputs = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        for draw in range(n):
            torch.manual_seed(at * n + draw)
            with torch.no_grad():
                out = model.generate(
                    **inputs,
                    do_sample=True,
                    temperature=1.0,
                    top_k=0,
                    max_new_tokens=max_tokens,
                    pad_token_id=pad,
                )
            tokens += out.shape[1] - inputs["input_ids"].shape[1]
    return tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    parser.add_argument("--model", type=Path, help="a real instruct model's folder instead")
    parser.add_argument("--shape", choices=SHAPES, default="tiny")
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    parser.add_argument("--quick", action="store_true", help="tiny model, 2 x 3 x 8: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "draws.json")
    args = parser.parse_args()
    if args.quick:
        args.shape, args.requests, args.samples, args.max_tokens = "tiny", 2, 3, 8
        args.repeats = 1
    torch.set_num_threads(args.threads)
    chats = questions(args.norms, args.requests)
    requests = [GenerationRequest.chat(m) for m in chats]
    sampling = Sampling(n=args.samples, temperature=1.0, max_tokens=args.max_tokens, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = (
            str(args.model)
            if args.model
            else build_model(args.tokenizer_dir, args.shape, Path(tmp) / "model")
        )
        scorer = CausalLMScorer(model_dir, device="cpu")
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        best = {"one": float("inf"), "tacit": float("inf")}
        for _ in range(args.repeats):
            start = time.perf_counter()
            plain_tokens = one_at_a_time(model, tokenizer, chats, args.samples, args.max_tokens)
            best["one"] = min(best["one"], time.perf_counter() - start)
            start = time.perf_counter()
            answers = scorer.generate(requests, sampling, progress=False)
            best["tacit"] = min(best["tacit"], time.perf_counter() - start)
        again = scorer.generate(requests, sampling, progress=False)
        other = scorer.generate(
            requests,
            Sampling(n=args.samples, temperature=1.0, max_tokens=args.max_tokens, seed=1),
            progress=False,
        )
    texts = [[c.text for c in said] for said in answers]
    same = texts == [[c.text for c in said] for said in again]
    differ = texts != [[c.text for c in said] for said in other]
    tokens = sum(c.completion_tokens or 0 for said in answers for c in said)
    draws = len(requests) * args.samples
    speedup = best["one"] / best["tacit"]
    names = {"one": "one draw a call", "tacit": "tacit (N draws a call)"}
    table = speed_table(best, names, "draws", draws)
    record = {
        **run_header("bench_draws.py", args),
        "requests": len(requests),
        "samples": args.samples,
        "max_tokens": args.max_tokens,
        "completion_tokens": tokens,
        "completion_tokens_one_at_a_time": plain_tokens,
        "threads": args.threads,
        "repeats": args.repeats,
        "same_draws_same_seed": same,
        "other_draws_other_seed": differ,
        "speedup": speedup,
        "table": table,
    }
    write_record(record, table, args.json)
    print(f"{draws} draws, {tokens} tokens; same seed same draws: {same}; {speedup:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
