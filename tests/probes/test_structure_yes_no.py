"""`probe structure --by generation --verification yes-no`: each verification item asked yes or
no, every number recomputed from the written rows with scikit-learn and numpy."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from support import Scripted, write_norms

import tacit
from tacit.structure import from_norms, verification_items

DRAWS = {"resamples": 50, "permutations": 50}
# two categories of three concepts; each concept has two of its category's three features
HAS = {0: ["f0", "f1"], 1: ["f1", "f2"], 2: ["f0", "f2"], 3: ["f3", "f4"], 4: ["f4", "f5"]}
HAS[5] = ["f3", "f5"]
# what the model says of each statement, a reply per draw
SAID = {True: ["Yes.", "Yes, it does.", "No."], False: ["No.", "1. No", "Yes"]}
UNREADABLE = ("c1", "f1")  # three replies that are no verdict: the item is left out


@pytest.fixture()
def norms_and_categories(tmp_path):
    rows = [(f"c{c}", "encyclopaedic", f"has {f}", 5) for c, fs in HAS.items() for f in fs]
    norms = write_norms(tmp_path / "norms.dat", rows)
    categories = tmp_path / "concepts.csv"
    categories.write_text("concept,category\n" + "".join(f"c{c},g{c // 3}\n" for c in HAS))
    return norms, categories


def scripted() -> Scripted:
    script: dict[str, str | list[str]] = {}
    for c, features in HAS.items():
        for f in range(6):
            replies = SAID[f"f{f}" in features]
            if (f"c{c}", f"f{f}") == UNREADABLE:
                replies = ["Perhaps.", "I cannot say.", ""]
            script[f"that a c{c} has f{f}?"] = replies
    return Scripted(script)


def test_yes_no_answers_are_verified_and_calibrated(norms_and_categories, tmp_path):
    norms, categories = norms_and_categories
    model = scripted()
    found = tacit.concept_structure(
        [model],
        norms=str(norms),
        categories=str(categories),
        by="generation",
        verification="yes-no",
        samples=3,
        temperature=1.0,
        seed=3,
        quiet=True,
        **DRAWS,
    )
    out = found.save(tmp_path / "run")
    rows = pd.read_csv(out / "prompts.csv")
    # the items are verification_items' of people's matrix, asked in tacit's words
    reference = from_norms(tacit.load_norms(str(norms)), categories=str(categories))
    items, _ = verification_items(reference, seed=3)
    assert len(model.asked) == len(items)
    assert "Is it true that a c0 has f0? Answer yes or no." in model.asked
    assert len(rows) == len(items)  # every item asked is a row, with what was said
    unread = rows.set_index(["concept", "feature"]).loc[("c1", "has f1")]
    assert unread["n_unreadable"] == 3 and np.isnan(unread["p_yes"])
    rows = rows[rows["p_yes"].notna()]  # the items verified
    kept = rows.set_index(["concept", "feature"])
    # each draw's verdict: the first answer's first word (`1. No` is no)
    assert kept.loc[("c0", "has f0"), "said"] == "yes,yes,no"
    assert kept.loc[("c0", "has f2"), "said"] == "no,no,yes"
    assert kept["p_yes"].to_numpy() == pytest.approx(kept["n_yes"] / (kept["n_yes"] + kept["n_no"]))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["yes_no"]["left_out_by_model"]["scripted"] == {
        "items with no readable yes or no": ["c1: has f1"]
    }
    assert manifest["generation"]["questions"]["verify"].startswith("Is it true that")
    summary = pd.read_csv(out / "summary.csv").iloc[0]
    assert summary["n_items"] == len(kept) and summary["n_items_left_out"] == 1
    table = pd.read_csv(out / "verification.csv").set_index(["negatives", "metric"])
    bins = pd.read_csv(out / "calibration.csv")
    for kind in ("own category", "other categories"):
        mine = rows[(rows["negatives"] == kind) | (rows["label"] == 1)]
        y, p = mine["label"].to_numpy(), mine["p_yes"].to_numpy()
        assert table.loc[(kind, "auc"), "value"] == pytest.approx(roc_auc_score(y, p))
        assert table.loc[(kind, "brier"), "value"] == pytest.approx(np.mean((p - y) ** 2))
        which = np.minimum((p * 10).astype(int), 9)
        ece = sum(
            abs(y[which == b].mean() - p[which == b].mean()) * (which == b).sum()
            for b in range(10)
            if (which == b).any()
        ) / len(p)
        assert table.loc[(kind, "ece"), "value"] == pytest.approx(ece)
        counted = bins[bins["negatives"] == kind].set_index("bin")["n_items"]
        assert counted.to_dict() == {b: int((which == b).sum()) for b in range(10)}
        # shuffled answers tell nothing: chance's AUC is about a half
        assert abs(table.loc[(kind, "auc"), "chance"] - 0.5) < 0.1
        low, high = table.loc[(kind, "auc"), ["ci_low", "ci_high"]]
        assert low <= table.loc[(kind, "auc"), "value"] <= high
    key = "auc_other_categories"
    assert summary[key] == pytest.approx(table.loc[("other categories", "auc"), "value"])
    assert {"verification.png", "reliability.png"} <= {p.name for p in out.iterdir()}
    assert "rsa" not in found.summary  # no matrix: no RSA
    board = tacit.leaderboard(out)
    assert board["value"].iloc[0] == pytest.approx(summary[key])


def test_a_model_with_no_verdict_is_left_out(norms_and_categories):
    from tacit.core.errors import TacitError, TacitWarning

    norms, categories = norms_and_categories
    mute = Scripted({}, default="Purple.")
    mute.name = "mute"
    given = dict(norms=str(norms), categories=str(categories), by="generation")
    given |= dict(verification="yes-no", quiet=True, **DRAWS)
    with pytest.warns(TacitWarning, match="mute: no item had a readable yes or no"):
        found = tacit.concept_structure([scripted(), mute], **given)
    assert found.summary.set_index("model").loc["mute", "n_concepts"] == 0
    with pytest.raises(TacitError, match="mute: no item had a readable yes or no"):
        tacit.concept_structure([mute], **given)


def test_two_models_yes_no_are_compared_by_a_paired_bootstrap(norms_and_categories, tmp_path):
    """`probe compare` pairs two models' AUC on the items both answered: each draw weights
    every concept by how often it was drawn, as a loop with scikit-learn computes it."""
    norms, categories = norms_and_categories
    other = scripted()
    other.name = "other"
    for key in list(other.script)[::4]:  # a model wrong on a quarter of the items
        other.script[key] = ["Yes."] * 3 if "No." in other.script[key] else ["No."] * 3
    found = tacit.concept_structure(
        [scripted(), other],
        norms=str(norms),
        categories=str(categories),
        by="generation",
        verification="yes-no",
        samples=3,
        temperature=1.0,
        quiet=True,
        **DRAWS,
    )
    out = found.save(tmp_path / "run")
    table = tacit.compare([out], n_resamples=200, seed=5)
    assert len(table) == 1 and table["test"].iloc[0] == "paired bootstrap"
    row = table.iloc[0]
    summary = pd.read_csv(out / "summary.csv").set_index("model")["auc_other_categories"]
    assert row["value_a"] == pytest.approx(summary["scripted"])
    assert row["value_b"] == pytest.approx(summary["other"])
    rows = pd.read_csv(out / "prompts.csv")
    rows = rows[(rows["negatives"] == "other categories") | (rows["label"] == 1)]
    wide = rows.pivot_table(index=["concept", "feature", "label"], columns="model", values="p_yes")
    wide = wide.dropna().reset_index()
    concepts = list(dict.fromkeys(wide["concept"]))
    picks = np.random.default_rng(5).integers(0, len(concepts), size=(200, len(concepts)))
    counts = [np.bincount(p, minlength=len(concepts)) for p in picks]
    index = wide["concept"].map({c: i for i, c in enumerate(concepts)}).to_numpy()
    drawn = []
    for weights in counts:
        w = weights[index]
        auc = [
            roc_auc_score(wide["label"], wide[m], sample_weight=w) for m in ("scripted", "other")
        ]
        drawn.append(auc[0] - auc[1])
    low, high = np.percentile(drawn, [2.5, 97.5])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    below, above = np.mean(np.array(drawn) <= 0), np.mean(np.array(drawn) >= 0)
    assert row["p_value"] == pytest.approx(min(1.0, 2 * min(below, above)))


def test_a_concepts_items_do_not_depend_on_the_others_asked(norms_and_categories):
    """Items are drawn over every concept of the norms, so two concepts asked alone get the
    items, own-category negatives included, that a run of all of them gives them."""
    norms, categories = norms_and_categories
    given = dict(norms=str(norms), categories=str(categories), by="generation")
    given |= dict(verification="yes-no", quiet=True, seed=2, **DRAWS)
    everyone = tacit.concept_structure([scripted()], **given).prompts
    two = tacit.concept_structure([scripted()], concepts=["c0", "c4"], **given).prompts
    keys = ["concept", "feature", "label", "negatives"]
    expected = everyone[everyone["concept"].isin(["c0", "c4"])][keys].reset_index(drop=True)
    pd.testing.assert_frame_equal(two[keys].reset_index(drop=True), expected)
    assert "own category" in set(two["negatives"])
