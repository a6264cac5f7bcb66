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
