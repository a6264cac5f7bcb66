"""The answer-space prior: how much of a matrix's feature ranking is the same for every concept.

A model that ranks `has four legs` high for a bear, a chair and a kettle alike shows its prior
over answers, not knowledge of bears. The prior is the matrix's mean distribution over the
concepts; how much each concept's ranking follows it is Spearman's rho of the two; and the
analyses can be run again on the matrix with the prior divided out (without_prior).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from tacit.structure.matrix import ConceptFeatureMatrix, Provenance
from tacit.structure.similarity import VALUE_COLUMNS
from tacit.structure.stats import average_ranks, interval, mean_of

Space = Literal["log", "probability"]
NEVER = "features no concept has (a prior of 0)"


def prior_of(matrix: ConceptFeatureMatrix, space: Space = "probability") -> np.ndarray:
    """The mean distribution over concepts, per feature: log p(f) = log (1/n sum_c exp L[c, f])
    for log-probabilities (`log`), p(f) = 1/n sum_c P[c, f] for values that are probabilities
    or counts (`probability`: production frequencies too)."""
    if space == "log":
        return logsumexp(matrix.values, axis=0) - np.log(len(matrix.concepts))
    if space == "probability":
        if (matrix.values < 0).any():
            raise ValueError(
                "a prior over probabilities needs values >= 0 (log-probabilities: space='log')"
            )
        return matrix.values.mean(axis=0)
    raise ValueError(f"space must be 'log' or 'probability', not {space!r}")


def answer_prior(
    matrix: ConceptFeatureMatrix,
    *,
    space: Space = "probability",
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How much each concept's feature ranking is the prior's (prior_of).

    rho_c = Spearman's rho, over features, of concept c's values and the prior; the summary
    is their mean over concepts (a concept whose values are all equal has no rho and is
    left out), with a bootstrap interval over concepts (n_resamples); chance is the mean rho
    with the prior's features in a random order, one rng.permutation per draw
    (n_permutations), the bootstrap's picks drawn first from np.random.default_rng(seed).

    Returns:
        (summary: metric `prior_rho`, value, ci_low, ci_high, chance, chance_low,
        chance_high, n_concepts; per concept: concept, rho).
    """
    prior = prior_of(matrix, space)
    ranks = np.vstack([average_ranks(row) for row in matrix.values])
    centred = ranks - ranks.mean(axis=1, keepdims=True)
    spread = np.sqrt((centred**2).sum(axis=1))
    q = average_ranks(prior)
    q_centred = q - q.mean()
    q_spread = np.sqrt((q_centred**2).sum())
    defined = (spread > 0) & (q_spread > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(defined[:, None], centred / np.where(spread > 0, spread, 1)[:, None], 0.0)
        rho = np.where(defined, (unit * q_centred).sum(axis=1) / q_spread, np.nan)
    kept = np.flatnonzero(defined)
    rng = np.random.default_rng(seed)
    picks = (
        rng.integers(0, len(kept), size=(n_resamples, len(kept)))
        if len(kept)
        else np.zeros((0, 0), int)
    )
    resampled = rho[kept][picks].mean(axis=1) if len(kept) else np.array([])
    # a permuted prior: mean_c rho = (sum_c unit_c) . q_perm / (n q_spread)
    direction = unit[kept].sum(axis=0) / max(len(kept), 1) / (q_spread if q_spread > 0 else 1)
    permuted = np.array(
        [(direction * q_centred[rng.permutation(len(q))]).sum() for _ in range(n_permutations)]
    )
    low, high = interval(resampled, confidence)
    chance_low, chance_high = interval(permuted, confidence)
    summary = pd.DataFrame(
        [
            [
                "prior_rho",
                mean_of(rho),
                low,
                high,
                mean_of(permuted),
                chance_low,
                chance_high,
                len(kept),
            ]
        ],
        columns=["metric", *VALUE_COLUMNS, "n_concepts"],
    )
    return summary, pd.DataFrame({"concept": matrix.concepts, "rho": rho})


def without_prior(
    matrix: ConceptFeatureMatrix, *, space: Space = "probability"
) -> ConceptFeatureMatrix:
    """The matrix with its prior divided out (subtracted in log space): L[c, f] - log p(f)
    for `log`; P[c, f] / p(f) for `probability`, where features no concept has (p(f) = 0)
    are left out, and said so."""
    prior = prior_of(matrix, space)
    made = Provenance(
        "prior removed",
        matrix.provenance.path,
        matrix.provenance.sha256,
        {"space": space, "of": matrix.provenance.record()},
    )
    if space == "log":
        return replace(matrix, values=matrix.values - prior, provenance=made)
    kept = prior > 0
    narrowed = matrix.select(features=[f for f, keep in zip(matrix.features, kept) if keep])
    done = replace(narrowed, values=narrowed.values / prior[kept], provenance=made)
    return done.leaving_out(NEVER, (f for f, keep in zip(matrix.features, kept) if not keep))
