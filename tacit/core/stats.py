"""Statistics over units (concepts): percentile bootstrap intervals, the paired permutation
test of two models on the same units, and Holm's correction for several tests. Plain arrays in,
floats or arrays out; every function takes its random generator, so results are reproducible.

A unit is what is resampled: a concept with all of its prompts. A metric that is a mean over
prompts is the ratio of the units' sums to their counts, so a unit with three prompts weighs
three times one with one, as it does in the mean itself.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

EXACT_LIMIT = 20  # up to 2**20 sign patterns are enumerated rather than sampled


def _picks(n: int, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
    return rng.integers(0, n, size=(n_resamples, n))


def _percentiles(resampled: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - confidence) / 2 * 100
    with warnings.catch_warnings():  # a metric undefined in every resample: NaN, said by it
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanpercentile(resampled, tail, axis=0)
        high = np.nanpercentile(resampled, 100 - tail, axis=0)
    return low, high


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

    Examples:
        >>> low, high = bootstrap_mean_ci([[0.0], [1.0]] * 50, rng=np.random.default_rng(0))
        >>> bool(low[0] < 0.5 < high[0]), bool(high[0] - low[0] < 0.3)
        (True, True)
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    means = values[_picks(len(values), rng, n_resamples)].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    return np.percentile(means, tail, axis=0), np.percentile(means, 100 - tail, axis=0)


def bootstrap_ratio_ci(
    sums: ArrayLike,
    counts: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval for sum(sums) / sum(counts), resampling units (rows).

    `sums` holds each unit's total of a metric over its prompts and `counts` how many prompts
    it has (per column where a metric is undefined for some prompts, e.g. Spearman's rho), so
    the statistic is the mean over prompts. A resample whose counts sum to zero is left out.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> low, high = bootstrap_ratio_ci([1.0, 0.0] * 50, [1, 1] * 50, rng=rng)
        >>> bool(low[0] < 0.5 < high[0]), bool(high[0] - low[0] < 0.3)
        (True, True)
        >>> bootstrap_ratio_ci([3.0], [2], rng=np.random.default_rng(0))
        (array([1.5]), array([1.5]))
    """
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    if sums.ndim == 1:
        sums = sums[:, None]
    counts = np.broadcast_to(counts[:, None] if counts.ndim == 1 else counts, sums.shape)
    picks = _picks(len(sums), rng, n_resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    return _percentiles(ratios, confidence)


def paired_permutation_test(
    differences: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 10000,
) -> float:
    """Two-sided p-value of the paired permutation test that two models score the same.

    `differences` holds, per unit, the sum over its prompts of (model A's value - model B's).
    Under the null hypothesis the two models' values are exchangeable within each unit: each
    unit's difference keeps or flips its sign. The p-value is the share of sign patterns whose
    total is at least as far from 0 as the observed one. Every pattern is enumerated when there
    are at most `n_resamples` of them (an exact test); otherwise `n_resamples` random patterns
    are drawn and the observed one counted in (p = (1 + hits) / (1 + n_resamples)), as
    scipy.stats.permutation_test does.

    Examples:
        >>> paired_permutation_test([0.5, 0.25, 1.0], rng=np.random.default_rng(0))
        0.25
        >>> paired_permutation_test([0.5, -0.5], rng=np.random.default_rng(0))
        1.0
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("one difference per unit, at least one unit")
    observed = abs(d.sum())
    tolerance = 1e-12 * np.abs(d).sum()  # totals equal but for rounding count as equal
    exact = d.size <= EXACT_LIMIT and 2**d.size <= n_resamples
    if exact:
        patterns = ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
        totals = np.abs(patterns @ d)
        return float(np.mean(totals >= observed - tolerance))
    hits = 0
    for start in range(0, n_resamples, 1000):
        size = min(1000, n_resamples - start)
        signs = rng.integers(0, 2, size=(size, d.size)) * 2 - 1
        hits += int(np.sum(np.abs(signs @ d) >= observed - tolerance))
    return (1 + hits) / (1 + n_resamples)


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm's step-down adjustment of p-values for testing them together: the i-th smallest
    is multiplied by (m - i + 1), made non-decreasing and capped at 1. NaN stays NaN and is not
    counted among the m tests.

    Examples:
        >>> holm([0.01, 0.04, 0.03, float("nan")]).tolist()
        [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(pvalues, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested], kind="stable")]
    m = len(order)
    running = 0.0
    for i, index in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[index]))
        adjusted[index] = running
    return adjusted
