"""Candidate spans: forward rows and speed of tacit's prefix tree against scoring each candidate
on its own, on the same retrieval prompts, with identical ranks.

Two measurements:

- rows per prompt (a property of the tokenizer and the candidates, no model needed): every CSLB
  concept as a span ("A bear", "An aardvark", "Scissors") in the blank of a real retrieval
  prompt, `l2r` scoring; naive = one forward row per span token per candidate, tree = one row
  per node of the candidates' prefix tree (tacit.models.masked_spans.plan_spans), for the real
  bert-base-cased and roberta-base tokenizers;
- speed: a roberta-base-shaped masked LM with random weights (the compute of the real one) on
  the real roberta-base tokenizer scores the first N retrieval prompts over all candidates, by
  MaskedLMScorer.score_spans (tree, LM head at the read positions) and by the naive way (each
  (prompt, candidate, step) its own row, full logits, log_softmax, gather; batched longest
  first, as a careful script would). Both take turns (--repeats rounds, fastest kept); ranks of
  the target must be equal.

Run: `python bench/bench_spans.py` (or `--quick`: a tiny model, 2 prompts). Writes
bench/results/spans.json, whose `table` the performance page renders.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
from bench_retrieve import SHARED, build_model
from transformers import AutoModelForMaskedLM, BertTokenizerFast, RobertaTokenizerFast

from tacit.models.batching import longest_first_batches, padded
from tacit.models.masked import MaskedLMScorer
from tacit.models.masked_spans import plan_spans, span_tokens_in_context
from tacit.norms import read_norms
from tacit.probes.retrieve.fills import retrieval_fills
from tacit.probes.retrieve.prompts import build_prompts, concept_candidates
from tacit.templates import load_templates

BENCH = Path(__file__).resolve().parent


def tokenizers() -> dict[str, object]:
    bert = BertTokenizerFast(
        vocab=str(SHARED / "tokenizers" / "bert-base-cased" / "vocab.txt"), do_lower_case=False
    )
    roberta_dir = SHARED / "tokenizers" / "roberta-base"
    roberta = RobertaTokenizerFast(
        vocab=str(roberta_dir / "vocab.json"), merges=str(roberta_dir / "merges.txt")
    )
    assert len(bert) > 28000 and len(roberta) > 50000, "pass the real tokenizer files"
    return {"bert-base-cased": bert, "roberta-base": roberta}


def rows_per_prompt(tokenizer, template: str, spans: list[str]) -> tuple[int, int]:
    """(tree rows, naive rows) for one template over all spans (l2r)."""
    scorer = SimpleNamespace(tokenizer=tokenizer, max_tokens=512, name="count")
    plan = plan_spans(scorer, [template], spans, "l2r")  # type: ignore[arg-type]
    return len(plan.rows), sum(plan.n_tokens)


def naive_scores(model_dir: str, templates: list[str], spans: list[str], batch_size: int):
    """Each (template, span, step) its own row; full logits; log_softmax; gather; sum."""
    tokenizer = RobertaTokenizerFast.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    rows, reads = [], []  # reads: (pair, position, token)
    for t, template in enumerate(templates):
        for s, (left, ids, right) in enumerate(span_tokens_in_context(tokenizer, template, spans)):
            for i in range(len(ids)):
                masked = [*left, *ids[:i], *[tokenizer.mask_token_id] * (len(ids) - i), *right]
                rows.append(masked)
                reads.append((t * len(spans) + s, len(left) + i, ids[i]))
    sums = np.zeros(len(templates) * len(spans))
    holder = SimpleNamespace(name="naive", device=torch.device("cpu"), batch_size=batch_size)

    def run(indices):
        ids, attention = padded(rows, indices, tokenizer.pad_token_id, holder.device)
        with torch.inference_mode():
            log_probs = model(input_ids=ids, attention_mask=attention).logits.log_softmax(-1)
        for b, r in enumerate(indices):
            pair, position, token = reads[r]
            sums[pair] += log_probs[b, position, token].item()

    for _ in longest_first_batches([len(r) for r in rows], holder, run):
        pass
    return sums.reshape(len(templates), len(spans)), len(rows)


def target_ranks(scores: np.ndarray, targets: list[int]) -> np.ndarray:
    return np.array([1 + (row > row[t]).sum() for row, t in zip(scores, targets)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4, help="retrieval prompts to time")
    parser.add_argument("--shape", default="roberta-base", choices=["roberta-base", "tiny"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument("--quick", action="store_true", help="tiny model, 2 prompts: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "spans.json")
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.shape, args.repeats = 2, "tiny", 1
    norms = read_norms(args.norms)
    fills = retrieval_fills(load_templates(), spans=True)  # the paper's, spans brought in
    prompts = build_prompts(norms, list(norms.concepts), max_props=10, fills=fills).prompts
    candidates, span_of = concept_candidates(norms, list(prompts["concept"]))
    spans = candidates.spans
    record: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), torch {torch.__version__}",
        "concepts": len(norms.concepts),
        "candidates": len(spans),
        "retrieval_prompts_at_10": len(prompts),
    }
    counts = {}
    sample = list(dict.fromkeys(prompts["prompt"]))[:: max(1, len(prompts) // 20)][:20]
    for name, tokenizer in tokenizers().items():
        per = [rows_per_prompt(tokenizer, template, spans) for template in sample]
        tree, naive = np.mean([p[0] for p in per]), np.mean([p[1] for p in per])
        counts[name] = (tree, naive)
        record[f"{name}_rows_per_prompt"] = {"tree": round(tree, 1), "naive": round(naive, 1)}
    timed_prompts = prompts.iloc[: args.prompts]
    templates = list(timed_prompts["prompt"])
    targets = [spans.index(span_of[c]) for c in timed_prompts["concept"]]
    times: dict[str, list[float]] = {"tacit": [], "naive": []}
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(SHARED / "tokenizers" / "roberta-base", args.shape, Path(tmp) / "m")
        for _ in range(args.repeats):
            scorer = MaskedLMScorer(model_dir, device="cpu", batch_size=args.batch_size)
            start = time.perf_counter()
            scored = scorer.score_spans(templates, spans, progress=False)
            ours = scored.span
            times["tacit"].append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs, naive_rows = naive_scores(model_dir, templates, spans, args.batch_size)
            times["naive"].append(time.perf_counter() - start)
    ranks_equal = bool((target_ranks(ours, targets) == target_ranks(theirs, targets)).all())
    best = {name: min(t) for name, t in times.items()}
    record.update(
        timed_prompts=len(templates),
        shape=args.shape,
        batch_size=args.batch_size,
        tacit_rows=scored.work["span_rows"],
        naive_rows=naive_rows,
        tacit_prompts_per_s=round(len(templates) / best["tacit"], 3),
        naive_prompts_per_s=round(len(templates) / best["naive"], 3),
        speedup=round(best["naive"] / best["tacit"], 2),
        max_abs_score_difference=float(np.abs(ours - theirs).max()),
        target_ranks_equal=ranks_equal,
        date=datetime.date.today().isoformat(),
        command="python bench/bench_spans.py " + " ".join(sys.argv[1:]),
    )
    rb_tree, rb_naive = counts["roberta-base"]
    bb_tree, bb_naive = counts["bert-base-cased"]
    record["table"] = [
        ["measure", "bert-base-cased", "roberta-base"],
        [
            "forward rows per prompt, one per span token per candidate",
            f"{bb_naive:,.0f}",
            f"{rb_naive:,.0f}",
        ],
        ["forward rows per prompt, tacit's prefix tree", f"{bb_tree:,.0f}", f"{rb_tree:,.0f}"],
        ["fewer rows", f"{bb_naive / bb_tree:.1f}x", f"{rb_naive / rb_tree:.1f}x"],
        [
            f"prompts/s, tacit ({args.shape}-shaped model, {len(templates)} prompts)",
            "",
            f"{record['tacit_prompts_per_s']}",
        ],
        [
            "prompts/s, naive per-candidate scoring (full logits)",
            "",
            f"{record['naive_prompts_per_s']}",
        ],
        [
            "speed-up end to end (target ranks equal)",
            "",
            f"{record['speedup']}x ({'equal' if ranks_equal else 'DIFFER'})",
        ],
    ]
    for key, value in record.items():
        if key != "table":
            print(f"{key:>36}: {value}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if ranks_equal else 1


if __name__ == "__main__":
    sys.exit(main())
