"""The score cache (`--cache DIR`) on a sweep whose cells repeat each other's sentences.

A sweep of retrieval with concept spans (`candidates = "concepts"`) on a GPT-2-shaped causal
model with random weights (GPT-2 small's compute by default) on GPT-2's real BPE, CSLB's
norms, and an axis of span normalisations (`sum`, `mean`, `pmi`): every cell scores the same
concept-in-template sentences (`pmi` adds each concept's property-free sentence), so without a
cache the second and third cells score again what the first scored. Run three ways, each into
its own folder, taking turns (--repeats rounds, the fastest of each counting):

- no cache: every cell scores every sentence it reads;
- a cold cache: the first cell scores, the later cells read what it kept;
- a warm cache: the sweep run again on the cache the cold run left (a rerun, an added axis).

It checks that every cell's tables (prompts.csv, summary.csv) are the same bytes all three
ways, and sums the cells' cache counts from their manifests (entries found and scored). Writes
bench/results/cache.json, whose table docs/scaling.md shows. Run:
`python bench/bench_cache.py` (--quick: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import torch
from bench_causal import SHARED, build_model

import tacit

BENCH = Path(__file__).resolve().parent
NORMALISATIONS = ["sum", "mean", "pmi"]
SWEEP = """
models = [{model!r}]
norms = [{norms!r}]

[run]
quiet = true
batch_size = 32
limit = {limit}
{cache}

[retrieve]
candidates = "concepts"
max_props = {max_props}
normalize = {{ axis = {normalisations} }}
"""


def sweep_file(where: Path, args: argparse.Namespace, model: str, cache: Path | None) -> Path:
    text = SWEEP.format(
        model=model,
        norms=str(args.norms),
        cache=f"cache = {str(cache)!r}" if cache else "",
        max_props=args.max_props,
        limit=args.limit,
        normalisations=json.dumps(NORMALISATIONS),
    )
    path = where / ("cached.toml" if cache else "plain.toml")
    path.write_text(text)
    return path


def run(path: Path, out: Path) -> float:
    """One sweep into a fresh folder; its wall time."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    cells = tacit.run_sweep(str(path), str(out))
    elapsed = time.perf_counter() - start
    assert set(cells["state"]) == {"complete"}, cells
    return elapsed


def tables(out: Path) -> dict[str, bytes]:
    return {
        str(f.relative_to(out)): f.read_bytes()
        for name in ("prompts.csv", "summary.csv")
        for f in sorted(out.rglob(name))
    }


def cache_counts(out: Path) -> dict[str, int]:
    counts = {"found": 0, "scored": 0}
    for manifest in out.rglob("manifest.json"):
        for model in json.loads(manifest.read_text()).get("models", []):
            for key in counts:
                counts[key] += model.get("cache", {}).get(key, 0)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument("--tokenizer", type=Path, default=SHARED / "tokenizers" / "roberta-base")
    parser.add_argument("--model", help="a causal LM directory (default: GPT-2 small's shape)")
    parser.add_argument("--limit", type=int, default=6, help="concepts (retrieve --limit)")
    parser.add_argument("--max-props", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2, help="fastest of these runs counts")
    parser.add_argument("--quick", action="store_true", help="tiny model, 6 concepts")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "cache.json")
    args = parser.parse_args()
    if args.quick:
        args.limit, args.max_props, args.repeats = 6, 1, 1
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = args.model or build_model(
            args.tokenizer, "tiny" if args.quick else "gpt2", tmp / "model"
        )
        cache = tmp / "cache"
        plain, cached = sweep_file(tmp, args, model, None), sweep_file(tmp, args, model, cache)
        times: dict[str, float] = {}
        counts: dict[str, dict[str, int]] = {}
        outputs: dict[str, dict[str, bytes]] = {}
        for _ in range(args.repeats):
            shutil.rmtree(cache, ignore_errors=True)
            for way, path in (("no cache", plain), ("cold cache", cached), ("warm cache", cached)):
                out = tmp / way.replace(" ", "-")
                times[way] = min(times.get(way, float("inf")), run(path, out))
                counts[way], outputs[way] = cache_counts(out), tables(out)
        assert outputs["cold cache"] == outputs["no cache"] == outputs["warm cache"]
    cells = len(outputs["no cache"]) // 2
    table = [
        {
            "sweep": way,
            "cells": cells,
            "s": f"{t:.1f}",
            "vs no cache": f"{times['no cache'] / t:.2f}x",
            "cache entries read": counts[way]["found"],
            "cache entries scored": counts[way]["scored"],
        }
        for way, t in times.items()
    ]
    print(json.dumps(table, indent=2))
    if not args.quick:
        result = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), torch {torch.__version__}",
            "date": str(date.today()),
            "command": "python bench/bench_cache.py " + " ".join(sys.argv[1:]),
            "model": args.model or "GPT-2 small shape, random weights",
            "axis": {"normalize": NORMALISATIONS},
            "tables_identical": True,
            "table": table,
        }
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
