"""The numbers the analyses share, implemented here (numpy and scipy.stats.rankdata only), so
that tests can check them against scikit-learn and scipy: Spearman's rho with ties, the same
over a resample given as weights, ROC AUC, F1, the adjusted Rand index, purity, and summaries
of a resampled or permuted statistic. A resample of units (concepts) is given as how often each
unit was drawn; every statistic of it equals the statistic of the rows written out that often.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata


def pearson(x: ArrayLike, y: ArrayLike, weights: ArrayLike | None = None) -> float:
    """Pearson's r of x and y, each value counted `weights` times (default once); NaN where
    either side is constant.

    Examples:
        >>> round(pearson([1, 2, 3], [1, 2, 4]), 4), pearson([1, 2, 3], [1, 2, 3], [2, 1, 0])
        (0.982, 1.0)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    # products summed, not `@`: a BLAS dot of long vectors waits on threads of a busy machine
    if weights is None:
        if x.size == 0 or np.ptp(x) == 0 or np.ptp(y) == 0:
            return float("nan")
        dx, dy = x - x.mean(), y - y.mean()
        top, bottom = (dx * dy).sum(), np.sqrt((dx * dx).sum() * (dy * dy).sum())
        return float(np.clip(top / bottom, -1, 1))
    w = np.asarray(weights, dtype=float)
    counted = w > 0
    if not counted.any() or np.ptp(x[counted]) == 0 or np.ptp(y[counted]) == 0:
        return float("nan")
    total = w.sum()
    dx, dy = x - (w * x).sum() / total, y - (w * y).sum() / total
    wx = w * dx
    top, bottom = (wx * dy).sum(), np.sqrt((wx * dx).sum() * (w * dy * dy).sum())
    return float(np.clip(top / bottom, -1, 1))


def average_ranks(values: ArrayLike) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank (scipy.stats.rankdata's `average`); the zeros
    (most similarities of listed features) are ranked as one block without sorting them.

    Examples:
        >>> average_ranks([0.5, 0.0, -1.0, 0.0, 2.0]).tolist()
        [4.0, 2.5, 1.0, 2.5, 5.0]
    """
    v = np.asarray(values, dtype=float)
    negative, zero = v < 0, v == 0
    positive = ~(negative | zero)
    below, zeros = int(negative.sum()), int(zero.sum())
    ranks = np.empty(len(v))
    ranks[negative] = rankdata(v[negative])
    ranks[zero] = below + (zeros + 1) / 2
    ranks[positive] = below + zeros + rankdata(v[positive])
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson's r of the average ranks (ties share the mean of their ranks);
    NaN where either side is constant.

    Examples:
        >>> spearman([1, 2, 3, 4], [1, 3, 2, 4]), spearman([1, 1, 2], [3, 3, 5])
        (0.8, 1.0)
    """
    return pearson(average_ranks(x), average_ranks(y))


@dataclass(frozen=True)
class Codes:
    """Values coded by their order, for ranking a weighted subset again and again without
    sorting: `codes[i]` is the position of value i among the distinct values (0 the smallest),
    `size` how many distinct values there are."""

    codes: np.ndarray
    size: int

    @classmethod
    def of(cls, values: ArrayLike) -> Codes:
        return cls.with_order(values)[0]

    @classmethod
    def with_order(cls, values: ArrayLike) -> tuple[Codes, np.ndarray]:
        """The codes and the values' increasing order (a stable argsort), from one sort."""
        v = np.asarray(values, dtype=float).ravel()
        order = np.argsort(v, kind="stable")
        ordered = v[order]
        code_in_order = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]) - 1 if len(v) else order
        codes = np.empty(len(v), dtype=np.int64)
        codes[order] = code_in_order
        return cls(codes, int(code_in_order[-1]) + 1 if len(v) else 0), order

    def ranks(self, weights: np.ndarray) -> np.ndarray:
        """Each value's average rank in the multiset holding value i `weights[i]` times: the
        weight of smaller values, plus (the weight of equal values + 1) / 2."""
        per_code = np.bincount(self.codes, weights=weights, minlength=self.size)
        below = np.cumsum(per_code) - per_code
        return (below + (per_code + 1) / 2)[self.codes]


def weighted_spearman(x: Codes, y: Codes, weights: np.ndarray) -> float:
    """Spearman's rho of the multiset holding pair i `weights[i]` times (0: left out): equal
    to spearman() of the pairs written out that often."""
    kept = weights > 0
    if not kept.all():  # a resample leaves out a third of the concepts, more of the pairs
        x, y, weights = Codes(x.codes[kept], x.size), Codes(y.codes[kept], y.size), weights[kept]
    return pearson(x.ranks(weights), y.ranks(weights), weights)


def weighted_spearman_rows(x: Codes, y: Codes, weights: np.ndarray) -> np.ndarray:
    """weighted_spearman() of each row of `weights` (resamples x pairs) at once."""
    rows, k_x, k_y = len(weights), x.size, y.size
    offsets = np.arange(rows)[:, None]

    def ranks(codes: Codes, k: int) -> np.ndarray:
        flat = (offsets * k + codes.codes[None, :]).ravel()
        per_code = np.bincount(flat, weights=weights.ravel(), minlength=rows * k).reshape(rows, k)
        below = np.cumsum(per_code, axis=1) - per_code
        return np.take_along_axis(
            below + (per_code + 1) / 2, np.broadcast_to(codes.codes, weights.shape), axis=1
        )

    rx, ry = ranks(x, k_x), ranks(y, k_y)
    total = np.maximum(weights.sum(axis=1, keepdims=True), 1e-300)  # an empty resample: NaN
    dx = rx - (weights * rx).sum(axis=1, keepdims=True) / total
    dy = ry - (weights * ry).sum(axis=1, keepdims=True) / total
    wdx = weights * dx
    sxx, syy, sxy = (wdx * dx).sum(axis=1), (weights * dy * dy).sum(axis=1), (wdx * dy).sum(axis=1)
    # constant ranks leave only rounding, below 1e-30 of the squares; any spread is above 1e-18
    constant = (sxx <= 1e-24 * (weights * rx * rx).sum(axis=1)) | (
        syy <= 1e-24 * (weights * ry * ry).sum(axis=1)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.clip(sxy / np.sqrt(sxx * syy), -1, 1)
    return np.where(constant, np.nan, rho)


def roc_auc(scores: ArrayLike, labels: ArrayLike, weights: ArrayLike | None = None) -> float:
    """The area under the ROC curve: the chance that a positive scores above a negative, ties
    counting half (the Mann-Whitney U over the product of the class sizes), each item counted
    `weights` times; NaN without both classes.

    Examples:
        >>> roc_auc([0.9, 0.4, 0.4, 0.1], [1, 1, 0, 0])
        0.875
    """
    return weighted_auc(Codes.of(scores), np.asarray(labels, dtype=bool), weights)


def weighted_auc(scores: Codes, positive: np.ndarray, weights: ArrayLike | None = None) -> float:
    """roc_auc() of coded scores (Codes), each item counted `weights` times."""
    w = np.ones(len(positive)) if weights is None else np.asarray(weights, dtype=float)
    w_neg = np.where(positive, 0.0, w)
    per_code = np.bincount(scores.codes, weights=w_neg, minlength=scores.size)
    below = np.cumsum(per_code) - per_code
    beaten = below[scores.codes] + per_code[scores.codes] / 2
    pos_total, neg_total = w[positive].sum(), w_neg.sum()
    if pos_total <= 0 or neg_total <= 0:
        return float("nan")
    return float((w[positive] * beaten[positive]).sum() / (pos_total * neg_total))


def f1(predicted: ArrayLike, labels: ArrayLike, weights: ArrayLike | None = None) -> float:
    """F1 = 2 TP / (2 TP + FP + FN) of yes/no predictions (0 where there is nothing to find
    and nothing predicted, as scikit-learn's zero_division=0).

    Examples:
        >>> f1([1, 1, 0, 0], [1, 0, 1, 0])
        0.5
    """
    p, y = np.asarray(predicted, dtype=bool), np.asarray(labels, dtype=bool)
    w = np.ones(len(p)) if weights is None else np.asarray(weights, dtype=float)
    tp = w[p & y].sum()
    denominator = 2 * tp + w[p & ~y].sum() + w[~p & y].sum()
    return float(2 * tp / denominator) if denominator > 0 else 0.0


def best_threshold(scores: ArrayLike, labels: ArrayLike) -> float:
    """The threshold t (one of the scores) whose predictions `score >= t` have the highest F1;
    the highest such t on a tie.

    Examples:
        >>> best_threshold([0.9, 0.8, 0.3, 0.2], [1, 1, 0, 1])
        0.2
    """
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    return threshold_in_order(s, y, np.argsort(s, kind="stable"))


def threshold_in_order(s: np.ndarray, y: np.ndarray, order: np.ndarray) -> float:
    """best_threshold() of scores `s` given their increasing order (of these items only)."""
    order = order[::-1]
    s, y = s[order], y[order]
    tp, predicted = np.cumsum(y), np.arange(1, len(s) + 1)
    last = np.r_[s[1:] != s[:-1], True]  # the last of each run of equal scores
    scores_f1 = 2 * tp / (predicted + y.sum())
    candidates = np.flatnonzero(last)
    best = candidates[np.argmax(scores_f1[candidates])]  # the first maximum: the highest t
    return float(s[best])


def contingency(
    first: ArrayLike, second: ArrayLike, weights: ArrayLike | None = None
) -> np.ndarray:
    """The counts of each (first label, second label), items counted `weights` times."""
    _, a = np.unique(np.asarray(first), return_inverse=True)
    _, b = np.unique(np.asarray(second), return_inverse=True)
    w = np.ones(len(a)) if weights is None else np.asarray(weights, dtype=float)
    table = np.zeros((a.max(initial=-1) + 1, b.max(initial=-1) + 1))
    np.add.at(table, (a.ravel(), b.ravel()), w)
    return table


def adjusted_rand(table: np.ndarray) -> float:
    """The adjusted Rand index of a contingency table (Hubert & Arabie 1985): (index -
    expected) / (max - expected), over pairs of items, sum_ij C(n_ij, 2) the index; 1 where
    both partitions put every item alone or all together.

    Examples:
        >>> round(adjusted_rand(contingency([0, 0, 1, 1], [0, 0, 1, 2])), 6)
        0.571429
    """

    def pairs(n: np.ndarray) -> np.ndarray:
        return n * (n - 1) / 2

    index = pairs(table).sum()
    rows, columns = pairs(table.sum(axis=1)).sum(), pairs(table.sum(axis=0)).sum()
    total = pairs(table.sum())
    if total == 0:
        return float("nan")
    expected = rows * columns / total
    most = (rows + columns) / 2
    if most == expected:
        return 1.0
    return float((index - expected) / (most - expected))


def purity(table: np.ndarray) -> float:
    """Purity of clusters (rows) against classes (columns): the share of items in their
    cluster's most common class.

    Examples:
        >>> purity(contingency([0, 0, 1, 1], [0, 1, 1, 1]))
        0.75
    """
    return float(table.max(axis=1).sum() / table.sum())


def concept_counts(rng: np.random.Generator, n: int, n_resamples: int) -> np.ndarray:
    """How often each of n units is drawn in each of `n_resamples` bootstrap resamples, from
    `rng.integers(0, n, size=(n_resamples, n))` (a row: one resample's picks)."""
    picks = rng.integers(0, n, size=(n_resamples, n))
    flat = (np.arange(n_resamples)[:, None] * n + picks).ravel()
    return np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n).astype(float)


def interval(values: ArrayLike, confidence: float) -> tuple[float, float]:
    """The central percentile interval of resampled (or permuted) values, NaN left out."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(v, [tail, 100 - tail])
    return float(low), float(high)


def mean_of(values: ArrayLike) -> float:
    """The mean of the values that are not NaN (NaN if none is)."""
    v = np.asarray(values, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(v)) if v.size else float("nan")
