"""A case small enough to check by hand: four concepts, five features, every expected number
worked out on paper (in the comments) and written here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tacit.structure import (
    ConceptFeatureMatrix,
    Provenance,
    answer_prior,
    average_linkage,
    category_structure,
    feature_verification,
    rsa,
    similarity_matrix,
    verification_items,
)

# people: A and B (category x) share f1 f2, C and D (category y) share f4 f5, B and D share f3
PEOPLE = [[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 0, 0, 1, 1], [0, 0, 1, 1, 1]]
MODEL = [[2, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 1, 1, 1]]


def matrix(values) -> ConceptFeatureMatrix:
    return ConceptFeatureMatrix(
        concepts=("A", "B", "C", "D"),
        features=("f1", "f2", "f3", "f4", "f5"),
        values=np.array(values, dtype=float),
        relations=("has",) * 5,
        feature_types=("visual perceptual",) * 5,
        phrases=("has f1", "has f2", "has f3", "has f4", "has f5"),
        domains=("d",) * 4,
        categories=("x", "x", "y", "y"),
        provenance=Provenance("by hand"),
    )


def test_cosine_similarities_by_hand():
    s = similarity_matrix(np.array(PEOPLE, dtype=float))
    # AB = 2 / (sqrt 2 sqrt 3), BD = 1 / 3, CD = 2 / sqrt 6, the rest share nothing
    assert s[0, 1] == pytest.approx(2 / math.sqrt(6))
    assert s[1, 3] == pytest.approx(1 / 3)
    assert s[2, 3] == pytest.approx(2 / math.sqrt(6))
    assert s[0, 2] == s[0, 3] == s[1, 2] == 0


def test_rsa_by_hand():
    # people's pairs (AB AC AD BC BD CD) 0.816 0 0 0 0.333 0.816: ranks 5.5 2 2 2 4 5.5
    # model's 0.949 0 0 0 0 0.577: ranks 6 2.5 2.5 2.5 2.5 5; both mean 3.5
    # sum dx dy = 12, sum dx^2 = 15, sum dy^2 = 12.5: rho = 12 / sqrt(187.5)
    table = rsa(matrix(MODEL), matrix(PEOPLE), n_resamples=10, n_permutations=10, min_concepts=3)
    assert table.iloc[0]["value"] == pytest.approx(12 / math.sqrt(187.5))
    assert table.iloc[0]["n_pairs"] == 6
    # categories of two concepts have one pair: below min_concepts, no value
    assert table[table["scope"] == "category"]["value"].isna().all()


def test_clusters_and_neighbours_by_hand():
    # distances 1 - S: AB = CD = 0.184, BD = 0.667, the rest 1: {A, B} and {C, D}
    d = 1 - similarity_matrix(np.array(PEOPLE, dtype=float))
    assert average_linkage(d, 2).tolist() == [0, 0, 1, 1]
    table = category_structure(matrix(PEOPLE), k=1, n_resamples=5, n_permutations=5)
    values = dict(zip(table["metric"], table["value"]))
    # every concept's nearest is of its category; the clusters are the categories
    assert values == {"neighbours": 1.0, "purity": 1.0, "adjusted_rand": 1.0}


def test_feature_verification_by_hand():
    # A: positives f1 f2; own category (features B has, A lacks): f3 (1 of 2); other
    # categories (no concept of x has): f4 f5. B: f1 f2 f3; own: none; other: f4 f5 (2 of 3).
    # C: f4 f5; own f3 (1 of 2); other f1 f2. D: f3 f4 f5; own none; other f1 f2 (2 of 3).
    # Every pool is taken whole; six draws fall short.
    items, left = verification_items(matrix(PEOPLE))
    negatives = items[items["label"] == 0]
    assert sorted(negatives[negatives["negatives"] == "own category"]["concept"]) == ["A", "C"]
    assert len(negatives[negatives["negatives"] == "other categories"]) == 8
    assert len(items[items["label"] == 1]) == 10
    short = left["positives without a negative to draw"]
    assert short == (
        "A: has (own category: 1 of 2)",
        "B: has (own category: 3 of 3)",
        "B: has (other categories: 1 of 3)",
        "C: has (own category: 1 of 2)",
        "D: has (own category: 3 of 3)",
        "D: has (other categories: 1 of 3)",
    )
    table = feature_verification(
        matrix(PEOPLE), matrix(MODEL), n_resamples=5, n_permutations=5, probabilities=False
    )
    auc = table[table["metric"] == "auc"].set_index("negatives")["value"]
    # the positives' scores: 2 1 | 1 1 0 | 1 0 | 1 1 1; every negative scores 0: 8 positives
    # above, 2 tied: own (8 x 2 + 0.5 x 2 x 2) / 20 = 0.9, other (8 x 8 + 0.5 x 2 x 8) / 80
    assert auc["own category"] == pytest.approx(0.9)
    assert auc["other categories"] == pytest.approx(0.9)


def test_prior_by_hand():
    # the model's prior: column means 0.75 0.5 0.25 0.5 0.25; D = 0 0 1 1 1
    # ranks of D 1.5 1.5 4 4 4, of the prior 5 3.5 1.5 3.5 1.5:
    # sum dx dy = -6.25, sum dx^2 = 7.5, sum dy^2 = 9
    _, per_concept = answer_prior(matrix(MODEL), n_resamples=5, n_permutations=5)
    rho = dict(zip(per_concept["concept"], per_concept["rho"]))
    assert rho["D"] == pytest.approx(-6.25 / math.sqrt(67.5))
