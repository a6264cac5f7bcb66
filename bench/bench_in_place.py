"""Causal vocabulary-in-place scoring (Prince's person prompt): sentences per second, and
tacit's time over its floor, this checkout's code against an earlier one's, taking turns.

Prince's person prompt has its blank near the start ("A <mask> has parents, siblings, ...
and a job."), so a causal model scores it by putting every shared-vocabulary word in the blank
and scoring each sentence (Scorer.score_words). This times that on
GPT-2-shaped models with random weights (the compute of the real ones: `tiny` and GPT-2 small)
on GPT-2's real byte-level BPE, with N words of LAMA's common vocabulary (spread over it), and
replays tacit's own forward passes bare for its floor (peers/floor.py). Each measurement runs in
a fresh process; with `--before-src DIR` (an earlier commit's tacit package, e.g. from
`git archive COMMIT tacit | tar -x -C DIR`) that code is measured too, the two taking turns
(A B A B), the fastest of each counting. Writes bench/results/in_place.json, whose `table`
docs/performance.md renders. Run: `python bench/bench_in_place.py` (`--quick`: a smoke run).
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

BENCH = Path(__file__).resolve().parent
# runs this script with DIR's tacit package in place of the installed one (an editable
# install's import hook removed, DIR first on the path)
EARLIER = (
    "import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in "
    "repr(f).lower()]; sys.path.insert(0, {src!r}); sys.path.insert(1, {bench!r}); "
    "sys.argv = [{script!r}] + sys.argv[1:]; runpy.run_path({script!r}, run_name='__main__')"
)


def vocabulary(path: Path, n: int) -> list[str]:
    """`n` alphabetic words of the file, spread over it."""
    words = [w for w in path.read_text().split() if w.isalpha()]
    return [words[i] for i in np.linspace(0, len(words) - 1, n).round().astype(int)]


def word_ids(scorer, words: list[str]) -> np.ndarray:
    """Each word's token id in leading-space form (score_words' shared vocabulary)."""
    encoded = scorer.tokenizer([" " + w for w in words], add_special_tokens=False)
    return np.array([ids[0] for ids in encoded["input_ids"]])


def measure(model_dir: str, words: list[str], batch_size: int) -> dict:
    """One run in this process: every word in the blank of the person prompt, then the floor."""
    from peers.floor import recording, replay

    from tacit.models.causal import CausalLMScorer
    from tacit.probes.prince.scoring import PERSON_PROMPT

    scorer = CausalLMScorer(model_dir, device="cpu", batch_size=batch_size)
    calls = recording(scorer)
    start = time.perf_counter()
    for _ in scorer.score_words([PERSON_PROMPT], word_ids(scorer, words), words, progress=False):
        pass
    seconds = time.perf_counter() - start
    floor = replay(scorer, calls)
    code = str(Path(sys.modules["tacit"].__file__ or "").parent)
    return {
        "seconds": seconds,
        "floor_s": floor,
        "sentences_per_s": len(words) / seconds,
        "tacit": code,
    }


def in_process(args: argparse.Namespace, model_dir: str, n: int, src: str | None) -> dict:
    """measure() in a fresh process, with the earlier code in `src` if given."""
    script = str(Path(__file__).resolve())
    head = ["-c", EARLIER.format(src=src, bench=str(BENCH), script=script)] if src else [script]
    worker = [
        "--worker",
        model_dir,
        str(n),
        "--vocab",
        str(args.vocab),
        "--batch-size",
        str(args.batch_size),
        "--threads",
        str(args.threads),
    ]
    done = subprocess.run([sys.executable, *head, *worker], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])


def commit() -> str:
    """The checkout's commit, with `+` where tacit/ has changes not committed."""
    git = ["git", "-C", str(BENCH)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    changed = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", "../tacit"]).returncode
    return head.stdout.strip() + ("+" if changed else "")


def table(runs: dict, before: str | None) -> list[list[str]]:
    """One row per model: rates (before, now), the speed-up, tacit over its floor."""
    header = ["model (random weights)", "words in the blank", "sentences/s"]
    if before:
        header = [*header[:2], f"sentences/s at {before}", "sentences/s now", "speed-up"]
    rows = [[*header, "tacit / its floor"]]
    for item, run in runs.items():
        shape, n = item.split(":")
        now = run["now"]
        row = [f"GPT-2 {'small' if shape == 'gpt2' else shape}-shaped", n]
        if before:
            old = run["before"]
            row += [
                f"{old['sentences_per_s']:.1f}",
                f"{now['sentences_per_s']:.1f}",
                f"{now['sentences_per_s'] / old['sentences_per_s']:.2f}x",
            ]
        else:
            row.append(f"{now['sentences_per_s']:.1f}")
        rows.append([*row, f"{now['seconds'] / now['floor_s']:.2f}x"])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=Path, default=SHARED / "vocab" / "common_vocab_cased.txt")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    parser.add_argument(
        "--words",
        nargs="+",
        default=["tiny:5000", "gpt2:1000"],
        metavar="SHAPE:N",
        help="models and vocabulary sizes (GPT-2 small scores about 15 sentences/s here)",
    )
    parser.add_argument(
        "--before-src", type=Path, help="an earlier commit's tacit package's parent"
    )
    parser.add_argument("--before", help="what --before-src holds, for the table (a commit)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2, help="fastest of these runs counts")
    parser.add_argument("--quick", action="store_true", help="tiny model, 200 words")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "in_place.json")
    parser.add_argument("--worker", nargs=2, metavar=("MODEL_DIR", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.worker:
        words = vocabulary(args.vocab, int(args.worker[1]))
        print(json.dumps(measure(args.worker[0], words, args.batch_size)))
        return 0
    if args.quick:
        args.words, args.repeats = ["tiny:200"], 1
    codes = {"before": str(args.before_src)} if args.before_src else {}
    codes["now"] = None
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for item in args.words:
            shape, n = item.split(":")
            model_dir = build_model(args.tokenizer_dir, shape, Path(tmp) / shape)
            tries: dict[str, list[dict]] = {code: [] for code in codes}
            for _ in range(args.repeats):
                for code, src in codes.items():
                    tries[code].append(in_process(args, model_dir, int(n), src))
                    print(f"{item} {code}: {tries[code][-1]}", file=sys.stderr, flush=True)
            runs[item] = {
                "words": int(n),
                **{code: min(got, key=lambda r: r["seconds"]) for code, got in tries.items()},
            }
    before = (args.before or str(args.before_src)) if args.before_src else None
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s) ({args.threads} thread), "
        f"torch {torch.__version__}",
        "date": date.today().isoformat(),
        "command": "python bench/bench_in_place.py " + " ".join(sys.argv[1:]),
        "commit": commit(),
        "before": before,
        "batch_size": args.batch_size,
        "runs": runs,
        "table": table(runs, before),
    }
    for row in record["table"]:
        print(" | ".join(row))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
