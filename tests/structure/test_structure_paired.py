"""rsa_difference: two matrices' RSA against one reference on the concepts both have, checked
against scipy's Spearman of the upper triangles, and its paired bootstrap against a plain loop
that writes each resample's pairs out."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import cosine_similarity

from tacit.structure import ConceptFeatureMatrix, Provenance, rsa, rsa_difference
from tacit.structure.paired import rsa_value


def matrix(values: np.ndarray, concepts: list[str]) -> ConceptFeatureMatrix:
    m = values.shape[1]
    return ConceptFeatureMatrix(
        concepts=tuple(concepts),
        features=tuple(f"f{j}" for j in range(m)),
        values=values,
        relations=("has",) * m,
        feature_types=("visual",) * m,
        phrases=tuple(f"has f{j}" for j in range(m)),
        domains=(None,) * len(concepts),
        categories=(None,) * len(concepts),
        provenance=Provenance("scores"),
    )


def upper(square: np.ndarray) -> np.ndarray:
    return square[np.triu_indices(len(square), k=1)]


def by_hand_rho(x: np.ndarray, y: np.ndarray, draws: np.ndarray) -> float:
    """Spearman's rho of the pairs of two different concepts drawn, each pair written out once
    per way of drawing it (`draws`: the drawn concepts' positions)."""
    sx, sy = cosine_similarity(x), cosine_similarity(y)
    left, right = [], []
    for i in range(len(draws)):
        for j in range(i + 1, len(draws)):
            if draws[i] != draws[j]:
                left.append(sx[draws[i], draws[j]])
                right.append(sy[draws[i], draws[j]])
    if len(set(left)) < 2 or len(set(right)) < 2:  # one pair (or none): no rank order
        return float("nan")
    return float(spearmanr(left, right).statistic)


@pytest.fixture()
def three():
    rng = np.random.default_rng(7)
    names = [f"c{i}" for i in range(7)]
    reference = rng.random((7, 5))
    a = reference + rng.normal(0, 0.3, (7, 5))  # near the people's
    b = rng.random((7, 5))  # unlike them
    return names, reference, a, b


def test_the_two_rsas_and_the_bootstrap_by_hand(three):
    names, reference, a, b = three
    # a lacks c6, b lacks c0: the pair shares c1..c5, and two concepts are left out
    ma, mb = matrix(a[:6], names[:6]), matrix(b[1:], names[1:])
    found = rsa_difference(
        ma, mb, matrix(reference, names), similarity="cosine", seed=4, n_resamples=200
    )
    shared = slice(1, 6)
    rho_a = spearmanr(
        upper(cosine_similarity(a[shared])), upper(cosine_similarity(reference[shared]))
    ).statistic
    rho_b = spearmanr(
        upper(cosine_similarity(b[shared])), upper(cosine_similarity(reference[shared]))
    ).statistic
    assert found.concepts == tuple(names[1:6]) and found.left_out == 2
    assert found.rsa_a == pytest.approx(rho_a, abs=1e-12)
    assert found.rsa_b == pytest.approx(rho_b, abs=1e-12)
    assert found.difference == pytest.approx(rho_a - rho_b, abs=1e-12)
    # the same draws, as rng.integers picks them, each resample's pairs written out
    picks = np.random.default_rng(4).integers(0, 5, size=(200, 5))
    differences = []
    for drawn in picks:
        one = by_hand_rho(a[shared], reference[shared], drawn)
        other = by_hand_rho(b[shared], reference[shared], drawn)
        if not (np.isnan(one) or np.isnan(other)):
            differences.append(one - other)
    d = np.array(differences)
    assert found.n_resamples == len(d) > 150
    assert found.ci_low == pytest.approx(np.percentile(d, 2.5), abs=1e-9)
    assert found.ci_high == pytest.approx(np.percentile(d, 97.5), abs=1e-9)
    p = min(1.0, 2 * min(np.mean(d <= 1e-12), np.mean(d >= -1e-12)))
    assert found.p_value == pytest.approx(p, abs=1e-12)


def test_it_gives_rsas_value_and_a_matrix_against_itself_differs_by_nothing(three):
    names, reference, a, _ = three
    ma, ref = matrix(a, names), matrix(reference, names)
    whole = rsa(ma, ref, seed=2, n_resamples=300, n_permutations=1).iloc[0]
    assert rsa_value(ma, ref) == pytest.approx(whole["value"], abs=1e-12)
    found = rsa_difference(ma, ma, ref, seed=2, n_resamples=300)
    assert found.rsa_a == pytest.approx(whole["value"], abs=1e-12)
    assert (found.difference, found.ci_low, found.ci_high, found.p_value) == (0, 0, 0, 1)


def test_too_few_concepts_is_said(three):
    names, reference, a, b = three
    with pytest.raises(ValueError, match="2 concepts shared"):
        rsa_difference(matrix(a[:2], names[:2]), matrix(b[:4], names[:4]), matrix(reference, names))
    with pytest.raises(ValueError, match="n_resamples"):
        rsa_difference(matrix(a, names), matrix(b, names), matrix(reference, names), n_resamples=0)
