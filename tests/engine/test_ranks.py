"""What is guaranteed about ranks across batch sizes (and so across process counts, which batch
the same texts differently): scores agree to float rounding, and a rank differs only by the
words whose score lies within that rounding of the target's (float ties), never otherwise."""

from __future__ import annotations

import numpy as np
import pytest
from support import TOY_WORDS

from tacit.models.masked import MaskedLMScorer
from tacit.vocab import build_vocabulary

TOLERANCE = 1e-4  # nats: float32 logits of the same text in differently padded batches


def logits_by_prompt(scorer: MaskedLMScorer, prompts: list[str], ids: np.ndarray) -> np.ndarray:
    rows = np.zeros((len(prompts), len(ids)), dtype=np.float32)
    for batch in scorer.score_vocab(prompts, ids, progress=False):
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
    a, b = logits_by_prompt(one, prompts, ids), logits_by_prompt(many, prompts, ids)
    assert np.abs(a - b).max() < TOLERANCE
    targets = np.arange(len(prompts)) % len(ids)
    for row_a, row_b, target in zip(a, b, targets):
        rank_a = 1 + (row_a > row_a[target]).sum()
        rank_b = 1 + (row_b > row_b[target]).sum()
        ties = (np.abs(row_b - row_b[target]) <= TOLERANCE).sum() - 1
        assert abs(rank_a - rank_b) <= ties
