"""Chance levels of the ranking metrics (tacit.core.metrics): exact formulas, checked against
every placement of the relevant items where that is few, and against a simulation of random
rankings where it is many."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tacit.core.metrics import (
    average_precision,
    chance_average_precision,
    chance_hits_at_k,
    chance_reciprocal_rank,
    hits_at_k,
    reciprocal_rank,
)


def _every_placement(relevant: int, candidates: int) -> float:
    """The mean AP over every set of ranks the relevant items can take (all equally likely
    under a uniformly random ranking): the expectation, by enumeration."""
    aps = []
    for ranks in itertools.combinations(range(candidates), relevant):
        flags = np.zeros(candidates, dtype=bool)
        flags[list(ranks)] = True
        aps.append(average_precision(-np.arange(candidates, dtype=float), flags))
    return float(np.mean(aps))


@pytest.mark.parametrize("candidates", [1, 2, 3, 5, 8])
def test_expected_average_precision_is_exact(candidates):
    for relevant in range(1, candidates + 1):
        want = _every_placement(relevant, candidates)
        got = chance_average_precision(relevant, candidates)
        assert got == pytest.approx(want, abs=1e-12), (relevant, candidates)


def test_expected_average_precision_agrees_with_a_simulation():
    rng = np.random.default_rng(0)
    for relevant, candidates in [(1, 50), (3, 50), (7, 200), (40, 60)]:
        flags = np.zeros(candidates, dtype=bool)
        flags[:relevant] = True
        draws = [average_precision(rng.random(candidates), flags) for _ in range(4000)]
        spread = np.std(draws) / np.sqrt(len(draws))
        got = float(chance_average_precision(relevant, candidates))
        assert abs(np.mean(draws) - got) < 4 * spread + 1e-9, (relevant, candidates)


def test_chance_ranks_agree_with_a_simulation():
    rng = np.random.default_rng(1)
    candidates = 30
    ranks = rng.integers(1, candidates + 1, size=20000)  # a target's uniformly random rank
    assert chance_reciprocal_rank(candidates) == pytest.approx(
        reciprocal_rank(ranks).mean(), rel=0.03
    )
    assert chance_hits_at_k(candidates, 10) == pytest.approx(hits_at_k(ranks, 10).mean(), rel=0.03)
    harmonic = sum(1 / r for r in range(1, candidates + 1))
    assert chance_reciprocal_rank(candidates) == pytest.approx(harmonic / candidates, rel=1e-14)
    # one relevant item: AP is the reciprocal rank
    assert chance_average_precision(1, candidates) == pytest.approx(harmonic / candidates)


def test_unknown_counts_give_unknown_chance_and_bad_counts_are_refused():
    assert np.isnan(chance_reciprocal_rank([np.nan, 4])[0])
    assert np.isnan(chance_average_precision([2, 2], [np.nan, 4])[0])
    with pytest.raises(ValueError):
        chance_reciprocal_rank([0])
    with pytest.raises(ValueError):
        chance_average_precision(5, 4)
