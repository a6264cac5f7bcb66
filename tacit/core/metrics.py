"""Metrics on ranks and probabilities: plain arrays in, plain floats or arrays out."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def reciprocal_rank(ranks: ArrayLike) -> np.ndarray:
    """1 / rank for each rank (ranks start at 1).

    >>> reciprocal_rank([1, 2, 4]).tolist()
    [1.0, 0.5, 0.25]
    """
    ranks = np.asarray(ranks, dtype=float)
    if np.any(ranks < 1):
        raise ValueError("ranks start at 1")
    return 1.0 / ranks


def mean_reciprocal_rank(ranks: ArrayLike) -> float:
    """Mean of 1 / rank: 1 when every target is ranked first, towards 0 as targets sink.

    >>> mean_reciprocal_rank([1, 2, 4])
    0.5833333333333334
    """
    ranks = np.asarray(ranks)
    if ranks.size == 0:
        raise ValueError("no ranks")
    return float(reciprocal_rank(ranks).mean())


def bootstrap_mean_ci(
    values: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval for the mean of each column, resampling rows.

    Rows are the units sampled (concepts), columns the metrics. One row gives a zero-width
    interval.

    >>> low, high = bootstrap_mean_ci([[0.0], [1.0]] * 50, rng=np.random.default_rng(0))
    >>> bool(low[0] < 0.5 < high[0]), bool(high[0] - low[0] < 0.3)
    (True, True)
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    picks = rng.integers(0, len(values), size=(n_resamples, len(values)))
    means = values[picks].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    return np.percentile(means, tail, axis=0), np.percentile(means, 100 - tail, axis=0)


def average_precision(scores: ArrayLike, relevant: ArrayLike) -> float:
    """Average precision of the relevant items when ranked by decreasing score.

    The mean, over relevant items, of the precision among all items scored at least as high
    (ties count as ranked together, as in sklearn.metrics.average_precision_score).

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
