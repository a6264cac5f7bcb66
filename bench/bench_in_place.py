"""Causal vocabulary-in-place scoring (Prince's person prompt): sentences per second, and
tacit's time over its floor.

Prince's person prompt has its blank near the start ("A <mask> has parents, siblings, ...
and a job."), so a causal model scores it by putting every shared-vocabulary word in the blank
and scoring each sentence (CausalLMScorer.score_words_in_place). This times that on
GPT-2-shaped models with random weights (the compute of the real ones: `tiny` and GPT-2 small)
on GPT-2's real byte-level BPE, with --words words of LAMA's common vocabulary (spread over it),
and replays tacit's own forward passes bare for its floor (peers/floor.py). `--before FILE`
puts an earlier run's rates (of another commit) beside this one's. Writes
bench/results/in_place.json, whose `table` docs/performance.md renders. Run:
`python bench/bench_in_place.py` (`--quick`: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
import torch
from bench_causal import build_model
from bench_retrieve import SHARED
from peers.floor import recording, replay

from tacit.models.causal import CausalLMScorer
from tacit.probes.prince import PERSON_PROMPT

BENCH = Path(__file__).resolve().parent


def vocabulary(path: Path, n: int) -> list[str]:
    """`n` alphabetic words of the file, spread over it."""
    words = [w for w in path.read_text().split() if w.isalpha()]
    return [words[i] for i in np.linspace(0, len(words) - 1, n).round().astype(int)]


def measure(model_dir: str, words: list[str], batch_size: int) -> dict:
    """One run: score every word in the blank (one prompt), then the floor."""
    scorer = CausalLMScorer(model_dir, device="cpu", batch_size=batch_size)
    calls = recording(scorer)
    start = time.perf_counter()
    for _ in scorer.score_words_in_place([PERSON_PROMPT], words, progress=False):
        pass
    seconds = time.perf_counter() - start
    floor = replay(scorer, calls)
    return {"seconds": seconds, "floor_s": floor, "sentences_per_s": len(words) / seconds}


def commit() -> str:
    """The checkout's commit, with `+` where tacit/ has changes not committed."""
    git = ["git", "-C", str(BENCH)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    changed = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", "../tacit"]).returncode
    return head.stdout.strip() + ("+" if changed else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=Path, default=SHARED / "vocab" / "common_vocab_cased.txt")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    parser.add_argument(
        "--words", nargs="+", default=["tiny:5000", "gpt2:1000"], metavar="SHAPE:N",
        help="models and vocabulary sizes (GPT-2 small scores about 15 sentences/s here)",
    )  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2, help="fastest of these runs counts")
    parser.add_argument("--before", type=Path, help="an earlier run's JSON, shown beside")
    parser.add_argument("--commit", default=commit(), help="the code measured (default: HEAD)")
    parser.add_argument("--quick", action="store_true", help="tiny model, 200 words")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "in_place.json")
    args = parser.parse_args()
    if args.quick:
        args.words, args.repeats = ["tiny:200"], 1
    torch.set_num_threads(args.threads)
    before = json.loads(args.before.read_text()) if args.before else None
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for item in args.words:
            shape, n = item.split(":")
            model_dir = build_model(args.tokenizer_dir, shape, Path(tmp) / shape)
            words = vocabulary(args.vocab, int(n))
            tries = [measure(model_dir, words, args.batch_size) for _ in range(args.repeats)]
            runs[item] = {"words": len(words), **min(tries, key=lambda r: r["seconds"])}
            print(f"{item}: {runs[item]}", flush=True)
    table = [["model (random weights)", "words in the blank", "sentences/s", "tacit / its floor"]]
    if before:
        table[0][2:2] = [f"sentences/s before ({before['commit']})"]
    for item, run in runs.items():
        shape, n = item.split(":")
        name = "GPT-2 tiny-shaped" if shape == "tiny" else "GPT-2 small-shaped"
        ratio = run["seconds"] / run["floor_s"]
        row = [name, n, f"{run['sentences_per_s']:.1f}", f"{ratio:.2f}x"]
        if before:
            old = before["runs"].get(item)
            row[2:2] = [f"{old['sentences_per_s']:.1f}" if old else ""]
        table.append(row)
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s) ({args.threads} thread), "
        f"torch {torch.__version__}",
        "date": date.today().isoformat(),
        "command": "python bench/bench_in_place.py " + " ".join(sys.argv[1:]),
        "commit": args.commit,
        "prompt": PERSON_PROMPT,
        "batch_size": args.batch_size,
        "runs": runs,
        "before": before and {k: before[k] for k in ("commit", "date", "runs")},
        "table": table,
    }
    for row in table:
        print(" | ".join(row))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
