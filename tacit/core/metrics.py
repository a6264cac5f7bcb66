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


# --- chance: what a uniformly random ranking of the candidates scores, in expectation ----------
# Counts come as numbers (NaN: not known, and the chance level then NaN too).


def _counts(values: ArrayLike) -> np.ndarray:
    """Counts as floats (NaN kept: a count not known), each a whole number of at least 1."""
    counts = np.asarray(values, dtype=float)
    known = counts[~np.isnan(counts)]
    if np.any(known < 1) or np.any(known != np.round(known)):
        raise ValueError("counts of candidates and answers are whole numbers of at least 1")
    return counts


def _harmonic(n: np.ndarray) -> np.ndarray:
    """H_n = 1 + 1/2 + ... + 1/n for each count n, summed exactly (NaN where n is)."""
    out = np.full(n.shape, np.nan)
    known = ~np.isnan(n)
    if known.any():
        sums = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int(n[known].max()) + 1))])
        out[known] = sums[n[known].astype(np.int64)]
    return out


def chance_reciprocal_rank(n_candidates: ArrayLike) -> np.ndarray:
    """The expected reciprocal rank of a target ranked uniformly at random among N candidates,
    H_N / N (the mean of 1/r over r = 1..N): the MRR of chance.

    Examples:
        >>> chance_reciprocal_rank([1, 2, 4]).tolist()
        [1.0, 0.75, 0.5208333333333333]
    """
    n = _counts(n_candidates)
    return _harmonic(n) / n


def chance_hits_at_k(n_candidates: ArrayLike, k: int) -> np.ndarray:
    """The chance that a target ranked uniformly at random among N candidates is among the
    first `k`: min(k, N) / N (k = 1: precision at 1 of chance, 1/N).

    Examples:
        >>> chance_hits_at_k([1, 4, 20], 10).tolist(), chance_hits_at_k([4], 1).tolist()
        ([1.0, 1.0, 0.5], [0.25])
    """
    n = _counts(n_candidates)
    return np.minimum(k, n) / n


def chance_average_precision(n_relevant: ArrayLike, n_candidates: ArrayLike) -> np.ndarray:
    """The expected average precision of R relevant items among N candidates ranked uniformly
    at random, exactly (no simulation):

        E[AP] = (H_N + (R - 1) / (N - 1) * (N - H_N)) / N

    AP is 1/R times the sum over ranks n of rel(n) * prec(n); a relevant item at rank n is
    relevant with probability R / N, and each of the n - 1 items above it then is with
    probability (R - 1) / (N - 1). R = 1 gives H_N / N, the MRR of chance; R = N gives 1.

    Examples:
        >>> chance_average_precision([1, 2, 4], [4, 4, 4]).round(6).tolist()
        [0.520833, 0.680556, 1.0]
    """
    r, n = np.broadcast_arrays(_counts(n_relevant), _counts(n_candidates))
    if np.any(r > n):
        raise ValueError("at most N of N candidates are relevant")
    others = np.divide(r - 1, n - 1, out=np.zeros(r.shape), where=n > 1)
    h = _harmonic(n)
    return (h + others * (n - h)) / n


def rank_correlation(pf: ArrayLike, prob: ArrayLike) -> float:
    """Spearman's rho between production frequencies and model probabilities (or any scores
    that order the answers as they do: log-probabilities).

    NaN (undefined) with fewer than 2 answers or when either side has no variance.

    Examples:
        >>> rank_correlation([3, 2, 1], [0.5, 0.2, 0.1]), rank_correlation([3, 3], [0.5, 0.2])
        (1.0, nan)
    """
    from scipy.stats import spearmanr  # scipy.stats takes a second to import: only when used

    x, y = np.asarray(pf, dtype=float), np.asarray(prob, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)
