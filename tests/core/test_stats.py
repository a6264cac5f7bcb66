"""Statistics over concepts (tacit.core.stats), each checked against an independent
computation: scipy.stats.permutation_test and scipy.stats.bootstrap, a plain loop over the same
resamples, and Holm's procedure written out step by step; and the one number format
(tacit.core.numbers)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tacit.core.numbers import format_number
from tacit.core.stats import bootstrap_ratio_ci, holm, paired_permutation_test


def _scipy_paired_p(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int = 0) -> float:
    result = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.sum(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=n_resamples,
        alternative="two-sided",
        vectorized=True,
        random_state=seed,
    )
    return float(result.pvalue)


@pytest.mark.parametrize("seed", range(5))
def test_the_exact_permutation_test_equals_scipys(seed):
    """Few concepts: every sign pattern is enumerated, by both."""
    rng = np.random.default_rng(seed)
    a = rng.choice([1, 1 / 2, 1 / 3, 1 / 4, 1 / 10], size=9)  # reciprocal ranks: ties abound
    b = rng.choice([1, 1 / 2, 1 / 3, 1 / 4, 1 / 10], size=9)
    ours = paired_permutation_test(a - b, rng=np.random.default_rng(1), n_resamples=10000)
    assert ours == pytest.approx(_scipy_paired_p(a, b, 10000), abs=1e-12)


def test_a_sampled_permutation_test_agrees_with_scipys():
    """Many concepts: random sign patterns, so the two agree within sampling error."""
    rng = np.random.default_rng(7)
    a = rng.random(60)
    b = a - 0.03 + rng.normal(0, 0.2, 60)
    ours = paired_permutation_test(a - b, rng=np.random.default_rng(2), n_resamples=20000)
    theirs = _scipy_paired_p(a, b, 20000)
    assert 0.005 < theirs < 0.5  # a p-value that sampling can miss
    assert ours == pytest.approx(theirs, abs=4 * math.sqrt(theirs * (1 - theirs) / 20000))


def test_equal_models_and_a_sure_difference():
    assert paired_permutation_test(np.zeros(5), rng=np.random.default_rng(0)) == 1.0
    p = paired_permutation_test(np.full(12, 0.3), rng=np.random.default_rng(0), n_resamples=5000)
    assert p == pytest.approx((1 + 0) / 5001, abs=2 / 5001)  # only the observed pattern is as far


def test_the_bootstrap_of_a_mean_over_prompts_is_a_plain_loop():
    """The same resamples drawn in the same order, the statistic computed one by one."""
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 6, size=25)
    sums = rng.random(25) * counts
    low, high = bootstrap_ratio_ci(sums, counts, rng=np.random.default_rng(11), n_resamples=500)
    draws = np.random.default_rng(11).integers(0, 25, size=(500, 25))
    ratios = [sums[pick].sum() / counts[pick].sum() for pick in draws]
    assert low[0] == pytest.approx(np.percentile(ratios, 2.5))
    assert high[0] == pytest.approx(np.percentile(ratios, 97.5))


def test_the_bootstrap_agrees_with_scipys():
    rng = np.random.default_rng(4)
    counts = rng.integers(1, 4, size=80).astype(float)
    sums = rng.random(80) * counts
    low, high = bootstrap_ratio_ci(sums, counts, rng=np.random.default_rng(0), n_resamples=20000)
    theirs = stats.bootstrap(
        (sums, counts),
        lambda s, c, axis: s.sum(axis=axis) / c.sum(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20000,
        method="percentile",
        random_state=1,
    ).confidence_interval
    width = theirs.high - theirs.low
    assert low[0] == pytest.approx(theirs.low, abs=0.03 * width)
    assert high[0] == pytest.approx(theirs.high, abs=0.03 * width)


def test_undefined_metrics_give_no_interval():
    low, high = bootstrap_ratio_ci([[0.5, 0.0]], [[1, 0]], rng=np.random.default_rng(0))
    assert low[0] == high[0] == 0.5 and np.isnan(low[1]) and np.isnan(high[1])


def test_holm_step_by_step():
    rng = np.random.default_rng(5)
    for _ in range(50):
        p = rng.random(rng.integers(1, 8)) ** 2
        order = np.argsort(p)
        expected = np.empty_like(p)
        running = 0.0
        for step, index in enumerate(order):  # Holm (1979): p_(i) * (m - i + 1), monotone
            running = max(running, min(1.0, (len(p) - step) * p[index]))
            expected[index] = running
        assert holm(p) == pytest.approx(expected)
    assert holm([0.01, 0.02, 0.03]).tolist() == pytest.approx([0.03, 0.04, 0.04])


@pytest.mark.parametrize(
    "value", np.random.default_rng(0).normal(0, 1, 300) * 10.0 ** np.repeat(np.arange(-7, 5), 25)
)
def test_numbers_print_to_three_significant_digits(value):
    text = format_number(float(value))
    assert not text.startswith("-0") or float(text) != 0  # never -0, -0.000
    assert float(text) == pytest.approx(value, rel=5.01e-3)
    digits = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    assert len(digits) == 3 or abs(value) >= 100  # whole numbers keep every digit
