"""Every analysis recomputed independently from the written matrices (read with numpy and
pandas, not tacit's reader), with scipy and scikit-learn: the implementation is our own, these
are not, and they must agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist
from scipy.stats import spearmanr
from sklearn.decomposition import PCA
from sklearn.metrics import (
    adjusted_rand_score,
    brier_score_loss,
    f1_score,
    roc_auc_score,
)
from sklearn.metrics.pairwise import cosine_similarity

from tacit.structure import (
    ConceptFeatureMatrix,
    Provenance,
    answer_prior,
    calibration_bins,
    category_structure,
    classical_mds,
    feature_verification,
    rsa,
    similarity_matrix,
    verification_items,
    without_prior,
)
from tacit.structure.stats import adjusted_rand, best_threshold, contingency, f1, pearson, roc_auc

N_CONCEPTS, N_FEATURES = 24, 40
CATEGORIES = ["bird", "tool", "fruit"] * 8
RELATIONS = ["has", "is", "does", "made of"] * 10


def made(values: np.ndarray, source: str) -> ConceptFeatureMatrix:
    return ConceptFeatureMatrix(
        concepts=tuple(f"c{i}" for i in range(N_CONCEPTS)),
        features=tuple(f"f{j}" for j in range(N_FEATURES)),
        values=values,
        relations=tuple(RELATIONS),
        feature_types=("encyclopaedic",) * N_FEATURES,
        phrases=tuple(f"has f{j}" for j in range(N_FEATURES)),
        domains=tuple("living" if i % 2 else "nonliving" for i in range(N_CONCEPTS)),
        categories=tuple(CATEGORIES),
        provenance=Provenance(source),
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """People's counts (a category's features likelier) and a model's noisy probabilities,
    written to disk; returned as numpy and pandas read them."""
    rng = np.random.default_rng(7)
    group = np.array([CATEGORIES.index(c) for c in CATEGORIES])
    likely = np.where((np.arange(N_FEATURES)[None, :] % 3) == group[:, None], 0.5, 0.08)
    people = rng.binomial(30, likely * rng.random((N_CONCEPTS, N_FEATURES)) * 0.6).astype(float)
    people[people < 2] = 0
    model = np.clip(people / 30 + rng.normal(0, 0.15, people.shape), 0, 1)
    where = tmp_path_factory.mktemp("matrices")
    made(people, "people").write(where / "people")
    made(model, "model").write(where / "model")

    def read(name):
        values = np.load(where / name / "matrix.npz", allow_pickle=False)["values"]
        concepts = pd.read_csv(where / name / "concepts.csv", keep_default_na=False)
        features = pd.read_csv(where / name / "features.csv", keep_default_na=False)
        return values, concepts, features

    return where, read("people"), read("model")


def matrices(written):
    from tacit.structure import read_matrix

    where, _, _ = written
    return read_matrix(where / "people"), read_matrix(where / "model")


def test_similarities_are_scikit_learns_and_numpys(written):
    _, (people, _, _), _ = written
    assert np.allclose(similarity_matrix(people), cosine_similarity(people))
    assert np.allclose(similarity_matrix(people, "correlation"), np.corrcoef(people))
    binary = people > 0
    expected = 1 - pdist(binary, "jaccard")
    ours = similarity_matrix(people, "jaccard")[np.triu_indices(N_CONCEPTS, 1)]
    assert np.allclose(ours, expected)


@pytest.mark.parametrize("together", [True, False], ids=["resamples together", "one by one"])
def test_rsa_its_interval_and_the_mantel_test(written, together, monkeypatch):
    import tacit.structure.similarity

    # few pairs are ranked for every resample at once, many one resample at a time: both ways
    monkeypatch.setattr(tacit.structure.similarity, "FEW_PAIRS", 10**9 if together else 0)
    people_m, model_m = matrices(written)
    _, (people, concepts, _), (model, _, _) = written
    seed, n = 3, 40
    table = rsa(model_m, people_m, seed=seed, n_resamples=n, n_permutations=n)
    s_model, s_people = cosine_similarity(model), cosine_similarity(people)
    iu = np.triu_indices(N_CONCEPTS, 1)
    row = table.iloc[0]
    assert row["value"] == pytest.approx(spearmanr(s_model[iu], s_people[iu])[0])
    # the documented draws: the bootstrap's picks, then one permutation per draw
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, N_CONCEPTS, size=(n, N_CONCEPTS))
    boot = []
    for b in picks:
        keep = b[iu[0]] != b[iu[1]]  # a concept with itself is no pair
        a, p = s_model[np.ix_(b, b)][iu][keep], s_people[np.ix_(b, b)][iu][keep]
        boot.append(spearmanr(a, p)[0])
    assert [row["ci_low"], row["ci_high"]] == pytest.approx(np.percentile(boot, [2.5, 97.5]))
    permuted = []
    for _ in range(n):
        order = rng.permutation(N_CONCEPTS)
        permuted.append(spearmanr(s_model[np.ix_(order, order)][iu], s_people[iu])[0])
    assert row["chance"] == pytest.approx(np.mean(permuted))
    p = (1 + sum(r >= row["value"] for r in permuted)) / (1 + n)
    assert row["p_value"] == pytest.approx(p)
    # within a category: the same, on its concepts
    birds = concepts.index[concepts["category"] == "bird"].to_numpy()
    sub = np.triu_indices(len(birds), 1)
    expected = spearmanr(s_model[np.ix_(birds, birds)][sub], s_people[np.ix_(birds, birds)][sub])[0]
    found = table[(table["scope"] == "category") & (table["group"] == "bird")]["value"].iloc[0]
    assert found == pytest.approx(expected)


def test_feature_verification_against_scikit_learn(written):
    people_m, model_m = matrices(written)
    _, _, (model, _, features) = written
    items, _ = verification_items(people_m, seed=5)
    table = feature_verification(people_m, model_m, seed=5, n_resamples=20, n_permutations=20)
    column = {f: j for j, f in enumerate(features["feature"])}
    for kind in ("own category", "other categories"):
        chosen = items[(items["negatives"] == kind) | (items["label"] == 1)]
        rows = chosen["concept"].str[1:].astype(int).to_numpy()
        scores = model[rows, chosen["feature"].map(column).to_numpy()]
        y = chosen["label"].to_numpy()
        found = table[table["negatives"] == kind].set_index("metric")["value"]
        assert found["auc"] == pytest.approx(roc_auc_score(y, scores))
        fit, test = (chosen["fold"] == "fit").to_numpy(), (chosen["fold"] == "test").to_numpy()
        # the threshold is the F1-best on the fit concepts: no score does better there
        t = found["threshold"]
        best = max(f1_score(y[fit], scores[fit] >= c) for c in np.unique(scores[fit]))
        assert f1_score(y[fit], scores[fit] >= t) == pytest.approx(best)
        assert found["f1"] == pytest.approx(f1_score(y[test], scores[test] >= t))
        pi, q = y[test].mean(), (scores[test] >= t).mean()
        assert found["f1_base"] == pytest.approx(2 * pi * q / (pi + q))
        assert found["brier"] == pytest.approx(brier_score_loss(y, scores))
        bins = np.minimum((scores * 10).astype(int), 9)
        ece = sum(
            (bins == b).sum() / len(y) * abs(y[bins == b].mean() - scores[bins == b].mean())
            for b in range(10)
            if (bins == b).any()
        )
        assert found["ece"] == pytest.approx(ece)
        diagram = calibration_bins(people_m, model_m, seed=5)
        diagram = diagram[diagram["negatives"] == kind]
        assert diagram["n_items"].sum() == len(y)


def test_negatives_are_unlisted_of_the_same_relation_and_kind(written):
    people_m, _ = matrices(written)
    _, (people, concepts, features), _ = written
    items, _ = verification_items(people_m, seed=1)
    row = {c: i for i, c in enumerate(concepts["concept"])}
    column = {f: j for j, f in enumerate(features["feature"])}
    category = dict(zip(concepts["concept"], concepts["category"]))
    for item in items.itertuples():
        i, j = row[item.concept], column[item.feature]
        assert (people[i, j] > 0) == (item.label == 1)
        if item.label == 1:
            continue
        same = [row[c] for c, g in category.items() if g == category[item.concept]]
        others_have = [people[k, j] > 0 for k in same if k != i]
        assert any(others_have) == (item.negatives == "own category")
    # as many negatives of a kind as positives of the relation, at most, per concept
    counted = items.groupby(["concept", "relation", "negatives"]).size().unstack(fill_value=0)
    assert (counted["own category"] <= counted["positive"]).all()
    assert (counted["other categories"] <= counted["positive"]).all()


def test_category_structure_against_scipy_and_scikit_learn(written):
    people_m, _ = matrices(written)
    _, (people, concepts, _), _ = written
    table = category_structure(people_m, k=3, n_resamples=10, n_permutations=10)
    found = table.set_index("metric")["value"]
    s = cosine_similarity(people)
    labels = concepts["category"].to_numpy()
    np.fill_diagonal(s, -np.inf)
    nearest = np.argsort(-s, axis=1, kind="stable")[:, :3]
    assert found["neighbours"] == pytest.approx((labels[nearest] == labels[:, None]).mean())
    distances = 1 - cosine_similarity(people)
    condensed = distances[np.triu_indices(N_CONCEPTS, 1)]
    clusters = fcluster(linkage(condensed, "average"), 3, "maxclust")
    assert found["adjusted_rand"] == pytest.approx(adjusted_rand_score(labels, clusters))
    table_counts = pd.crosstab(clusters, labels).to_numpy()
    assert found["purity"] == pytest.approx(table_counts.max(axis=1).sum() / N_CONCEPTS)


def test_mds_is_pca_of_the_unit_rows_up_to_rotation(written):
    _, (people, _, _), _ = written
    unit = people / np.linalg.norm(people, axis=1, keepdims=True)
    ours = classical_mds(similarity_matrix(people), 2)
    theirs = PCA(2).fit_transform(unit)
    assert np.allclose(pdist(ours), pdist(theirs))


def test_prior_and_its_removal(written):
    _, model_m = matrices(written)
    _, _, (model, _, _) = written
    summary, per_concept = answer_prior(model_m, n_resamples=10, n_permutations=10)
    prior = model.mean(axis=0)
    expected = [spearmanr(row, prior)[0] for row in model]
    assert per_concept["rho"].to_numpy() == pytest.approx(expected)
    assert summary["value"].iloc[0] == pytest.approx(np.mean(expected))
    divided = without_prior(model_m)
    kept = prior > 0
    assert np.allclose(divided.values, model[:, kept] / prior[kept])
    logged = without_prior(
        ConceptFeatureMatrix(**{**model_m.__dict__, "values": np.log(model + 0.01)}), space="log"
    )
    log_prior = np.log(np.exp(np.log(model + 0.01)).mean(axis=0))
    assert np.allclose(logged.values, np.log(model + 0.01) - log_prior)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_with_weights_against_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.random(60), 1)  # ties
    labels = rng.random(60) < 0.4
    weights = rng.integers(0, 4, 60).astype(float)
    assert roc_auc(scores, labels, weights) == pytest.approx(
        roc_auc_score(labels, scores, sample_weight=weights)
    )
    said = scores >= 0.5
    assert f1(said, labels, weights) == pytest.approx(f1_score(labels, said, sample_weight=weights))
    first, second = rng.integers(0, 4, 60), rng.integers(0, 3, 60)
    assert adjusted_rand(contingency(first, second)) == pytest.approx(
        adjusted_rand_score(first, second)
    )
    x, y = rng.random(60), rng.random(60)
    repeated = np.repeat(np.arange(60), weights.astype(int))
    assert pearson(x, y, weights) == pytest.approx(np.corrcoef(x[repeated], y[repeated])[0, 1])
    t = best_threshold(scores, labels)
    assert f1_score(labels, scores >= t) == pytest.approx(
        max(f1_score(labels, scores >= c) for c in np.unique(scores))
    )
