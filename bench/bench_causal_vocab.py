"""A causal model's vocabulary mode with the text after the blank: what counting it costs.

On CSLB's `has` elicitation prompts ("Everyone knows that a bear has <mask>.") over a shared
vocabulary (the model's single-token words in LAMA's common vocabulary: about 20,000), three
ways, timed on the same prompts:

- next token: the next-token distribution alone (what vocabulary mode was before; the base
  scorer's hook, kept for this comparison only);
- pruned: tacit's vocabulary mode, log P(w | before) + log P("." | before, w) exactly for the
  words a reduction can read (the gold answers' ranks and AP, the top 5) and an upper bound
  for the rest (tacit.models.causal_vocab);
- bounded (`--suffix-top K`, default 1000): the text after the blank scored for the golds and
  the K words most likely before it; ranks it cannot settle are upper bounds, counted;
- every suffix: the same score for every word (`needed=None`), on the first --brute prompts.

It checks that the pruned and the every-suffix reads agree (gold ranks, top 5, AP over the
vocabulary: identical), that the bounded read's ranks equal the pruned ones wherever they are
not flagged bounded (and are at least them where they are), counts the suffixes scored and the
bounded ranks, and gives the largest AP difference; with --start-tokens, it gives mean AP
from several start tokens. The model is a local directory: a random-weight model's next-token
distribution is nearly flat, so pruning has nothing to leave out and this measures nothing
realistic. Run, e.g. on SmolLM2-135M-Instruct from its GGUF file (dequantised to float32 and
saved): `python bench/bench_causal_vocab.py --model DIR --label SmolLM2-135M-Instruct`.
Writes bench/results/causal_vocab.json (docs/probes/causal.md shows its table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import torch

from tacit.models.answers import Needed
from tacit.models.base import Scorer
from tacit.models.causal import CausalLMScorer
from tacit.norms import read_norms
from tacit.probes.elicit.prompts import build_elicitation_prompts, gold_answers, parse_gold
from tacit.ranking import Question, Ranking
from tacit.ranking.vocabulary import WorkCount, reduce
from tacit.vocab.shared import build_vocabulary

BENCH = Path(__file__).resolve().parent
SHARED = BENCH.parents[1] / "shared" / "data"
CPU = torch.device("cpu")


def prompts_and_golds(scorer, norms: Path, vocab_file: Path, n: int, seed: int):
    """A seeded sample of n `has` prompts (with the paper's prefix), each prompt's gold
    answers as positions in the shared vocabulary, and the vocabulary."""
    vocab = build_vocabulary({scorer.name: scorer.tokenizer}, vocab_file=vocab_file)
    golds = gold_answers(read_norms(norms), vocab, ["has"])
    prompts = build_elicitation_prompts(golds.answers, ["has"], [True])
    chosen = prompts.sample(n=min(n, len(prompts)), random_state=seed).sort_index()
    positions = [[vocab.index(w) for w, _ in parse_gold(g)] for g in chosen["gold"]]
    return list(chosen["prompt"]), positions, vocab


def read(batches, golds) -> Ranking:
    """What the ranking layer reads of the batches: the golds' ranks, AP and the top 5 (and,
    from bounded batches, which ranks are bounds)."""
    batches = list(batches)
    words = np.asarray([str(n) for n in range(batches[0].shared.shape[1])], dtype=object)
    return reduce(batches, Question([""] * len(golds), golds, 5), words, CPU, None).ranking(words)


def timed(run):
    start = time.perf_counter()
    out = run()
    return out, time.perf_counter() - start


def next_token(scorer: CausalLMScorer, texts: list[str], ids: np.ndarray):
    """The next-token distribution alone: the base Scorer's hook, which reads the logits at
    the blank (a causal model's vocabulary mode before the text after the blank counted)."""
    rows_of = [np.array([i]) for i in range(len(texts))]
    return list(Scorer._text_batches(scorer, texts, rows_of, ids, None, False, False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a causal model's local directory")
    parser.add_argument("--label", help="how the table names the model (default: its folder)")
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument(
        "--vocab-file", type=Path, default=SHARED / "vocab" / "common_vocab_cased.txt"
    )
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--brute", type=int, default=2, help="prompts scored with every suffix")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--suffix-top", type=int, default=1000, help="the bounded mode's budget K")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--start-tokens", default="", help="comma-separated start_token values to compare AP"
    )
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "causal_vocab.json")
    parser.add_argument(
        "--quick", action="store_true", help="8 prompts, 1 with every suffix: a smoke run"
    )
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.brute = min(args.prompts, 8), 1
    torch.set_num_threads(args.threads)
    label = args.label or Path(args.model).name
    scorer = CausalLMScorer(args.model, device="cpu", batch_size=args.batch_size)
    texts, golds, vocab = prompts_and_golds(
        scorer, args.norms, args.vocab_file, args.prompts, args.seed
    )
    ids = vocab.token_ids[scorer.name]
    n, brute_n = len(texts), max(1, min(args.brute, len(texts)))
    print(f"{label}: {n} prompts x {len(vocab)} words; start token {scorer.start.text}")
    with torch.inference_mode():
        old, old_s = timed(lambda: next_token(scorer, texts, ids))
        work = WorkCount()
        needed = Needed(golds, 5)
        pruned, pruned_s = timed(
            lambda: list(
                work.passing(scorer.score_vocab(texts, ids, progress=False, needed=needed))
            )
        )
        spent = WorkCount()
        budget = Needed(golds, 5, suffix_top=args.suffix_top)
        bounded, bounded_s = timed(
            lambda: list(
                spent.passing(scorer.score_vocab(texts, ids, progress=False, needed=budget))
            )
        )
        brute, brute_s = timed(
            lambda: list(scorer.score_vocab(texts[:brute_n], ids, progress=False))
        )
    old_read, new_read = read(old, golds), read(pruned, golds)
    top_read = read(bounded, golds)
    gold = np.array([[j < len(g) for j in range(top_read.rank.shape[1])] for g in golds])
    assert top_read.bounded is not None
    flagged = top_read.bounded & gold
    np.testing.assert_array_equal(top_read.rank[gold & ~flagged], new_read.rank[gold & ~flagged])
    assert (top_read.rank[flagged] >= new_read.rank[flagged]).all()
    assert (top_read.ap <= new_read.ap + 1e-6).all()
    ap_gap = float(np.nanmax(new_read.ap - top_read.ap))
    print(f"bounded: {int(flagged.sum())} of {int(gold.sum())} gold ranks bounded; AP gap {ap_gap}")
    every = read(brute, golds[:brute_n])
    print(f"next token {old_s:.1f} s, pruned {pruned_s:.1f} s, every suffix {brute_s:.1f} s")
    np.testing.assert_array_equal(new_read.top_index[:brute_n], every.top_index)
    np.testing.assert_array_equal(new_read.ap[:brute_n], every.ap)
    for row in range(brute_n):
        width = len(golds[row])
        np.testing.assert_array_equal(new_read.rank[row, :width], every.rank[row, :width])
    per_prompt = [b.work.get("vocab_suffixes", 0) for b in pruned]
    words = np.asarray(vocab.words, dtype=object)
    rows = [
        {
            "mode": "next token only (before)",
            "prompts": n,
            "s / prompt": f"{old_s / n:.2f}",
            "suffixes scored / prompt": 0,
            "mean AP": f"{np.nanmean(old_read.ap):.4f}",
        },
        {
            "mode": "with the text after the blank (pruned)",
            "prompts": n,
            "s / prompt": f"{pruned_s / n:.2f}",
            "suffixes scored / prompt": f"{np.mean(per_prompt):.0f} (median "
            f"{np.median(per_prompt):.0f}, max {max(per_prompt)})",
            "mean AP": f"{np.nanmean(new_read.ap):.4f}",
        },
        {
            "mode": f"bounded (--suffix-top {args.suffix_top})",
            "prompts": n,
            "s / prompt": f"{bounded_s / n:.2f}",
            "suffixes scored / prompt": f"{spent.counts.get('vocab_suffixes', 0) / n:.0f}",
            "mean AP": f"{np.nanmean(top_read.ap):.4f} (gold ranks bounded: "
            f"{int(flagged.sum())} of {int(gold.sum())}; largest AP gap {ap_gap:.4f})",
        },
        {
            "mode": "every word's suffix (brute force)",
            "prompts": brute_n,
            "s / prompt": f"{brute_s / brute_n:.2f}",
            "suffixes scored / prompt": len(vocab),
            "mean AP": f"{np.nanmean(every.ap):.4f} (its {brute_n} prompts)",
        },
    ]
    examples = {
        texts[i]: {
            "next token": " ".join(words[old_read.top_index[i]]),
            "with the text after": " ".join(words[new_read.top_index[i]]),
        }
        for i in range(min(5, n))
    }
    starts = [
        {
            "start token": f"{scorer.start.text} (default: {scorer.start.rule})",
            "mean AP": f"{np.nanmean(new_read.ap):.4f}",
            "mean AP, next token only": f"{np.nanmean(old_read.ap):.4f}",
        }
    ]
    for start in [s for s in args.start_tokens.split(",") if s]:
        other = CausalLMScorer(
            f"{args.model},start_token={start}", device="cpu", batch_size=args.batch_size
        )
        got = read(other.score_vocab(texts, ids, progress=False, needed=needed), golds)
        before = read(next_token(other, texts, ids), golds)
        starts.append(
            {
                "start token": f"{other.start.text} (start_token={start})",
                "mean AP": f"{np.nanmean(got.ap):.4f}",
                "mean AP, next token only": f"{np.nanmean(before.ap):.4f}",
            }
        )
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s) ({args.threads} thread), "
        f"torch {torch.__version__}",
        "date": date.today().isoformat(),
        "command": " ".join(["python", "bench/bench_causal_vocab.py", *sys.argv[1:]]),
        "model": label,
        "start_token": scorer.start.text,
        "vocabulary": len(vocab),
        "suffixes": {"scored": work.counts, "per_prompt": per_prompt},
        "bounded": {
            "suffix_top": args.suffix_top,
            "scored": spent.counts,
            "gold_ranks": int(gold.sum()),
            "gold_ranks_bounded": int(flagged.sum()),
            "largest_ap_gap": ap_gap,
            "top5_equal": int((top_read.top_index == new_read.top_index).all(axis=1).sum()),
        },
        "table": rows,
        "examples": examples,
        "start_tokens": starts,
    }
    for row in rows + starts:
        print(" | ".join(f"{k}: {v}" for k, v in row.items()))
    for text, tops in examples.items():
        print(text, tops)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
