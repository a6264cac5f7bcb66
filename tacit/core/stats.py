"""Statistics over units (concepts): percentile bootstrap intervals, the paired permutation
test of two models on the same units with the interval it implies, and Holm's correction for
several tests. Plain arrays in,
floats or arrays out; every function takes its random generator, so results are reproducible.

A unit is what is resampled: a concept with all of its prompts. A metric that is a mean over
prompts is the ratio of the units' sums to their counts, so a unit with three prompts weighs
three times one with one, as it does in the mean itself.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

EXACT_LIMIT = 20  # up to 2**20 (about a million) sign patterns are counted, never sampled


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


@dataclass(frozen=True)
class PairedTest:
    """A paired permutation test and the interval it implies.

    p_value: two-sided, that the two models score alike.
    ci_low, ci_high: every difference the test does not reject at the level asked (infinite
        where too few units can reject any); it leaves out 0 exactly when p <= 1 - confidence.
    exact: every sign pattern was counted (at most EXACT_LIMIT units), else `patterns` drawn.
    patterns: how many sign patterns were counted: 2**n, or the random ones drawn.
    """

    p_value: float
    ci_low: float
    ci_high: float
    exact: bool
    patterns: int


def fewest_units(alpha: float) -> int:
    """The fewest units whose paired permutation test can reject a difference at `alpha`:
    the smallest two-sided p of n units is 2/2**n (every sign the same), so n needs
    2**n >= 2/alpha; with fewer, paired_permutation's interval is infinite.

    Examples:
        >>> fewest_units(0.05), fewest_units(0.01)
        (6, 8)
    """
    return math.ceil(math.log2(2 / alpha) - 1e-12)


def _every_total(values: np.ndarray) -> np.ndarray:
    """The signed total of `values` under every sign pattern (2**n), all plus first."""
    totals = np.zeros(1)
    for value in values:
        totals = np.concatenate([totals + value, totals - value])
    return totals


def _drawn_totals(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """`n_resamples` random sign patterns (drawn 1,000 at a time) applied to each column."""
    found = []
    for start in range(0, n_resamples, 1000):
        size = min(1000, n_resamples - start)
        found.append((rng.integers(0, 2, size=(size, len(values))) * 2 - 1) @ values)
    drawn = np.concatenate(found)
    return drawn[:, 0], drawn[:, 1]


def _not_rejected(
    totals: np.ndarray,
    counts: np.ndarray,
    observed: float,
    total: float,
    counted_in: int,
    alpha: float,
    tolerance: float,
) -> tuple[float, float]:
    """The differences delta that the test does not reject at `alpha`: those where more than
    alpha of the patterns have |total - delta x count| >= |observed - delta x all counts|.

    For a pattern whose count total B is below the units' C in size, that holds on one
    interval of delta: its ends are where (A - A0) - delta (B - C) or (A + A0) - delta (B + C)
    is 0, and it holds the estimate A0 / C, where every pattern counts (p = 1). So on either
    side of the estimate p falls step by step, and each end of the interval is an order
    statistic of the patterns' ends. Ends are widened by what `tolerance` allows (totals
    that equal the observed one but for rounding count, as in the p-value): outside a
    pattern's interval its margin falls at least (C - |B|) per unit of delta."""
    whole = np.abs(counts) >= total * (1 - 1e-12)  # all plus or all minus: always as far
    base = counted_in + int(whole.sum())
    needed = math.floor(alpha * (counted_in + totals.size) + 1e-9) + 1 - base
    if needed <= 0:
        return -math.inf, math.inf
    a, b = totals[~whole], counts[~whole]
    with np.errstate(divide="ignore", invalid="ignore"):
        first = (a - observed) / (b - total)
        second = (a + observed) / (b + total)
    widen = tolerance / (total - np.abs(b))
    low = np.partition(np.minimum(first, second) - widen, needed - 1)[needed - 1]
    high = np.partition(np.maximum(first, second) + widen, a.size - needed)[a.size - needed]
    return float(low), float(high)


def paired_permutation(
    differences: ArrayLike,
    counts: ArrayLike | None = None,
    *,
    rng: np.random.Generator,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    tolerance: float | None = None,
) -> PairedTest:
    """The two-sided paired permutation test that two models score the same, and its interval.

    `differences` holds, per unit, the sum over its prompts of (model A's value - model B's),
    `counts` how many prompts it has (default 1 each): the difference tested is the mean over
    prompts, sum(differences) / sum(counts). Under the null hypothesis the two models' values
    are exchangeable within each unit: each unit's difference keeps or flips its sign. The
    p-value is the share of sign patterns whose total is at least as far from 0 as the
    observed one (within `tolerance`, default 1e-12 of the total of |differences|: equal but
    for rounding). Every one of the 2**n patterns is counted when there are at most
    EXACT_LIMIT units (an exact test; `rng` is not used); otherwise `n_resamples` random
    patterns are drawn from `rng` and the observed one counted in
    (p = (1 + hits) / (1 + n_resamples)), as scipy.stats.permutation_test does.

    The interval inverts the same test: the differences delta for which the units'
    (difference - delta x count) pass it at 1 - `confidence`, counted over the same patterns.
    So it answers the test's question and the two agree: it leaves out 0 exactly when
    p <= 1 - confidence. With few units no delta is rejected (5 units: the smallest p is
    2/32): the interval is then infinite.

    Examples:
        >>> paired_permutation([0.5, 0.25, 1.0], rng=np.random.default_rng(0)).p_value
        0.25
        >>> paired_permutation([0.5, -0.5], rng=np.random.default_rng(0)).p_value
        1.0
        >>> found = paired_permutation([0.3, 0.1, 0.2, 0.4, 0.1, 0.3], rng=np.random.default_rng(0))
        >>> found.p_value, round(found.ci_low, 3), round(found.ci_high, 3), found.exact
        (0.03125, 0.1, 0.4, True)
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("one difference per unit, at least one unit")
    c = np.ones_like(d) if counts is None else np.asarray(counts, dtype=float)
    if c.shape != d.shape or not (c > 0).all():
        raise ValueError("one positive count per unit")
    if tolerance is None:
        tolerance = 1e-12 * float(np.abs(d).sum())
    exact = d.size <= EXACT_LIMIT
    if exact:
        totals, count_totals = _every_total(d), _every_total(c)
        observed, total, counted_in = float(totals[0]), float(count_totals[0]), 0
    else:
        totals, count_totals = _drawn_totals(np.column_stack([d, c]), rng, n_resamples)
        observed, total, counted_in = float(d.sum()), float(c.sum()), 1
    hits = int(np.sum(np.abs(totals) >= abs(observed) - tolerance))
    p = (counted_in + hits) / (counted_in + totals.size)
    low, high = _not_rejected(
        totals, count_totals, observed, total, counted_in, 1 - confidence, tolerance
    )
    return PairedTest(float(p), low, high, exact, int(totals.size))


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
