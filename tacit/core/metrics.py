"""Metrics on ranks and probabilities: plain arrays in, plain floats or arrays out (intervals
and tests over them: tacit.core.stats)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def reciprocal_rank(ranks: ArrayLike) -> np.ndarray:
    """1 / rank for each rank (ranks start at 1).

    Examples:
        >>> reciprocal_rank([1, 2, 4]).tolist()
        [1.0, 0.5, 0.25]
    """
    ranks = np.asarray(ranks, dtype=float)
    if np.any(ranks < 1):
        raise ValueError("ranks start at 1")
    return 1.0 / ranks


def mean_reciprocal_rank(ranks: ArrayLike) -> float:
    """Mean of 1 / rank: 1 when every target is ranked first, towards 0 as targets sink.

    Examples:
        >>> mean_reciprocal_rank([1, 2, 4])
        0.5833333333333334
    """
    ranks = np.asarray(ranks)
    if ranks.size == 0:
        raise ValueError("no ranks")
    return float(reciprocal_rank(ranks).mean())


def hits_at_k(ranks: ArrayLike, k: int) -> np.ndarray:
    """1 where the target is among the first `k` (rank <= k), else 0: averaged over prompts,
    precision at 1 (k = 1) and hits@k, the share of prompts whose target is in the top k.

    Examples:
        >>> hits_at_k([1, 2, 11], 1).tolist(), hits_at_k([1, 2, 11], 10).tolist()
        ([1.0, 0.0, 0.0], [1.0, 1.0, 0.0])
    """
    ranks = np.asarray(ranks, dtype=float)
    if np.any(ranks < 1):
        raise ValueError("ranks start at 1")
    return (ranks <= k).astype(float)


def average_precision(scores: ArrayLike, relevant: ArrayLike) -> float:
    """Average precision of the relevant items when ranked by decreasing score.

    The mean, over relevant items, of the precision among all items scored at least as high
    (ties count as ranked together, as in sklearn.metrics.average_precision_score).

    Examples:
        >>> average_precision([0.9, 0.8, 0.7, 0.6], [True, False, True, False])
        0.8333333333333333
    """
    scores = np.asarray(scores, dtype=float)
    relevant = np.asarray(relevant, dtype=bool)
    if not relevant.any():
        raise ValueError("no relevant item")
    gold = scores[relevant]
    at_least = (scores[None, :] >= gold[:, None]).sum(axis=1)
    gold_at_least = (gold[None, :] >= gold[:, None]).sum(axis=1)
    return float((gold_at_least / at_least).mean())
