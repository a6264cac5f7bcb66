"""Representational similarity: how alike two matrices find the same concepts.

Each matrix gives a concept x concept similarity from its rows (`similarity`); the two
structures agree as much as the Spearman correlation of their upper triangles (every pair of
distinct concepts once), over all concepts and within each domain and category. The interval
resamples concepts; chance and the Mantel test permute one side's concepts. docs/probes/
structure.md states every formula.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse

from tacit.structure.matrix import ConceptFeatureMatrix
from tacit.structure.stats import (
    Codes,
    average_ranks,
    concept_counts,
    interval,
    mean_of,
    weighted_spearman,
    weighted_spearman_rows,
)

BATCH = 2_000_000  # pairs x draws computed at once: about 16 MB an array
FEW_PAIRS = 1000  # up to this many pairs, the resamples are ranked together

Similarity = Literal["cosine", "correlation", "jaccard"]
SIMILARITIES = ("cosine", "correlation", "jaccard")
# the columns of every analysis's table after its keys
VALUE_COLUMNS = ["value", "ci_low", "ci_high", "chance", "chance_low", "chance_high"]


def similarity_matrix(
    values: np.ndarray | scipy.sparse.spmatrix, kind: Similarity = "cosine"
) -> np.ndarray:
    """The concept x concept similarity of the rows of `values` (a dense or sparse array), all
    from the Gram matrix G = X X^T, n_i = G_ii, s_i = the row's sum, m features:

    - cosine: G_ij / sqrt(n_i n_j);
    - correlation (Pearson's r of the two rows): (G_ij / m - s_i s_j / m^2) / (sd_i sd_j),
      sd_i^2 = n_i / m - (s_i / m)^2;
    - jaccard (of the features each row has, x > 0): |both| / |either|.

    A row of zeros (or, for correlation, a constant row) is alike nothing: its similarities
    are 0, as scikit-learn's cosine_similarity makes them.
    """
    if kind not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {', '.join(SIMILARITIES)}, not {kind!r}")
    sparse = scipy.sparse.issparse(values)
    x = scipy.sparse.csr_matrix(values, dtype=float) if sparse else np.asarray(values, dtype=float)
    if kind == "jaccard":
        x = (x > 0).astype(float)
    gram = x @ x.T
    gram = gram.toarray() if scipy.sparse.issparse(gram) else np.asarray(gram)
    squares = np.diag(gram).copy()
    m = x.shape[1]
    if kind == "cosine":
        scale = np.sqrt(squares)
        top = gram
    elif kind == "correlation":
        sums = np.asarray(x.sum(axis=1)).ravel()
        top = gram / m - np.outer(sums, sums) / m**2
        scale = np.sqrt(np.clip(squares / m - (sums / m) ** 2, 0.0, None))
    else:  # |A and B| / (|A| + |B| - |A and B|)
        union = squares[:, None] + squares[None, :] - gram
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(union > 0, gram / np.where(union > 0, union, 1.0), 0.0)
    outer = np.outer(scale, scale)
    positive = outer > 1e-12 * max(float(outer.max(initial=0.0)), 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(np.where(positive, top / np.where(positive, outer, 1.0), 0.0), -1.0, 1.0)


def upper(square: np.ndarray) -> np.ndarray:
    """The upper triangle of a square matrix without its diagonal, row by row."""
    return square[np.triu_indices(len(square), k=1)]


def _check_same_concepts(a: ConceptFeatureMatrix, b: ConceptFeatureMatrix) -> None:
    if a.concepts != b.concepts:
        raise ValueError(
            "the two matrices hold other concepts (or another order): align them first "
            "(tacit.structure.align)"
        )


def rsa_scope(
    sim_a: np.ndarray,
    sim_b: np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
) -> dict[str, float]:
    """The RSA of two similarity matrices over the same concepts, its bootstrap interval over
    concepts, chance and the Mantel test (see rsa()); the draws come from
    np.random.default_rng(seed): first the bootstrap's picks (concept_counts), then one
    rng.permutation(n) per permutation."""
    n = len(sim_a)
    iu, ju = np.triu_indices(n, k=1)
    pairs_a, pairs_b = sim_a[iu, ju], sim_b[iu, ju]
    codes_a, codes_b = Codes.of(pairs_a), Codes.of(pairs_b)
    observed = weighted_spearman(codes_a, codes_b, np.ones(len(iu)))
    rng = np.random.default_rng(seed)
    counts = concept_counts(rng, n, n_resamples)
    resampled = resampled_spearman(codes_a, codes_b, counts)
    chunk = max(1, BATCH // max(len(iu), 1))  # draws at once, as memory allows
    # permutations: a's concepts relabelled; its ranks are the same values, moved
    ranks_a = np.zeros((n, n))
    ranks_a[iu, ju] = average_ranks(pairs_a)
    ranks_a += ranks_a.T
    ranks_b = average_ranks(pairs_b)
    centred_b = ranks_b - ranks_b.mean()
    mean_a = ranks_a[iu, ju].mean()
    spread = np.sqrt(((ranks_a[iu, ju] - mean_a) ** 2).sum() * (centred_b**2).sum())
    permuted = np.full(n_permutations, np.nan)
    orders = np.array([rng.permutation(n) for _ in range(n_permutations)]).reshape(-1, n)
    if spread > 0:
        for start in range(0, n_permutations, chunk):
            o = orders[start : start + chunk]
            moved = ranks_a[o[:, iu], o[:, ju]] - mean_a
            permuted[start : start + chunk] = (moved * centred_b).sum(axis=1) / spread
    low, high = interval(resampled, confidence)
    chance_low, chance_high = interval(permuted, confidence)
    beaten = int(np.sum(permuted >= observed - 1e-12)) if not np.isnan(observed) else 0
    return {
        "n_pairs": len(iu),
        "value": observed,
        "ci_low": low,
        "ci_high": high,
        "chance": mean_of(permuted),
        "chance_low": chance_low,
        "chance_high": chance_high,
        "p_value": (1 + beaten) / (1 + n_permutations) if not np.isnan(observed) else np.nan,
    }


def resampled_spearman(codes_a: Codes, codes_b: Codes, counts: np.ndarray) -> np.ndarray:
    """Spearman's rho of the pairs' coded similarities (the upper triangle of n concepts, row
    by row) in each bootstrap resample of the concepts, `counts` (resamples x n: how often
    each concept was drawn, concept_counts): the pair of concepts drawn k and l times counts
    k x l times, a concept with itself is no pair. NaN where a resample's ranks are constant."""
    n_resamples, n = counts.shape
    iu, ju = np.triu_indices(n, k=1)
    chunk = max(1, BATCH // max(len(iu), 1))  # draws at once, as memory allows
    if len(iu) <= FEW_PAIRS:  # many small steps: at once
        return np.concatenate(
            [np.array([])]
            + [
                weighted_spearman_rows(codes_a, codes_b, c[:, iu] * c[:, ju])
                for c in np.array_split(counts, range(chunk, n_resamples, chunk))
            ]
        )
    # one at a time, each without the pairs it leaves out
    return np.array(
        [weighted_spearman(codes_a, codes_b, c[iu] * c[ju]) for c in counts], dtype=float
    )


def rsa(
    a: ConceptFeatureMatrix,
    b: ConceptFeatureMatrix,
    *,
    similarity: Similarity = "cosine",
    similarity_b: Similarity | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
    min_concepts: int = 5,
) -> pd.DataFrame:
    """Representational similarity analysis of two matrices on the same concepts.

    S_a and S_b are the concept x concept similarities (similarity_matrix; `similarity_b`
    for b where it differs). RSA = Spearman's rho of their upper triangles: the pairs i < j
    of distinct concepts, ties sharing their mean rank. Computed over all concepts and within
    each domain and category with at least `min_concepts` concepts (fewer: NaN, and said by
    n_concepts).

    Interval: the percentile interval of rho over `n_resamples` resamples of the concepts
    (with replacement); a resample's pairs are those of two different concepts drawn (a
    concept drawn k and another l times gives their pair k x l times; a concept with itself
    is no pair). Chance: rho after a random permutation of a's concepts (its rows and columns
    together), mean and interval over `n_permutations`; the Mantel test's p-value is
    (1 + #{permuted rho >= rho}) / (1 + n_permutations), one-sided (that the structures
    agree more than chance). Each scope draws afresh from np.random.default_rng(seed).

    Returns:
        scope (`all`, `domain`, `category`), group, n_concepts, n_pairs, metric (`rsa`),
        value, ci_low, ci_high, chance, chance_low, chance_high, p_value.
    """
    _check_same_concepts(a, b)
    sim_a = similarity_matrix(_sparse(a.values), similarity)
    sim_b = similarity_matrix(_sparse(b.values), similarity_b or similarity)
    scopes: list[tuple[str, str, np.ndarray]] = [("all", "all", np.arange(len(a.concepts)))]
    for by in ("domain", "category"):
        groups = b.categories if by == "category" else b.domains
        for group in sorted({g for g in groups if g is not None}):
            scopes.append((by, group, np.flatnonzero([g == group for g in groups])))
    rows = []
    for scope, group, members in scopes:
        row: dict[str, object] = {"scope": scope, "group": group, "n_concepts": len(members)}
        if len(members) >= max(min_concepts, 3):
            found = rsa_scope(
                sim_a[np.ix_(members, members)],
                sim_b[np.ix_(members, members)],
                seed=seed,
                n_resamples=n_resamples,
                n_permutations=n_permutations,
                confidence=confidence,
            )
        else:
            found = dict.fromkeys([*VALUE_COLUMNS, "p_value"], np.nan)
            found["n_pairs"] = len(members) * (len(members) - 1) // 2
        rows.append({**row, "n_pairs": found.pop("n_pairs"), "metric": "rsa", **found})
    return pd.DataFrame(rows)


def _sparse(values: np.ndarray) -> np.ndarray | scipy.sparse.csr_matrix:
    """Mostly zeros (norms): sparse, so the Gram matrix costs what the listings do."""
    return (
        scipy.sparse.csr_matrix(values) if np.count_nonzero(values) < values.size / 10 else values
    )


def similarity_of(matrix: ConceptFeatureMatrix, kind: Similarity = "cosine") -> np.ndarray:
    """similarity_matrix() of a matrix's rows."""
    return similarity_matrix(_sparse(matrix.values), kind)


def group_members(groups: Sequence[str | None]) -> dict[str, np.ndarray]:
    """group -> the positions of its concepts (concepts without a group left out)."""
    found: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            found.setdefault(g, []).append(i)
    return {g: np.asarray(v) for g, v in found.items()}
