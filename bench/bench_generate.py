"""Generation with an in-process causal LM: tacit's batched `generate` against a plain loop.

Asks --requests questions (one per CSLB concept: "What does a bear have? List a few of its
properties.") as chat messages, greedy, --max-tokens tokens at most, two ways:

- plain loop: one request at a time, the way a notebook does it: the tokenizer's
  `apply_chat_template(..., add_generation_prompt=True)`, `model.generate(do_sample=False)`,
  the new tokens decoded;
- tacit: CausalLMScorer.generate, --batch-size requests a batch (left-padded, longest first).

The model is a GPT-2-shaped one with random weights on GPT-2's real byte-level BPE
(roberta-base's vocab.json and merges.txt) with a made-up chat template by default (--shape:
gpt2's size or tiny; it never ends an answer by itself, so every answer runs to
--max-tokens), or `--model DIR` for a real instruct model (its own template). It times both
(--repeats rounds, the fastest of each counts), counts the answers the two ways say alike
(greedy: batching may flip a near tie in float32 on real weights, and then the rest of that
answer), and writes bench/results/generate.json (--json). Run:
`python bench/bench_generate.py` (or `--quick` for a smoke run; `--model DIR --json
bench/results/generate_smollm2.json` for SmolLM2).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2TokenizerFast,
)

from tacit.models.answers import GenerationRequest, Sampling
from tacit.models.causal import CausalLMScorer
from tacit.norms import read_norms

BENCH = Path(__file__).resolve().parent
SHARED = BENCH.parents[1] / "shared" / "data"
SHAPES = {
    "gpt2": dict(n_embd=768, n_layer=12, n_head=12),
    "tiny": dict(n_embd=64, n_layer=2, n_head=2),
}
# a chat template of the common shape for the random-weight model (a role marker, the message)
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def build_model(tokenizer_dir: Path, shape: str, where: Path) -> str:
    tokenizer = GPT2TokenizerFast(
        vocab=str(tokenizer_dir / "vocab.json"), merges=str(tokenizer_dir / "merges.txt")
    )
    assert len(tokenizer) > 50000, "pass the real roberta-base (GPT-2 BPE) tokenizer files"
    tokenizer.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=max(tokenizer.get_vocab().values()) + 1,
        n_positions=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **SHAPES[shape],
    )
    GPT2LMHeadModel(config).save_pretrained(where)
    tokenizer.save_pretrained(where)
    return str(where)


def questions(norms: Path, n: int) -> list[list[dict[str, str]]]:
    """One user turn per concept of the norms, in file order."""
    concepts = read_norms(norms).concepts[:n]
    return [
        [
            {
                "role": "user",
                "content": f"What does a {c.split('_')[0]} have? List a few of its properties.",
            }
        ]
        for c in concepts
    ]


def plain_loop(model: Any, tokenizer: Any, chats: list, max_tokens: int) -> list[str]:
    """One request at a time, transformers alone (the model loaded before the clock starts,
    as tacit's is)."""
    pad = model.generation_config.pad_token_id or tokenizer.eos_token_id
    texts = []
    for messages in chats:
        inputs = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        with torch.no_grad():
            out = model.generate(
                **inputs, do_sample=False, max_new_tokens=max_tokens, pad_token_id=pad
            )
        new = out[0, inputs["input_ids"].shape[1] :]
        texts.append(tokenizer.decode(new, skip_special_tokens=True))
    return texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    parser.add_argument("--model", type=Path, help="a real instruct model's folder instead")
    parser.add_argument("--shape", choices=SHAPES, default="tiny")
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads (default 1: on a shared machine a method's time then measures its "
        "work, not how the scheduler treats two threads fighting for busy cores)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny model, 8 x 8: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "generate.json")
    args = parser.parse_args()
    if args.quick:
        args.shape, args.requests, args.max_tokens, args.repeats = "tiny", 8, 8, 1
    torch.set_num_threads(args.threads)
    chats = questions(args.norms, args.requests)
    requests = [GenerationRequest.chat(m) for m in chats]
    sampling = Sampling(max_tokens=args.max_tokens)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = (
            str(args.model)
            if args.model
            else build_model(args.tokenizer_dir, args.shape, Path(tmp) / "model")
        )
        scorer = CausalLMScorer(model_dir, device="cpu", batch_size=args.batch_size)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        best = {"plain": float("inf"), "tacit": float("inf")}
        for _ in range(args.repeats):
            start = time.perf_counter()
            plain = plain_loop(model, tokenizer, chats, args.max_tokens)
            best["plain"] = min(best["plain"], time.perf_counter() - start)
            start = time.perf_counter()
            answers = scorer.generate(requests, sampling, progress=False)
            best["tacit"] = min(best["tacit"], time.perf_counter() - start)
    ours = [a[0].text for a in answers]
    alike = sum(a == b for a, b in zip(ours, plain))
    tokens = sum(a[0].completion_tokens or 0 for a in answers)
    speedup = best["plain"] / best["tacit"]
    names = {"plain": "plain generate loop", "tacit": "tacit (batched)"}
    table = speed_table(best, names, "answers", len(requests))
    record = {
        **run_header("bench_generate.py", args),
        "requests": len(requests),
        "max_tokens": args.max_tokens,
        "completion_tokens": tokens,
        "batch_size": args.batch_size,
        "threads": args.threads,
        "repeats": args.repeats,
        "identical_answers": alike,
        "speedup": speedup,
        "table": table,
    }
    write_record(record, table, args.json)
    print(f"{len(requests)} answers, {tokens} tokens; {alike} identical; {speedup:.2f}x")
    return 0


def speed_table(best: dict[str, float], names: dict[str, str], unit: str, count: int) -> list:
    """Seconds, `unit`s a second and speed-up over the first method, a row a method."""
    first = best[next(iter(names))]
    table = [["method", "seconds", f"{unit}/s", "speed-up"]]
    for method, name in names.items():
        seconds = best[method]
        table.append([name, f"{seconds:.2f}", f"{count / seconds:.2f}", f"{first / seconds:.2f}x"])
    return table


def run_header(script: str, args: argparse.Namespace) -> dict[str, Any]:
    """The record's first fields: the machine, the date, the command and the model."""
    command = " ".join(["python", f"bench/{script}", *sys.argv[1:]])
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s) ({args.threads} thread), "
        f"torch {torch.__version__}",
        "date": date.today().isoformat(),
        "command": command.replace(str(Path.home()), "~"),
        "model": args.model.name if args.model else f"random GPT-2 ({args.shape})",
    }


def write_record(record: dict[str, Any], table: list, path: Path) -> None:
    """The table printed, the record written as JSON to `path`."""
    for row in table:
        print(" | ".join(str(cell) for cell in row))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
