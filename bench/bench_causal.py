"""Span scoring with a decoder-only LM: the key/value-cache scorer against whole sentences.

Builds a GPT-2-shaped causal LM with random weights (gpt2's shape by default: the same compute
as the real model) on GPT-2's real byte-level BPE (roberta-base's vocab.json and merges.txt),
and scores the same elicitation candidates two ways:

- cache: CausalLMScorer.score_spans: "Everyone knows that a bear has" runs once per prompt and
  its key/value cache serves every answer; only the answer's and the suffix's tokens run;
- whole: batched full-sentence scoring, the way minicons' `sequence_score` does it: every
  sentence padded into a batch, one forward pass, log_softmax, gather, sum
  (`score_spans(..., cache=False)`).

The prompts are CSLB's `has` prompts for the first --concepts concepts, the candidates the
--answers most frequent distinct `has` answers of the norms (one to several words each); every
prompt x answer is one sentence. It counts the tokens each way runs through the model, times
both (the methods take turns, --repeats rounds, the fastest of each counts), asserts that the
scores agree (within float rounding: the same sums computed in different batch shapes), and
writes bench/results/causal.json with the table docs/probes/causal.md shows. Run:
`python bench/bench_causal.py` (or `--quick` for a smoke run).
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

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

from tacit.models.causal import CausalLMScorer
from tacit.norms import read_norms
from tacit.probes.elicit.prompts import elicitation_prompt

BENCH = Path(__file__).resolve().parent
SHARED = BENCH.parents[1] / "shared" / "data"
SHAPES = {
    "gpt2": dict(n_embd=768, n_layer=12, n_head=12),
    "tiny": dict(n_embd=64, n_layer=2, n_head=2),
}


def build_model(tokenizer_dir: Path, shape: str, where: Path) -> str:
    tokenizer = GPT2TokenizerFast(
        vocab=str(tokenizer_dir / "vocab.json"), merges=str(tokenizer_dir / "merges.txt")
    )
    assert len(tokenizer) > 50000, "pass the real roberta-base (GPT-2 BPE) tokenizer files"
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


def candidates(norms: Path, n_concepts: int, n_answers: int) -> tuple[list[str], list[str]]:
    """CSLB's `has` elicitation prompts and its most frequent distinct `has` answers."""
    table = read_norms(norms).table
    has = table[table["relation"] == "has"]
    answers = [a.replace("_", " or ") for a in has["answer"].value_counts().index[:n_answers]]
    concepts = list(dict.fromkeys(has["concept"]))[:n_concepts]
    return [elicitation_prompt(c, "has") for c in concepts], answers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    parser.add_argument("--shape", choices=SHAPES, default="gpt2")
    parser.add_argument("--concepts", type=int, default=4)
    parser.add_argument("--answers", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads (default 1: on a shared machine a method's time then measures its "
        "work, not how the scheduler treats two threads fighting for busy cores)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny model, 2 x 32: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "causal.json")
    args = parser.parse_args()
    if args.quick:
        args.shape, args.concepts, args.answers, args.repeats = "tiny", 2, 32, 1
    torch.set_num_threads(args.threads)
    templates, spans = candidates(args.norms, args.concepts, args.answers)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(args.tokenizer_dir, args.shape, Path(tmp) / "model")
        scorer = CausalLMScorer(model_dir, device="cpu", batch_size=args.batch_size)
        best = {"cache": float("inf"), "whole": float("inf")}
        scores, tokens = {}, {}
        for _ in range(args.repeats):
            for method in best:
                start = time.perf_counter()
                scores[method] = scorer.score_spans(
                    templates, spans, progress=False, cache=method == "cache"
                )
                best[method] = min(best[method], time.perf_counter() - start)
                tokens[method] = scores[method].work["span_tokens"]
    cache, whole = scores["cache"], scores["whole"]
    assert cache.sentence is not None and whole.sentence is not None
    difference = float(np.abs(cache.sentence - whole.sentence).max())
    assert difference < 1e-3, f"the two ways disagree by {difference}"
    np.testing.assert_array_equal(cache.n_tokens, whole.n_tokens)
    sentences = len(templates) * len(spans)
    speedup = best["whole"] / best["cache"]
    table = [["method", "tokens run", "seconds", "sentences/s", "speed-up"]]
    for method, name in (("whole", "whole sentences (minicons-style)"), ("cache", "tacit (cache)")):
        table.append(
            [
                name,
                tokens[method],
                f"{best[method]:.2f}",
                f"{sentences / best[method]:.0f}",
                f"{best['whole'] / best[method]:.2f}x",
            ]
        )
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s) ({args.threads} thread), "
        f"torch {torch.__version__}",
        "date": date.today().isoformat(),
        "command": " ".join(["python", "bench/bench_causal.py", *sys.argv[1:]]),
        "shape": args.shape,
        "prompts": len(templates),
        "answers": len(spans),
        "sentences": sentences,
        "batch_size": args.batch_size,
        "threads": args.threads,
        "repeats": args.repeats,
        "max_abs_difference": difference,
        "speedup": speedup,
        "table": table,
    }
    for row in table:
        print(" | ".join(str(cell) for cell in row))
    print(f"{sentences} sentences; scores agree within {difference:.2e}; {speedup:.2f}x")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
