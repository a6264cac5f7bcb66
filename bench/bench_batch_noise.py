"""Batch noise: how far the same prompt's scores move with the batch size, which the tie rule's
tolerance is chosen from (tacit.ranking.ties, docs/reproducibility.md).

Tiny random-weight models on the real tokenizers (a RoBERTa-shaped masked LM on roberta-base's,
a GPT-2 on GPT-2's byte-level BPE), with weights drawn wider than the usual 0.02 (`--init`,
default 0.2) so that logits spread over tens of nats as a trained model's do, score CSLB
retrieval prompts ("<mask> has fur, is big.", 1, 4 and 10 properties) at batch sizes 2, 7, 64
and `auto` against 1: over the shared vocabulary at the blank (the causal model: the blank
moved to the end, "... is a <mask>.") and, as spans, every concept of the first N with its
article. For each: the largest |score difference| against batch size 1, in nats and relative
to the row's largest |score| (what the tolerance multiplies), and how many ranks of an
arbitrary target and top fives differ from batch size 1's: before, under a plain comparison
(1 + the scores strictly higher; numpy's sort), and after, under the tie rule as the probes
apply it (tacit.ranking.rank, as retrieval asks it, over the vocabulary and over spans), with
the near ties it settled.

Run: `python bench/bench_batch_noise.py` (`--quick`: fewer prompts and spans). Writes
bench/results/batch_noise.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from bench_retrieve import SHARED
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    GPT2TokenizerFast,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaTokenizerFast,
)

from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer
from tacit.norms import read_norms
from tacit.ranking import CandidateSet, Question, SharedVocabulary, SpanCandidates, rank
from tacit.vocab import build_vocabulary

BENCH = Path(__file__).resolve().parent
SIZES = "1,2,7,64,auto"  # batch sizes, each against the first (1)
TOKENIZERS = SHARED / "tokenizers" / "roberta-base"
SHAPE = dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=4, intermediate_size=256)


def build(kind: str, where: Path, init: float) -> str:
    """A tiny random model of `kind` (masked, causal) on the real roberta-base/GPT-2 files."""
    files = dict(vocab=str(TOKENIZERS / "vocab.json"), merges=str(TOKENIZERS / "merges.txt"))
    torch.manual_seed(0)
    if kind == "masked":
        tokenizer = RobertaTokenizerFast(**files)
        config = RobertaConfig(
            vocab_size=max(tokenizer.get_vocab().values()) + 1,
            max_position_embeddings=130,
            pad_token_id=tokenizer.pad_token_id,
            initializer_range=init,
            **SHAPE,
        )
        RobertaForMaskedLM(config).save_pretrained(where)
    else:
        tokenizer = GPT2TokenizerFast(**files)
        config = GPT2Config(
            vocab_size=max(tokenizer.get_vocab().values()) + 1,
            n_embd=SHAPE["hidden_size"],
            n_layer=SHAPE["num_hidden_layers"],
            n_head=SHAPE["num_attention_heads"],
            n_positions=128,
            initializer_range=init,
        )
        GPT2LMHeadModel(config).save_pretrained(where)
    tokenizer.save_pretrained(where)
    return str(where)


def prompts_and_spans(n_concepts: int) -> tuple[list[str], list[str]]:
    """Retrieval prompts of the first concepts (1, 4 and 10 properties) and the concepts as
    spans."""
    table = read_norms(SHARED / "cslb" / "norms.dat").table
    concepts = list(dict.fromkeys(table["concept"]))[:n_concepts]
    prompts = []
    for concept in concepts:
        phrases = list(table.loc[table["concept"] == concept, "phrase"])
        prompts += ["<mask> " + ", ".join(phrases[:k]) + "." for k in (1, 4, 10)]
    spans = ["A " + concept.split("_")[0] for concept in concepts]
    return prompts, spans


def scores(scorer, mode: str, prompts: list[str], spans: list[str]) -> np.ndarray:
    """[prompts x words] logits at the blank, or [prompts x spans] span scores (a causal
    model's: the sentence's)."""
    if mode == "spans":
        got = scorer.score_spans(prompts, spans, progress=False)
        return got.sentence if got.sentence is not None else got.span
    vocab = build_vocabulary({"m": scorer.tokenizer})
    ids = vocab.token_ids["m"]
    if scorer.kind == "causal":  # the blank must end the sentence
        prompts = [p.replace("<mask> ", "").rstrip(".") + " is a <mask>." for p in prompts]
    out = np.zeros((len(prompts), len(ids)))
    for batch in scorer.score_vocab(prompts, ids, progress=False):
        out[np.asarray(batch.rows)] = batch.shared[batch.batch_rows].double().numpy()
    return out


def targets_of(rows: int, columns: int) -> np.ndarray:
    """An arbitrary target per row, spread over the columns (most lie among many near
    scores, where ranks flip)."""
    return np.arange(rows) * 7919 % columns


def plain(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Before the tie rule: each row's target rank (1 + the scores strictly higher) and top
    five (numpy's stable sort)."""
    targets = targets_of(*m.shape)
    rank = 1 + (m > m[np.arange(len(m)), targets][:, None]).sum(axis=1)
    return rank, np.argsort(-m, axis=1, kind="stable")[:, :5]


def tie_rule(
    scorer, mode: str, prompts: list[str], spans: list[str], columns: int
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """After: each row's target rank and top five as the probes compute them (the tie rule,
    tacit.ranking.ties), and the near ties settled."""
    targets = targets_of(len(prompts), columns)
    question = Question(prompts, [[int(t)] for t in targets], 5, shares=True)
    if mode == "vocab":
        vocab = build_vocabulary({scorer.name: scorer.tokenizer})
        if scorer.kind == "causal":
            prompts = [p.replace("<mask> ", "").rstrip(".") + " is a <mask>." for p in prompts]
            question = Question(prompts, question.anchors, 5, shares=True)
        got = rank(scorer, question, SharedVocabulary(vocab), progress=False)
    else:
        candidates = SpanCandidates({"bench": CandidateSet("bench", spans)}, "l2r", "sum")
        got = rank(scorer, question, candidates, progress=False)
    counts = {k: v for k, v in got.counts.items() if k.startswith("tie_")}
    return got.rank[:, 0], got.top_index, counts


def flips(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[int, int]:
    """Rows whose target rank, and whose top five, differ between a and b."""
    return int((a[0] != b[0]).sum()), int((a[1] != b[1]).any(axis=1).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 concepts, 20 spans")
    parser.add_argument("--concepts", type=int, default=40, help="concepts (3 prompts each)")
    parser.add_argument("--spans", type=int, default=80, help="concept spans scored")
    parser.add_argument("--init", type=float, default=0.2, help="weights' standard deviation")
    parser.add_argument("--sizes", default=SIZES, help="batch sizes, the first the reference")
    parser.add_argument("--modes", default="vocab,spans", help="vocab, spans or both")
    parser.add_argument("--models", default="masked,causal", help="masked, causal or both")
    args = parser.parse_args()
    n_concepts, n_spans = (3, 20) if args.quick else (args.concepts, args.spans)
    sizes: list[int | str] = [n if n == "auto" else int(n) for n in args.sizes.split(",")]
    first = sizes[0]
    prompts, spans = prompts_and_spans(max(n_concepts, n_spans))
    prompts = prompts[: 3 * n_concepts]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.models.split(","):
            family = {"masked": MaskedLMScorer, "causal": CausalLMScorer}[kind]
            model = build(kind, Path(tmp) / kind, args.init)
            for mode in args.modes.split(","):
                texts = prompts if mode == "vocab" else prompts[: 3 * min(n_concepts, 4)]
                got, after, settled = {}, {}, {}
                for size in sizes:
                    start = time.perf_counter()
                    scorer = family(model, device="cpu", batch_size=size)
                    got[size] = scores(scorer, mode, texts, spans[:n_spans])
                    columns = got[size].shape[1]
                    *after[size], settled[size] = tie_rule(
                        scorer, mode, texts, spans[:n_spans], columns
                    )
                    print(f"{kind} {mode} batch size {size}: {time.perf_counter() - start:.1f} s")
                scale = np.maximum(np.abs(got[first]).max(axis=1, keepdims=True), 1)
                for size in sizes[1:]:
                    moved = np.abs(got[size] - got[first])
                    ranks, tops = flips(plain(got[size]), plain(got[first]))
                    ranks_after, tops_after = flips(tuple(after[size]), tuple(after[first]))
                    rows.append(
                        {
                            "model": kind,
                            "mode": mode,
                            "batch_size": size,
                            "rows": got[first].shape[0],
                            "columns": got[first].shape[1],
                            "median_row_scale": float(np.median(scale)),
                            "largest_noise_nats": float(moved.max()),
                            "largest_noise_relative": float((moved / scale).max()),
                            "plain_rank_flips": ranks,
                            "plain_top5_flips": tops,
                            "tie_rule_rank_flips": ranks_after,
                            "tie_rule_top5_flips": tops_after,
                            **settled[size],
                        }
                    )
                    print(json.dumps(rows[-1]))
    worst = max(row["largest_noise_relative"] for row in rows)
    print(f"largest noise relative to the row's scale: {worst:.3g}")
    for key in (
        "plain_rank_flips",
        "plain_top5_flips",
        "tie_rule_rank_flips",
        "tie_rule_top5_flips",
    ):
        print(f"{key}: {sum(row[key] for row in rows)} of {sum(row['rows'] for row in rows)} rows")
    out = {
        "when": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "torch": torch.__version__,
        "init": args.init,
        "quick": args.quick,
        "concepts": n_concepts,
        "spans": n_spans,
        "sizes": sizes,
        "modes": args.modes,
        "models": args.models,
        "rows": rows,
        "largest_noise_relative": worst,
    }
    (BENCH / "results").mkdir(exist_ok=True)
    (BENCH / "results" / "batch_noise.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
