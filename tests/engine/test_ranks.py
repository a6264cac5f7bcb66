"""What is guaranteed about ranks across batch sizes (and so across process counts, which batch
the same texts differently): scores agree to float rounding, and a rank differs only by the
words whose score lies within that rounding of the target's (float ties), never otherwise."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from support import TOY_WORDS

from tacit.models.base import ScoredBatch
from tacit.models.masked import MaskedLMScorer
from tacit.models.reduce import rank_targets
from tacit.vocab import build_vocabulary

TOLERANCE = 1e-4  # nats: float32 logits of the same text in differently padded batches


def logits_by_prompt(batches: list[ScoredBatch], n_prompts: int, n_words: int) -> np.ndarray:
    rows = np.zeros((n_prompts, n_words), dtype=np.float32)
    for batch in batches:
        log_probs = (batch.shared - batch.log_z.unsqueeze(1))[batch.batch_rows].numpy()
        rows[batch.rows] = log_probs
    return rows


@pytest.mark.parametrize("model", ["tiny_bert", "tiny_roberta"])
def test_ranks_differ_across_batch_sizes_only_by_float_ties(request, model):
    model_dir = request.getfixturevalue(model)
    words = [w for w in TOY_WORDS if w.isalpha()]
    prompts = [f"A <mask> {' '.join(words[i : i + k])}." for k in range(1, 9) for i in range(20)]
    one = MaskedLMScorer(model_dir, device="cpu", batch_size=1)
    many = MaskedLMScorer(model_dir, device="cpu", batch_size=64)
    vocab = build_vocabulary({"m": one.tokenizer})
    ids = vocab.token_ids["m"]
    by_one = list(one.score_vocab(prompts, ids, progress=False))
    by_many = list(many.score_vocab(prompts, ids, progress=False))
    a = logits_by_prompt(by_one, len(prompts), len(ids))
    b = logits_by_prompt(by_many, len(prompts), len(ids))
    assert np.abs(a - b).max() < TOLERANCE
    targets = np.arange(len(prompts)) % len(ids)
    # the ranks the probes use (rank_targets) from each batch size's batches
    cpu = torch.device("cpu")
    rank_one = rank_targets(by_one, targets, top_k=5, device=cpu).rank
    rank_many = rank_targets(by_many, targets, top_k=5, device=cpu).rank
    assert len(set(rank_one.tolist())) > 10  # ranks spread over the vocabulary: not vacuous
    for row_a, row_b, target, rank_a, rank_b in zip(a, b, targets, rank_one, rank_many):
        ties_a = (np.abs(row_a - row_a[target]) <= TOLERANCE).sum() - 1
        ties_b = (np.abs(row_b - row_b[target]) <= TOLERANCE).sum() - 1
        assert abs(rank_a - (1 + (row_a > row_a[target]).sum())) <= ties_a  # as the scores say
        assert abs(rank_a - rank_b) <= ties_b
