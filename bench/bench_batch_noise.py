"""Batch noise: how far the same prompt's scores move with the batch size, which the tie rule's
tolerance is chosen from (tacit.models.ties, docs/reproducibility.md).

Tiny random-weight models on the real tokenizers (a RoBERTa-shaped masked LM on roberta-base's,
a GPT-2 on GPT-2's byte-level BPE), with weights drawn wider than the usual 0.02 (`--init`,
default 0.2) so that logits spread over tens of nats as a trained model's do, score CSLB
retrieval prompts ("<mask> has fur, is big.", 1, 4 and 10 properties) at batch sizes 2, 7, 64
and `auto` against 1: over the shared vocabulary at the blank (the causal model: the blank
moved to the end, "... is a <mask>.") and, as spans, every concept of the first N with its
article. For each: the largest |score difference| against batch size 1, in nats and relative
to the row's largest |score| (what the tolerance multiplies), and how many ranks of an
arbitrary target and top fives differ under a plain comparison (what the tie rule settles).

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
from tacit.vocab import build_vocabulary

BENCH = Path(__file__).resolve().parent
SIZES: list[int | str] = [1, 2, 7, 64, "auto"]
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
        out[batch.rows.numpy()] = batch.shared[batch.batch_rows].double().numpy()
    return out


def plain_flips(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """Rows whose rank of an arbitrary target, and whose top five, differ between a and b
    under a plain comparison (1 + the scores strictly higher; numpy's sort)."""
    targets = np.arange(len(a)) * 7919 % a.shape[1]

    def rank(m: np.ndarray) -> np.ndarray:
        return 1 + (m > m[np.arange(len(m)), targets][:, None]).sum(axis=1)

    def top(m: np.ndarray) -> np.ndarray:
        return np.argsort(-m, axis=1, kind="stable")[:, :5]

    return int((rank(a) != rank(b)).sum()), int((top(a) != top(b)).any(axis=1).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 concepts, 20 spans")
    parser.add_argument("--concepts", type=int, default=40, help="concepts (3 prompts each)")
    parser.add_argument("--spans", type=int, default=80, help="concept spans scored")
    parser.add_argument("--init", type=float, default=0.2, help="weights' standard deviation")
    args = parser.parse_args()
    n_concepts, n_spans = (3, 20) if args.quick else (args.concepts, args.spans)
    prompts, spans = prompts_and_spans(max(n_concepts, n_spans))
    prompts = prompts[: 3 * n_concepts]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, family in (("masked", MaskedLMScorer), ("causal", CausalLMScorer)):
            model = build(kind, Path(tmp) / kind, args.init)
            for mode in ("vocab", "spans"):
                texts = prompts if mode == "vocab" else prompts[: 3 * min(n_concepts, 4)]
                got = {}
                for size in SIZES:
                    start = time.perf_counter()
                    scorer = family(model, device="cpu", batch_size=size)
                    got[size] = scores(scorer, mode, texts, spans[:n_spans])
                    print(f"{kind} {mode} batch size {size}: {time.perf_counter() - start:.1f} s")
                scale = np.maximum(np.abs(got[1]).max(axis=1, keepdims=True), 1)
                for size in SIZES[1:]:
                    moved = np.abs(got[size] - got[1])
                    ranks, tops = plain_flips(got[size], got[1])
                    rows.append(
                        {
                            "model": kind,
                            "mode": mode,
                            "batch_size": size,
                            "rows": got[1].shape[0],
                            "columns": got[1].shape[1],
                            "median_row_scale": float(np.median(scale)),
                            "largest_noise_nats": float(moved.max()),
                            "largest_noise_relative": float((moved / scale).max()),
                            "plain_rank_flips": ranks,
                            "plain_top5_flips": tops,
                        }
                    )
                    print(json.dumps(rows[-1]))
    worst = max(row["largest_noise_relative"] for row in rows)
    print(f"largest noise relative to the row's scale: {worst:.3g}")
    out = {
        "when": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "torch": torch.__version__,
        "init": args.init,
        "quick": args.quick,
        "rows": rows,
        "largest_noise_relative": worst,
    }
    (BENCH / "results").mkdir(exist_ok=True)
    (BENCH / "results" / "batch_noise.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
