"""Retrieval ranks computed the way LAMA computes them: the baseline tacit is measured against.

Length-sorted batches, the full [batch x tokens x vocabulary] logits from the model's own
forward pass, log_softmax over the whole vocabulary, then the shared-vocabulary columns at the
mask. It imports only numpy, torch and transformers, so that run as a script
(`python bench/lama_style.py MODEL_DIR PROMPTS.json RANKS.json`) its start-up is what a
researcher's own LAMA-style script would pay: the end-to-end baseline of bench_retrieve.py.
PROMPTS.json holds {"prompts": [...], "targets": [...], "vocab_ids": [...], "batch_size": N}
(targets are positions in vocab_ids); RANKS.json gets {"rank": [...], "near": [...]}.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

MASK = "<mask>"  # tacit's placeholder
TIE = 1e-5  # log-probabilities closer than this are tied within float error


def lama_ranks(model, tokenizer, prompts, targets, vocab_ids, batch_size):
    """Rank of each target among vocab_ids, and how many other words lie within TIE of it."""
    vocab_t = torch.as_tensor(np.asarray(vocab_ids, dtype=np.int64))
    texts = [p.replace(f" {MASK}", tokenizer.mask_token) for p in prompts]
    lengths = [len(tokenizer(t)["input_ids"]) for t in texts]
    order = np.argsort(lengths, kind="stable")
    ranks = np.empty(len(prompts), dtype=np.int64)
    near = np.empty(len(prompts), dtype=np.int64)
    with torch.no_grad():
        for first in range(0, len(order), batch_size):
            idx = order[first : first + batch_size]
            enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True)
            log_probs = model(**enc).logits.log_softmax(dim=-1)
            rows, cols = (enc["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
            shared = log_probs[rows, cols][:, vocab_t]
            target = shared[torch.arange(len(idx)), torch.as_tensor([targets[i] for i in idx])]
            ranks[idx] = (1 + (shared > target[:, None]).sum(1)).numpy()
            near[idx] = ((shared - target[:, None]).abs() <= TIE).sum(1).numpy() - 1
    return ranks, near


def load(model_dir):
    """The model and tokenizer, the plain transformers way."""
    return AutoModelForMaskedLM.from_pretrained(model_dir).eval(), AutoTokenizer.from_pretrained(
        model_dir
    )


def main(model_dir: str, prompts_json: str, ranks_json: str) -> None:
    with open(prompts_json, encoding="utf-8") as source:
        job = json.load(source)
    model, tokenizer = load(model_dir)
    rank, near = lama_ranks(
        model, tokenizer, job["prompts"], job["targets"], job["vocab_ids"], job["batch_size"]
    )
    with open(ranks_json, "w", encoding="utf-8") as out:
        json.dump({"rank": rank.tolist(), "near": near.tolist()}, out)


if __name__ == "__main__":
    main(*sys.argv[1:4])
