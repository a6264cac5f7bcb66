"""Statistics over concepts (tacit.core.stats), each checked against an independent
computation: scipy.stats.permutation_test and scipy.stats.bootstrap, a plain loop over the same
resamples or over every sign pattern, and Holm's procedure written out step by step; and the one
number format (tacit.core.numbers)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from tacit.core.numbers import format_number
from tacit.core.stats import EXACT_LIMIT, bootstrap_ratio_ci, holm, paired_permutation


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
    ours = paired_permutation(a - b, rng=np.random.default_rng(1), n_resamples=10000)
    assert ours.exact and ours.patterns == 2**9
    assert ours.p_value == pytest.approx(_scipy_paired_p(a, b, 10000), abs=1e-12)


def test_a_sampled_permutation_test_agrees_with_scipys():
    """Many concepts: random sign patterns, so the two agree within sampling error."""
    rng = np.random.default_rng(7)
    a = rng.random(60)
    b = a - 0.03 + rng.normal(0, 0.2, 60)
    ours = paired_permutation(a - b, rng=np.random.default_rng(2), n_resamples=20000)
    theirs = _scipy_paired_p(a, b, 20000)
    assert 0.005 < theirs < 0.5  # a p-value that sampling can miss
    assert not ours.exact and ours.patterns == 20000
    assert ours.p_value == pytest.approx(theirs, abs=4 * math.sqrt(theirs * (1 - theirs) / 20000))


def test_equal_models_and_a_sure_difference():
    assert paired_permutation(np.zeros(5), rng=np.random.default_rng(0)).p_value == 1.0
    sure = paired_permutation(np.full(12, 0.3), rng=np.random.default_rng(0), n_resamples=5000)
    assert sure.p_value == 2 / 2**12  # only the observed pattern and its mirror image are as far
    many = paired_permutation(np.full(30, 0.3), rng=np.random.default_rng(0), n_resamples=5000)
    assert many.p_value == pytest.approx(1 / 5001)  # drawn: the observed one counted in


def _plain_p(differences, counts, shift=0.0, tolerance=1e-9):
    """The share of every sign pattern whose total of (difference - shift x count) is at least
    as far from 0 as the observed one: a loop over the patterns, one at a time."""
    shifted = [d - shift * c for d, c in zip(differences, counts)]
    observed = abs(sum(shifted))
    patterns = list(itertools.product([1, -1], repeat=len(shifted)))
    far = sum(
        abs(sum(s * x for s, x in zip(signs, shifted))) >= observed - tolerance
        for signs in patterns
    )
    return far / len(patterns)


def _halves_p(differences, tolerance=1e-9):
    """_plain_p's share over many units: every sign pattern's total is a total of the first
    half's units plus one of the second half's (each half's patterns listed one at a time),
    and every pair of them is counted."""
    half = len(differences) // 2
    left, right = (
        np.array([np.dot(signs, part) for signs in itertools.product([1, -1], repeat=len(part))])
        for part in (differences[:half], differences[half:])
    )
    totals = (left[:, None] + right[None, :]).ravel()
    return np.sum(np.abs(totals) >= abs(np.sum(differences)) - tolerance) / totals.size


@pytest.mark.parametrize("n", [14, EXACT_LIMIT])
def test_every_sign_pattern_is_counted_up_to_the_limit(n):
    """Up to EXACT_LIMIT concepts the p-value is exact however few resamples are asked for
    (the issue's 14 concepts: an exact 9/16384 = 0.000549 sampled as 0.0006 and 0.0004), and
    no random number is drawn."""
    rng = np.random.default_rng(n)
    rr = 1 / rng.integers(1, 6, size=(2, n))  # reciprocal ranks: ties abound
    found = paired_permutation(rr[0] - rr[1], rng=np.random.default_rng(1), n_resamples=100)
    again = paired_permutation(rr[0] - rr[1], rng=np.random.default_rng(2), n_resamples=100)
    assert found.exact and found.patterns == 2**n and found == again
    if n <= 14:
        assert found.p_value == _plain_p(rr[0] - rr[1], [1] * n)
    else:
        assert found.p_value == _halves_p(rr[0] - rr[1])
    assert found.p_value * 2**n == pytest.approx(round(found.p_value * 2**n), abs=1e-6)


@pytest.mark.parametrize("seed", range(12))
def test_the_interval_holds_the_differences_the_test_does_not_reject(seed):
    """The interval is the test's own: a difference just inside it is not rejected at 5%, one
    just outside is (each checked over every sign pattern, one at a time), so it leaves out 0
    exactly when p <= 0.05, and never an interval that excludes 0 beside p = 0.088."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(7, 12))
    counts = rng.integers(1, 4, size=n).astype(float)
    effect = rng.choice([0.0, 0.05, 0.15])
    differences = (rng.normal(effect, 0.2, n)) * counts
    found = paired_permutation(differences, counts, rng=np.random.default_rng(0))
    estimate = differences.sum() / counts.sum()
    assert found.ci_low <= estimate <= found.ci_high
    step = 1e-6
    for end, outward in ((found.ci_low, -step), (found.ci_high, step)):
        assert _plain_p(differences, counts, end - outward) > 0.05
        assert _plain_p(differences, counts, end + outward) <= 0.05
    assert found.p_value == _plain_p(differences, counts)
    assert (found.ci_low > 0 or found.ci_high < 0) == (found.p_value <= 0.05)


def test_too_few_concepts_to_reject_give_an_unbounded_interval():
    """With 5 concepts the smallest two-sided p is 2/32 > 0.05: no difference is rejected."""
    found = paired_permutation([0.3, 0.4, 0.5, 0.2, 0.6], rng=np.random.default_rng(0))
    assert found.p_value == 2 / 32
    assert (found.ci_low, found.ci_high) == (-math.inf, math.inf)


def test_a_drawn_test_is_seeded_and_its_interval_is_the_draws_own():
    """Past the limit, sign patterns are drawn 1,000 at a time; the interval is computed over
    the same draws as the p-value, so the two still agree."""
    rng = np.random.default_rng(8)
    n = EXACT_LIMIT + 5
    counts = rng.integers(1, 3, size=n).astype(float)
    differences = rng.normal(0.08, 0.2, n) * counts
    found = paired_permutation(differences, counts, rng=np.random.default_rng(3), n_resamples=2500)
    assert found == paired_permutation(
        differences, counts, rng=np.random.default_rng(3), n_resamples=2500
    )
    draws = np.random.default_rng(3)
    signs = np.vstack([draws.integers(0, 2, size=(size, n)) * 2 - 1 for size in (1000, 1000, 500)])

    def drawn_p(shift):
        shifted = differences - shift * counts
        far = np.abs(signs @ shifted) >= abs(shifted.sum()) - 1e-9
        return (1 + far.sum()) / (1 + len(signs))

    assert found.p_value == pytest.approx(drawn_p(0.0))
    for end, outward in ((found.ci_low, -1e-6), (found.ci_high, 1e-6)):
        assert drawn_p(end - outward) > 0.05 >= drawn_p(end + outward)


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
