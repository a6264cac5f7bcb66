"""The human noise ceiling: how well people's structure agrees with itself.

Each split draws, for every concept, a random half of its participants (CSLB's lists:
tacit.structure.participants) and the other half; each half gives a matrix (how many of its
participants listed each pair), the two halves' similarity structures are compared as rsa()
compares a model's with people's, and the Spearman-Brown formula steps that up to the
reliability of the whole set of participants. docs/probes/structure.md states the formulas.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse

from tacit.norms import NormSet
from tacit.structure.build import feature_columns
from tacit.structure.participants import Listings
from tacit.structure.similarity import Similarity, similarity_matrix
from tacit.structure.stats import interval, mean_of, spearman

COLUMNS = [
    "n_concepts",
    "n_participants",
    "n_splits",
    "split_half",
    "reliability",
    "ci_low",
    "ci_high",
    "reason",
]


def spearman_brown(r: np.ndarray | float) -> np.ndarray | float:
    """The reliability of the whole from that of two halves: 2 r / (1 + r).

    Examples:
        >>> spearman_brown(0.5)
        0.6666666666666666
    """
    return 2 * r / (1 + r)


def _no_ceiling(reason: str, n_concepts: int, n_splits: int) -> pd.DataFrame:
    row: dict[str, object] = dict.fromkeys(COLUMNS, np.nan)
    row.update({"n_concepts": n_concepts, "n_splits": n_splits, "reason": reason})
    return pd.DataFrame([row], columns=COLUMNS)


def split_halves(
    norms: NormSet,
    *,
    concepts: Sequence[str] | None = None,
    n_splits: int = 100,
    seed: int = 0,
    similarity: Similarity = "cosine",
) -> np.ndarray:
    """The RSA (Spearman's rho of the upper triangles) between the two halves of each split.

    For split s and concept c, the concept's participants (the numbers its lists name) are
    put in a random order by the draw np.random.default_rng(seed).random(one per participant
    of every concept, concepts in order, participants in increasing order), sorted by it:
    the first floor(k/2) of its k participants are half A, the next floor(k/2) half B (one
    left out where k is odd, so the halves are the same size). Half A's matrix counts, for
    each concept and feature (every feature of the norms), how many of A's participants
    listed it; likewise B's.
    """
    listings = Listings.of(norms)
    names = list(concepts) if concepts is not None else list(norms.concepts)
    position = {c: i for i, c in enumerate(listings.names)}
    missing = [c for c in names if c not in position]
    if missing:
        raise ValueError(f"no concept {missing[0]!r} in the norms")
    keep = np.array([position[c] for c in names])
    row_of = np.full(len(listings.names), -1)
    row_of[keep] = np.arange(len(keep))
    columns = feature_columns(norms.table)
    column_of = {f: j for j, f in enumerate(columns["feature"])}
    feature_of_row = norms.table["feature"].map(column_of).to_numpy()
    # the slots: each (concept, participant) once, concepts in order, participants increasing
    slots, slot_of_entry = np.unique(
        np.column_stack([listings.concepts, listings.participants]), axis=0, return_inverse=True
    )
    slot_of_entry = slot_of_entry.ravel()
    slot_concept = slots[:, 0]
    starts = np.searchsorted(slot_concept, np.arange(len(listings.names)))
    sizes = np.bincount(slot_concept, minlength=len(listings.names))
    half_size = sizes // 2
    entry_row = row_of[listings.concepts]
    used = entry_row >= 0
    entry_row, entry_column = entry_row[used], feature_of_row[listings.rows[used]]
    slot_of_entry = slot_of_entry[used]
    shape = (len(keep), len(columns))
    # the cells listed at all, in CSR order: each split only counts who of a half is in each
    cells, cell_of_entry = np.unique(
        np.column_stack([entry_row, entry_column]), axis=0, return_inverse=True
    )
    cell_of_entry = cell_of_entry.ravel()
    indptr = np.r_[0, np.cumsum(np.bincount(cells[:, 0], minlength=shape[0]))]
    iu = np.triu_indices(len(keep), k=1)
    rng = np.random.default_rng(seed)
    found = np.full(n_splits, np.nan)
    for s in range(n_splits):
        draw = rng.random(len(slots))
        order = np.lexsort((draw, slot_concept))  # by concept, then by the draw
        place = np.empty(len(slots), dtype=np.int64)
        place[order] = np.arange(len(slots)) - starts[slot_concept[order]]
        half = np.where(
            place < half_size[slot_concept], 0, np.where(place < 2 * half_size[slot_concept], 1, -1)
        )[slot_of_entry]
        halves = [
            scipy.sparse.csr_matrix(
                (
                    np.bincount(cell_of_entry[half == h], minlength=len(cells)).astype(float),
                    cells[:, 1],
                    indptr,
                ),
                shape=shape,
            )
            for h in (0, 1)
        ]
        sims = [similarity_matrix(x, similarity) for x in halves]
        found[s] = spearman(sims[0][iu], sims[1][iu])
    return found


def noise_ceiling(
    norms: NormSet,
    *,
    concepts: Sequence[str] | None = None,
    n_splits: int = 100,
    seed: int = 0,
    similarity: Similarity = "cosine",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The split-half reliability of the people's similarity structure (split_halves), one row.

    split_half is the mean over splits of the halves' rho; reliability the mean over splits of
    its Spearman-Brown step-up 2 rho / (1 + rho), with the central percentile interval of the
    stepped-up values over splits (ci_low, ci_high). A model's RSA against all participants
    can be read as a fraction of it (ceiling_fraction). Norms without participant lists have
    no ceiling: one row of NaN whose `reason` says why (it is empty otherwise).

    Returns:
        n_concepts, n_participants (the median per concept), n_splits, split_half,
        reliability, ci_low, ci_high, reason.
    """
    n_concepts = len(concepts) if concepts is not None else len(norms.concepts)
    if norms.participants is None:
        return _no_ceiling(
            f"the {norms.format} norms ({norms.path.name}) have no participant lists to split",
            n_concepts,
            n_splits,
        )
    halves = split_halves(
        norms, concepts=concepts, n_splits=n_splits, seed=seed, similarity=similarity
    )
    stepped = spearman_brown(halves)
    low, high = interval(stepped, confidence)
    pool = Listings.of(norms).pool()
    names = list(concepts) if concepts is not None else list(norms.concepts)
    row = {
        "n_concepts": n_concepts,
        "n_participants": float(np.median([len(pool[c]) for c in names])),
        "n_splits": n_splits,
        "split_half": mean_of(halves),
        "reliability": mean_of(stepped),
        "ci_low": low,
        "ci_high": high,
        "reason": "",
    }
    return pd.DataFrame([row], columns=COLUMNS)


def ceiling_fraction(rsa_table: pd.DataFrame, ceiling: pd.DataFrame) -> pd.DataFrame:
    """The RSA over all concepts as a fraction of the ceiling's reliability: value / reliability
    (and its interval's ends over it); NaN where there is no ceiling."""
    reliability = float(ceiling["reliability"].iloc[0])
    row = rsa_table[rsa_table["scope"] == "all"].iloc[0]
    return pd.DataFrame(
        [
            {
                "metric": "rsa / ceiling",
                "value": row["value"] / reliability,
                "ci_low": row["ci_low"] / reliability,
                "ci_high": row["ci_high"] / reliability,
                "reliability": reliability,
                "reason": ceiling["reason"].iloc[0],
            }
        ]
    )
