"""Category structure: do a matrix's concepts fall into the norms' categories?

Three readings of the concept x concept similarity (tacit.structure.similarity): the share of
each concept's nearest neighbours in its own category; average-linkage clusters cut to as many
clusters as there are categories, scored by purity and the adjusted Rand index; and a 2-D map
by classical MDS, to draw beside the people's. docs/probes/structure.md states the formulas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tacit.structure.matrix import ConceptFeatureMatrix, Grouping
from tacit.structure.similarity import VALUE_COLUMNS, Similarity, similarity_of
from tacit.structure.stats import (
    adjusted_rand,
    concept_counts,
    contingency,
    interval,
    mean_of,
    purity,
)


def average_linkage(distances: np.ndarray, n_clusters: int) -> np.ndarray:
    """Average-linkage (UPGMA) agglomerative clustering, stopped at `n_clusters`: the two
    clusters whose mean distance between their members is least are merged, again and again;
    on a tie, the pair first in row order. Returns each item's cluster, numbered from 0 in
    order of each cluster's first item."""
    n = len(distances)
    if not 1 <= n_clusters <= n:
        raise ValueError(f"between 1 and {n} clusters, not {n_clusters}")
    d = np.array(distances, dtype=float)
    np.fill_diagonal(d, np.inf)
    size = np.ones(n)
    alive = np.ones(n, dtype=bool)
    label = np.arange(n)
    for _ in range(n - n_clusters):
        flat = int(np.argmin(d))
        a, b = divmod(flat, n)
        a, b = min(a, b), max(a, b)
        merged = (size[a] * d[a] + size[b] * d[b]) / (size[a] + size[b])
        d[a], d[:, a] = merged, merged
        d[a, a] = np.inf
        d[b], d[:, b] = np.inf, np.inf
        size[a] += size[b]
        alive[b] = False
        label[label == b] = a
    _, first = np.unique(label, return_index=True)
    renumber = {label[i]: k for k, i in enumerate(sorted(first))}
    return np.array([renumber[x] for x in label])


def classical_mds(similarity: np.ndarray, dims: int = 2) -> np.ndarray:
    """Classical (Torgerson) MDS of a similarity matrix read as inner products: with squared
    distances D2_ij = S_ii + S_jj - 2 S_ij, B = -1/2 J D2 J = J S J (J = I - 11'/n), and the
    coordinates are the top `dims` eigenvectors of B times the square roots of their
    eigenvalues (negative ones as 0; an axis past the n concepts' n is 0). Unique up to
    rotation and reflection; each axis's sign is fixed so that its largest coordinate in
    size is positive."""
    n = len(similarity)
    if n == 0:
        return np.zeros((0, dims))
    s = (np.asarray(similarity, dtype=float) + np.asarray(similarity, dtype=float).T) / 2
    centred = s - s.mean(axis=0) - s.mean(axis=1)[:, None] + s.mean()
    eigenvalues, eigenvectors = np.linalg.eigh(centred)
    top = np.argsort(eigenvalues)[::-1][:dims]
    coordinates = eigenvectors[:, top] * np.sqrt(np.clip(eigenvalues[top], 0.0, None))
    signs = np.sign(coordinates[np.abs(coordinates).argmax(axis=0), range(len(top))])
    coordinates = coordinates * np.where(signs == 0, 1.0, signs)
    if coordinates.shape[1] < dims:  # fewer concepts than axes: the rest are 0
        coordinates = np.hstack([coordinates, np.zeros((n, dims - coordinates.shape[1]))])
    return coordinates


def nearest(similarity: np.ndarray, k: int) -> np.ndarray:
    """Each concept's k most similar other concepts (more similar first; on a tie, the first
    in order)."""
    s = np.array(similarity, dtype=float)
    np.fill_diagonal(s, -np.inf)
    return np.argsort(-s, axis=1, kind="stable")[:, :k]


def category_structure(
    matrix: ConceptFeatureMatrix,
    *,
    by: Grouping = "category",
    similarity: Similarity = "cosine",
    k: int = 5,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """How well the matrix's concepts group into their categories (domains, `by`), over the
    concepts that have one (the others are left out of it).

    - neighbours: the mean over concepts of the share of its k nearest (most similar, among
      the concepts with a category) that share its category.
    - purity and adjusted_rand: of the average-linkage clusters of the distances 1 - S, cut
      to as many clusters as there are categories, against the categories (purity: the share
      of concepts in their cluster's most common category; ARI: Hubert & Arabie 1985).

    The interval resamples concepts (their neighbours and clusters kept: the same partition
    read on the resampled concepts); chance permutes the categories over the concepts
    (rng.permutation), neighbours and clusters kept. Bootstrap then permutations draw from
    np.random.default_rng(seed).

    Returns:
        by, metric, parameter (k, or the number of clusters), value, ci_low, ci_high,
        chance, chance_low, chance_high, n_concepts, n_groups.
    """
    groups = matrix.groups(by)
    members = np.flatnonzero([g is not None for g in groups])
    labels = np.unique([groups[i] for i in members], return_inverse=True)[1].ravel()
    n, n_groups = len(members), int(labels.max(initial=-1) + 1)
    columns = ["by", "metric", "parameter", *VALUE_COLUMNS, "n_concepts", "n_groups"]
    if n < 3 or n_groups < 2:
        return pd.DataFrame(columns=columns)
    s = similarity_of(matrix, similarity)[np.ix_(members, members)]
    neighbours = nearest(s, min(k, n - 1))
    clusters = average_linkage(1 - s, n_groups)

    def measures(lab: np.ndarray, w: np.ndarray) -> list[float]:
        share = (lab[neighbours] == lab[:, None]).mean(axis=1)
        table = contingency(clusters, lab, w)
        return [float((w * share).sum() / w.sum()), purity(table), adjusted_rand(table)]

    ones = np.ones(n)
    observed = measures(labels, ones)
    rng = np.random.default_rng(seed)
    resampled = np.array([measures(labels, w) for w in concept_counts(rng, n, n_resamples)])
    permuted = np.array([measures(labels[rng.permutation(n)], ones) for _ in range(n_permutations)])
    rows = []
    for i, (metric, parameter) in enumerate(
        [("neighbours", min(k, n - 1)), ("purity", n_groups), ("adjusted_rand", n_groups)]
    ):
        low, high = interval(resampled[:, i], confidence)
        chance_low, chance_high = interval(permuted[:, i], confidence)
        rows.append(
            [
                by,
                metric,
                parameter,
                observed[i],
                low,
                high,
                mean_of(permuted[:, i]),
                chance_low,
                chance_high,
                n,
                n_groups,
            ]
        )
    return pd.DataFrame(rows, columns=columns)


def mds_map(
    matrix: ConceptFeatureMatrix, *, similarity: Similarity = "cosine", by: Grouping = "category"
) -> pd.DataFrame:
    """Every concept's place on the 2-D classical MDS map of its similarities: concept, group
    (its category or domain), x, y."""
    xy = classical_mds(similarity_of(matrix, similarity), 2)
    return pd.DataFrame(
        {"concept": matrix.concepts, "group": matrix.groups(by), "x": xy[:, 0], "y": xy[:, 1]}
    )


def procrustes_onto(source: pd.DataFrame, target: pd.DataFrame) -> pd.DataFrame:
    """`source`'s map turned, reflected and scaled to lie closest to `target`'s (orthogonal
    Procrustes on the shared concepts, both centred), for drawing side by side; distances
    within the map keep their proportions."""
    shared = source["concept"].isin(set(target["concept"]))
    a = source.loc[shared, ["x", "y"]].to_numpy()
    b = target.set_index("concept").loc[source.loc[shared, "concept"], ["x", "y"]].to_numpy()
    if len(a) < 2:
        return source
    mean_a, mean_b = a.mean(axis=0), b.mean(axis=0)
    u, sigma, vt = np.linalg.svd((a - mean_a).T @ (b - mean_b))
    rotation = u @ vt
    norm = ((a - mean_a) ** 2).sum()
    scale = sigma.sum() / norm if norm > 0 else 1.0
    moved = (source[["x", "y"]].to_numpy() - mean_a) @ rotation * scale + mean_b
    return source.assign(x=moved[:, 0], y=moved[:, 1])
