"""Two matrices' RSA against the same reference, compared on the concepts both have (and two
yes/no runs' AUC on the items both answered): the difference, and a paired bootstrap over
concepts (each draw the same concepts for both) for its interval and two-sided p.
docs/probes/structure.md states the formulas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tacit.structure.matrix import ConceptFeatureMatrix
from tacit.structure.similarity import Similarity, resampled_spearman, similarity_of, upper
from tacit.structure.stats import (
    Codes,
    concept_counts,
    interval,
    weighted_auc,
    weighted_spearman,
)

TIES = 1e-12  # a draw's difference within this of 0 counts on both sides of it


@dataclass(frozen=True)
class RsaDifference:
    """rsa_a - rsa_b over `concepts` (the reference's names, in its order): `ci_low`/`ci_high`
    the percentile interval of the resampled differences, `p_value` the two-sided bootstrap
    p, `n_resamples` the draws that gave both RSAs (a draw whose ranks are constant on a side
    gives none), `left_out` the concepts one matrix has and the other lacks."""

    rsa_a: float
    rsa_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    concepts: tuple[str, ...]
    left_out: int
    n_resamples: int


def rsa_difference(
    a: ConceptFeatureMatrix,
    b: ConceptFeatureMatrix,
    reference: ConceptFeatureMatrix,
    *,
    similarity: Similarity = "cosine",
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> RsaDifference:
    """The RSA of `a` and of `b` against `reference` (tacit.structure.rsa, scope `all`) on
    the concepts of the reference that both have, and their paired bootstrap: each of
    `n_resamples` draws picks those n concepts with replacement (concept_counts from
    np.random.default_rng(seed), the draws rsa() makes on the same n concepts) and computes
    both RSAs on it, a pair of a concept with itself left out. Of the draws' differences d,
    the interval is the central `confidence` percentile interval, and

        p = min(1, 2 * min(#{d <= 0}, #{d >= 0}) / #draws)

    (d within 1e-12 of 0 counting on both sides: the same matrix twice gives p = 1).
    Concepts are matched by name: align a and b to the reference first (tacit.structure.align).

    Raises:
        ValueError: fewer than 3 shared concepts (no two pairs to rank), or n_resamples < 1.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, not {n_resamples}")
    have_a, have_b = set(a.concepts), set(b.concepts)
    shared = [c for c in reference.concepts if c in have_a and c in have_b]
    left_out = len(have_a | have_b) - len(shared)
    if len(shared) < 3:
        raise ValueError(
            f"{len(shared)} concepts shared by both matrices and the reference: RSA needs 3"
        )
    codes = _codes((a, b, reference), shared, similarity)
    ones = np.ones(len(codes[2].codes))
    rsa_a = weighted_spearman(codes[0], codes[2], ones)
    rsa_b = weighted_spearman(codes[1], codes[2], ones)
    counts = concept_counts(np.random.default_rng(seed), len(shared), n_resamples)
    drawn = resampled_spearman(codes[0], codes[2], counts) - resampled_spearman(
        codes[1], codes[2], counts
    )
    drawn = drawn[~np.isnan(drawn)]
    low, high, p_value = bootstrap_test(drawn, confidence)
    return RsaDifference(
        rsa_a=rsa_a,
        rsa_b=rsa_b,
        difference=rsa_a - rsa_b,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        concepts=tuple(shared),
        left_out=left_out,
        n_resamples=int(drawn.size),
    )


def bootstrap_test(drawn: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """The central `confidence` percentile interval of a paired bootstrap's differences d,
    and its two-sided p, min(1, 2 * min(#{d <= 0}, #{d >= 0}) / #draws) (NaN: no draw)."""
    low, high = interval(drawn, confidence)
    if not drawn.size:
        return low, high, float("nan")
    below, above = np.mean(drawn <= TIES), np.mean(drawn >= -TIES)
    return low, high, float(min(1.0, 2 * min(below, above)))


@dataclass(frozen=True)
class AucDifference:
    """auc_a - auc_b over the items both answered (`n_items`, of `concepts`), with the
    paired bootstrap's interval and p as RsaDifference has them."""

    auc_a: float
    auc_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    concepts: tuple[str, ...]
    n_items: int
    left_out: int
    n_resamples: int


def auc_difference(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> AucDifference:
    """Two models' ROC AUC on the same verification items (`concept, feature, label,
    score`: a yes/no run's P(yes), one kind of negative and the positives), on the items
    both scored, and their paired bootstrap: each draw weights every concept by how often
    it was drawn (concept_counts from np.random.default_rng(seed)), its items with it, and
    computes both AUCs (ties counting half). bootstrap_test gives the interval and p;
    `left_out` counts the concepts one model has and the other lacks.

    Raises:
        ValueError: no shared item, or no positive or no negative among them.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, not {n_resamples}")
    keys = ["concept", "feature"]
    both = a[[*keys, "label", "score"]].merge(b[[*keys, "score"]], on=keys, suffixes=("_a", "_b"))
    both = both.dropna(subset=["score_a", "score_b"])
    y = both["label"].to_numpy().astype(bool)
    if not (y.any() and (~y).any()):
        raise ValueError(f"{len(both)} items both answered: an AUC needs a positive and a negative")
    concepts = tuple(dict.fromkeys(both["concept"]))
    left_out = len(set(a["concept"]) | set(b["concept"])) - len(concepts)
    position = {c: i for i, c in enumerate(concepts)}
    ci = both["concept"].map(position).to_numpy()
    codes = [Codes.of(both[f"score_{side}"].to_numpy(dtype=np.float64)) for side in "ab"]
    ones = np.ones(len(both))
    auc_a, auc_b = (weighted_auc(c, y, ones) for c in codes)
    counts = concept_counts(np.random.default_rng(seed), len(concepts), n_resamples)
    drawn = np.array(
        [weighted_auc(codes[0], y, w[ci]) - weighted_auc(codes[1], y, w[ci]) for w in counts]
    )
    drawn = drawn[~np.isnan(drawn)]
    low, high, p_value = bootstrap_test(drawn, confidence)
    return AucDifference(
        auc_a=auc_a,
        auc_b=auc_b,
        difference=auc_a - auc_b,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        concepts=concepts,
        n_items=len(both),
        left_out=left_out,
        n_resamples=int(drawn.size),
    )


def rsa_value(
    a: ConceptFeatureMatrix, reference: ConceptFeatureMatrix, *, similarity: Similarity = "cosine"
) -> float:
    """The RSA of `a` against `reference` over the reference's concepts that `a` has (rsa()'s
    value at scope `all`, with no draws)."""
    have = set(a.concepts)
    shared = [c for c in reference.concepts if c in have]
    codes = _codes((a, reference), shared, similarity)
    return weighted_spearman(codes[0], codes[1], np.ones(len(codes[1].codes)))


def _codes(
    matrices: tuple[ConceptFeatureMatrix, ...], concepts: list[str], similarity: Similarity
) -> list[Codes]:
    """Each matrix's similarities of the pairs of `concepts`, coded by their order."""
    return [
        Codes.of(upper(similarity_of(m.select(concepts=concepts), similarity))) for m in matrices
    ]
