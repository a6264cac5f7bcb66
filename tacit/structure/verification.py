"""Feature verification: does a score matrix tell a concept's features from features it lacks?

The positives are the reference's listed pairs; for each, negatives of the same relation that
the concept lacks are drawn (seeded), from the features of other concepts of its own category
and from those of other categories only, and scored apart. A feature people did not list is
not always false (nobody says a bear "has a heart" or "is visible"): a negative is a feature
not listed, and every score here reads it so. docs/probes/structure.md states the formulas.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from tacit.structure.matrix import ConceptFeatureMatrix, Grouping
from tacit.structure.similarity import VALUE_COLUMNS
from tacit.structure.stats import (
    Codes,
    best_threshold,
    concept_counts,
    f1,
    interval,
    mean_of,
    threshold_in_order,
    weighted_auc,
)

WITHIN, OTHER = "own category", "other categories"
KINDS = (WITHIN, OTHER)
NO_GROUP = "concepts without a category (or domain)"
TOO_FEW = "positives without a negative to draw"
ITEM_COLUMNS = ["concept", "feature", "relation", "label", "negatives", "fold"]
BINS = 10
BIN_COLUMNS = ["negatives", "bin", "low", "high", "n_items", "confidence", "accuracy"]


def verification_items(
    reference: ConceptFeatureMatrix, *, by: Grouping = "category", seed: int = 0
) -> tuple[pd.DataFrame, dict[str, tuple[str, ...]]]:
    """The items: each listed pair (label 1), and per kind of negative as many unlisted pairs
    of the same relation for the concept (label 0), drawn without replacement.

    For concept c of group g and relation r, the `own category` candidates are the features
    of relation r that c lacks (value 0) and some other concept of g has; the `other
    categories` candidates those of relation r that no concept of g has (so some concept of
    another group has them). np.random.default_rng(seed) draws, concepts in order, relations
    in order of first appearance, own category first: min(positives, candidates) of them
    (rng.choice without replacement, kept in the matrix's feature order). `fold` puts each
    concept in `fit` or `test` (F1's threshold), by rng.permutation of the concepts with
    items, drawn after every negative: its first half (rounded down) fits.

    Returns:
        items (concept, feature, relation, label, negatives: the kind, `positive` for a
        positive, fold) and what was left out, reason -> `concept: feature` or concepts.
    """
    groups = reference.groups(by)
    values = reference.values > 0
    relations = np.asarray(reference.relations)
    has_group = np.array([g is not None for g in groups])
    group_ids = {g: i for i, g in enumerate(sorted({g for g in groups if g is not None}))}
    members = np.zeros((len(group_ids), reference.shape[1]))
    for c, g in enumerate(groups):
        if g is not None:
            members[group_ids[g]] += values[c]
    in_group = members > 0
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, int, int, str]] = []
    short: list[str] = []
    for c, concept in enumerate(reference.concepts):
        group = groups[c]
        if group is None or not values[c].any():
            continue
        gi = group_ids[group]
        others_in_group = members[gi] - values[c] > 0
        listed = np.flatnonzero(values[c])
        rows += [(c, int(f), 1, "positive") for f in listed]
        for relation in dict.fromkeys(relations[listed]):
            positives = int((relations[listed] == relation).sum())
            same = (relations == relation) & ~values[c]
            pools = {
                WITHIN: np.flatnonzero(same & others_in_group),
                OTHER: np.flatnonzero(same & ~in_group[gi]),
            }
            for kind in KINDS:
                pool = pools[kind]
                take = min(positives, len(pool))
                if take < positives:
                    short.append(
                        f"{concept}: {relation} ({kind}: {positives - take} of {positives})"
                    )
                if take:
                    drawn = np.sort(rng.choice(pool, size=take, replace=False))
                    rows += [(c, int(f), 0, kind) for f in drawn]
    table = pd.DataFrame(rows, columns=["c", "f", "label", "negatives"])
    with_items = list(dict.fromkeys(table["c"]))
    order = rng.permutation(len(with_items))
    fit = {with_items[i] for i in order[: len(with_items) // 2]}
    items = pd.DataFrame(
        {
            "concept": [reference.concepts[c] for c in table["c"]],
            "feature": [reference.features[f] for f in table["f"]],
            "relation": relations[table["f"].to_numpy()] if len(table) else [],
            "label": table["label"].to_numpy(),
            "negatives": table["negatives"].to_numpy(),
            "fold": ["fit" if c in fit else "test" for c in table["c"]],
        },
        columns=ITEM_COLUMNS,
    )
    left = {
        NO_GROUP: tuple(c for c, g in zip(reference.concepts, has_group) if not g),
        TOO_FEW: tuple(short),
    }
    return items, {k: v for k, v in left.items() if v}


def _scores_of(
    items: pd.DataFrame, reference: ConceptFeatureMatrix, scores: ConceptFeatureMatrix
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(concept positions, feature positions in `scores`, scores) of the items."""
    if scores.concepts != reference.concepts:
        raise ValueError("the scores hold other concepts (or another order): align them first")
    column = {f: j for j, f in enumerate(scores.features)}
    missing = sorted(set(items["feature"]) - set(column))
    if missing:
        raise ValueError(f"the scores have no feature {missing[0]!r}: align the features first")
    row = {c: i for i, c in enumerate(reference.concepts)}
    ci = items["concept"].map(row).to_numpy()
    fi = items["feature"].map(column).to_numpy()
    return ci, fi, scores.values[ci, fi]


def feature_verification(
    reference: ConceptFeatureMatrix,
    scores: ConceptFeatureMatrix,
    *,
    by: Grouping = "category",
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
    probabilities: bool | None = None,
    bins: int = BINS,
) -> pd.DataFrame:
    """How well `scores` (the same concepts; higher: more likely) tell the reference's listed
    features from unlisted ones (verification_items), for each kind of negative.

    - auc: ROC AUC over the kind's items (its negatives and every positive): the chance that
      a positive outscores a negative, ties counting half.
    - f1: the F1 of `score >= t` on the `test` concepts' items, t the score with the best F1
      on the `fit` concepts' items (the highest on a tie; `threshold` row).
    - f1_base: the F1 of a predictor that says yes at random as often as the thresholded
      scores do on the test items (rate q) where a share pi of them are positive: precision
      pi and recall q, so 2 pi q / (pi + q); f1_selectivity = f1 - f1_base, the F1 above a
      predictor at the same base rate (after Oneata et al. 2025).
    - brier, ece (where the scores are probabilities, in [0, 1]; `probabilities` None
      decides by the values): Brier's mean (p - y)^2, and the expected calibration error
      sum_b (n_b / N) |mean y_b - mean p_b| over `bins` bins of equal width on [0, 1] (the
      last closed; calibration_bins lists them).

    Intervals resample concepts with their items (n_resamples; F1 over the test concepts,
    the threshold kept). Chance gives each concept another concept's scores, by one
    rng.permutation of the concepts per draw (n_permutations; F1's threshold chosen again).
    The bootstrap draws from np.random.default_rng(seed + 1), the permutations from
    np.random.default_rng(seed + 2), both afresh for each kind.

    Returns:
        negatives, metric, value, ci_low, ci_high, chance, chance_low, chance_high,
        n_concepts, n_positive, n_negative.
    """
    items, _ = verification_items(reference, by=by, seed=seed)
    ci, fi, score = _scores_of(items, reference, scores)
    if probabilities is None:
        probabilities = bool(((scores.values >= 0) & (scores.values <= 1)).all())
    n = len(reference.concepts)

    def another_concepts(rng: np.random.Generator, chosen: np.ndarray) -> np.ndarray:
        order = rng.permutation(n)
        return scores.values[order[ci[chosen]], fi[chosen]]

    return verification_table(
        items,
        score,
        ci,
        n,
        another_concepts,
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        probabilities=probabilities,
        bins=bins,
    )


def verify_answers(
    items: pd.DataFrame,
    p_yes: np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
    bins: int = BINS,
) -> pd.DataFrame:
    """feature_verification's table of a model's yes/no answers to the items
    (verification_items' rows), `p_yes` each item's share of draws that said yes: the same
    metrics with Brier and ECE, intervals over concepts; chance, having no scores of the
    items not asked, shuffles the answers over the kind's items (one rng.permutation per
    draw, from np.random.default_rng(seed + 2)): answers that tell nothing of the items."""
    p = np.asarray(p_yes, dtype=np.float64)
    positions = {c: i for i, c in enumerate(dict.fromkeys(items["concept"]))}
    ci = items["concept"].map(positions).to_numpy()

    def shuffled(rng: np.random.Generator, chosen: np.ndarray) -> np.ndarray:
        return rng.permutation(p[chosen])

    return verification_table(
        items,
        p,
        ci,
        len(positions),
        shuffled,
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        probabilities=True,
        bins=bins,
    )


def verification_table(
    items: pd.DataFrame,
    score: np.ndarray,
    ci: np.ndarray,
    n: int,
    chance_scores: Callable[[np.random.Generator, np.ndarray], np.ndarray],
    *,
    seed: int,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    probabilities: bool,
    bins: int,
) -> pd.DataFrame:
    """The metrics of the items' scores per kind of negative, with intervals resampling the
    `n` concepts (`ci`: each item's) and chance from `chance_scores(rng, chosen)`, the
    scores of the kind's items (`chosen`) under the null."""
    if probabilities and not ((score >= 0) & (score <= 1)).all():
        raise ValueError("calibration needs probabilities: scores in [0, 1]")
    rows = []
    for kind in KINDS:
        chosen = ((items["negatives"] == kind) | (items["label"] == 1)).to_numpy()
        if not (chosen & (items["label"] == 0).to_numpy()).any():
            continue
        y = items["label"].to_numpy()[chosen].astype(bool)
        s, c = score[chosen], ci[chosen]
        test = (items["fold"] == "test").to_numpy()[chosen]
        counts = {
            "n_concepts": len(set(c)),
            "n_positive": int(y.sum()),
            "n_negative": int((~y).sum()),
        }
        codes = Codes.of(s)
        found = _metrics(s, y, test, probabilities, bins, codes=codes)
        boot = concept_counts(np.random.default_rng(seed + 1), n, n_resamples)
        resampled = [
            _metrics(s, y, test, probabilities, bins, w[c], found["threshold"], codes) for w in boot
        ]
        perm_rng = np.random.default_rng(seed + 2)
        permuted = [
            _metrics(chance_scores(perm_rng, chosen), y, test, probabilities, bins)
            for _ in range(n_permutations)
        ]
        for metric, value in found.items():
            if metric == "threshold":  # chosen, not estimated: no interval, no chance
                low = high = chance_low = chance_high = np.nan
                chance_values: list[float] = []
            else:
                low, high = interval([r[metric] for r in resampled], confidence)
                chance_values = [p[metric] for p in permuted]
                chance_low, chance_high = interval(chance_values, confidence)
            rows.append(
                {
                    "negatives": kind,
                    "metric": metric,
                    "value": value,
                    "ci_low": low,
                    "ci_high": high,
                    "chance": mean_of(chance_values),
                    "chance_low": chance_low,
                    "chance_high": chance_high,
                    **counts,
                }
            )
    columns = ["negatives", "metric", *VALUE_COLUMNS, "n_concepts", "n_positive", "n_negative"]
    return pd.DataFrame(rows, columns=columns)


def _metrics(
    s: np.ndarray,
    y: np.ndarray,
    test: np.ndarray,
    probabilities: bool,
    bins: int,
    weights: np.ndarray | None = None,
    threshold: float | None = None,
    codes: Codes | None = None,
) -> dict[str, float]:
    """Every metric of one set of scores (weights: a resample's; threshold: kept; codes: the
    scores' Codes, where known)."""
    w = np.ones(len(s)) if weights is None else weights
    order = None
    if codes is None:
        codes, order = Codes.with_order(s)  # one sort: the AUC's codes and F1's threshold
    found = {"auc": weighted_auc(codes, y, w)}
    if threshold is None:
        fit = ~test
        if not (fit.any() and y[fit].any()):
            threshold = np.nan
        elif order is None:
            threshold = best_threshold(s[fit], y[fit])
        else:
            threshold = threshold_in_order(s, y, order[fit[order]])
    said = s >= threshold
    wt = w[test]
    found["threshold"] = threshold
    found["f1"] = f1(said[test], y[test], wt)
    total = wt.sum()
    pi = (wt * y[test]).sum() / total if total > 0 else np.nan
    q = (wt * said[test]).sum() / total if total > 0 else np.nan
    found["f1_base"] = 2 * pi * q / (pi + q) if pi + q > 0 else 0.0
    found["f1_selectivity"] = found["f1"] - found["f1_base"]
    if probabilities:
        total_all = w.sum()
        found["brier"] = float((w * (s - y) ** 2).sum() / total_all)
        found["ece"] = _ece(s, y, w, bins)
    return found


def _bin_of(p: np.ndarray, bins: int) -> np.ndarray:
    """Each probability's bin: [b/B, (b+1)/B), the last one closed."""
    return np.minimum((p * bins).astype(np.int64), bins - 1)


def _ece(p: np.ndarray, y: np.ndarray, w: np.ndarray, bins: int) -> float:
    b = _bin_of(p, bins)
    n = np.bincount(b, weights=w, minlength=bins)
    confidence = np.bincount(b, weights=w * p, minlength=bins)
    accuracy = np.bincount(b, weights=w * y, minlength=bins)
    return float(np.abs(accuracy - confidence).sum() / n.sum())


def calibration_bins(
    reference: ConceptFeatureMatrix,
    scores: ConceptFeatureMatrix,
    *,
    by: Grouping = "category",
    seed: int = 0,
    bins: int = BINS,
) -> pd.DataFrame:
    """The reliability diagram's bins, per kind of negative: each bin's edges, its items, the
    mean probability said (confidence) and the share of positives (accuracy)."""
    items, _ = verification_items(reference, by=by, seed=seed)
    _, _, score = _scores_of(items, reference, scores)
    return reliability_bins(items, score, bins)


def reliability_bins(items: pd.DataFrame, score: np.ndarray, bins: int = BINS) -> pd.DataFrame:
    """calibration_bins of the items' probabilities (`score`, in [0, 1]); a kind with no
    negative drawn has no bins, as it has no verification row."""
    if not ((score >= 0) & (score <= 1)).all():
        raise ValueError("calibration needs probabilities: scores in [0, 1]")
    rows = []
    for kind in KINDS:
        chosen = ((items["negatives"] == kind) | (items["label"] == 1)).to_numpy()
        if not (chosen & (items["label"] == 0).to_numpy()).any():
            continue
        p, y = score[chosen], items["label"].to_numpy()[chosen]
        b = _bin_of(p, bins)
        for number in range(bins):
            inside = b == number
            rows.append(
                {
                    "negatives": kind,
                    "bin": number,
                    "low": number / bins,
                    "high": (number + 1) / bins,
                    "n_items": int(inside.sum()),
                    "confidence": float(p[inside].mean()) if inside.any() else np.nan,
                    "accuracy": float(y[inside].mean()) if inside.any() else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=BIN_COLUMNS)
