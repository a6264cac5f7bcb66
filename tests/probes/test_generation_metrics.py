"""The metrics of probing by generation (issue 46), checked against a plain computation from a
small raw answers table written out here as answers.csv holds it, not by the helpers that
build one: retrieval's ranks from a list and from votes (tacit.ranking.generated), read by
retrieval's own summary, and the norming task's recall, precision, rho and novel answers
(tacit.probes.elicit.generated)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from tacit.core.errors import TacitError
from tacit.probes.elicit.generated import score_feature_lists, summarize_feature_lists
from tacit.probes.retrieve.summary import summarize_retrieval
from tacit.ranking.generated import rank_generated

KEYS = ["concept", "n_props", "selection", "order", "category", "sample"]
CONDITION = {"selection": "top", "order": "decreasing", "category": "all", "sample": 0}
ANSWER = ["draw", "position", "completion", "finish_reason", "answer", "normal", "matched", "rule"]


def answers_table(rows: list[tuple]) -> pd.DataFrame:
    """Raw answer rows: (concept, n_props, draw, position, answer, normal, matched, rule,
    status), the completion and finish reason left as answers.csv would hold them."""
    records = []
    for concept, n_props, draw, position, answer, normal, matched, rule, status in rows:
        records.append(
            {
                "concept": concept,
                "n_props": n_props,
                **CONDITION,
                "draw": draw,
                "position": position,
                "completion": "(raw text)",
                "finish_reason": "length" if status == "truncated" else "stop",
                "answer": answer,
                "normal": normal,
                "matched": matched,
                "rule": rule,
                "status": status,
            }
        )
    return pd.DataFrame.from_records(records)


# one completion per prompt, a ranked list each
LISTS = answers_table(
    [
        ("bear", 1, 0, 1, "wolf", "wolf", "", "", "ok"),
        ("bear", 1, 0, 2, "Bears", "bear", "bear", "exact", "ok"),
        ("bear", 2, 0, 1, "a big bear", "big bear", "bear", "head", "ok"),
        ("bear", 2, 0, 1, "bear", "bear", "bear", "exact", "duplicate"),
        ("mouse", 1, 0, 1, "rat", "rat", "rat", "exact", "ok"),
        ("mouse", 1, 0, 1, "Rats", "rat", "rat", "exact", "duplicate"),
        ("mouse", 1, 0, 2, "hamster", "hamster", "hamster", "exact", "ok"),
        ("mouse", 1, 0, 3, "mice", "mouse", "mouse", "exact", "ok"),  # beyond K = 2
        ("goose", 1, 0, 0, "", "", "", "", "refusal"),
        ("bat_(animal)", 1, 0, 1, "a bat", "bat", "bat_(animal) | bat_(sporting)", "exact", "ok"),
        ("ox", 1, 0, 1, "cow", "cow", "cow", "exact", "ok"),
        ("ox", 1, 0, 2, "o", "o", "", "", "truncated"),
        ("aardvark", 1, 0, 0, "", "", "", "", "empty"),
    ]
)
PROMPTS = pd.DataFrame(
    [
        {"concept": c, "n_props": n, **CONDITION, "prompt": f"{c}?", "target": c}
        for c, n in [
            ("bear", 1),
            ("bear", 2),
            ("mouse", 1),
            ("goose", 1),
            ("bat_(animal)", 1),
            ("ox", 1),
            ("aardvark", 1),
        ]
    ]
)


def plain_list_rank(answers: pd.DataFrame, concept: str, n_props: int, k: int) -> float:
    """The first `ok` answer naming the concept, its position if at most k; else NaN."""
    for row in answers.itertuples():
        if (row.concept, row.n_props) != (concept, n_props) or row.status != "ok":
            continue
        if concept in row.matched.split(" | "):
            return float(row.position) if row.position <= k else math.nan
    return math.nan


def test_list_ranks_against_a_plain_computation() -> None:
    ranked = rank_generated(PROMPTS, LISTS, KEYS, k=2)
    expected = [
        plain_list_rank(LISTS, c, n, 2) for c, n in zip(PROMPTS["concept"], PROMPTS["n_props"])
    ]
    assert ranked["rank"].tolist() == pytest.approx(expected, nan_ok=True)
    nan = math.nan  # mouse beyond K, a refusal, a truncated guess, an empty completion
    assert expected == pytest.approx([2.0, 1.0, nan, nan, 1.0, nan, nan], nan_ok=True)
    reciprocal = [0.0 if math.isnan(r) else 1 / r for r in expected]
    assert ranked["reciprocal_rank"].tolist() == pytest.approx(reciprocal)
    assert ranked["status"].tolist() == ["ok", "ok", "ok", "refusal", "ok", "ok", "empty"]
    assert ranked["target_rule"].tolist() == ["exact", "head", "", "", "exact", "", ""]
    assert ranked["n_truncated"].tolist() == [0, 0, 0, 0, 0, 1, 0]
    assert ranked.loc[2, "top5"] == "rat | hamster | mice"
    # without K, the mouse at position 3 has its rank
    assert rank_generated(PROMPTS, LISTS, KEYS).loc[2, "rank"] == 3


def test_retrieval_summary_reads_generated_rows() -> None:
    """retrieval's summary reads the rows unchanged: MRR, P@1 and hits@10 equal the plain
    means, a miss counting 0, and no chance level (no fixed candidates)."""
    ranked = rank_generated(PROMPTS, LISTS, KEYS, k=2).assign(model="m")
    summary = summarize_retrieval(ranked, n_resamples=50)
    ranks = [
        plain_list_rank(LISTS, c, n, 2) for c, n in zip(PROMPTS["concept"], PROMPTS["n_props"])
    ]
    for n_props in (1, 2):
        row = summary[summary["n_props"] == n_props].iloc[0]
        mine = [r for r, n in zip(ranks, PROMPTS["n_props"]) if n == n_props]
        assert row["mrr"] == pytest.approx(np.mean([0 if math.isnan(r) else 1 / r for r in mine]))
        assert row["p_at_1"] == pytest.approx(np.mean([r == 1 for r in mine]))
        assert row["hits_at_10"] == pytest.approx(np.mean([r <= 10 for r in mine]))
        assert math.isnan(row["mrr_chance"])
    assert summary.loc[summary["n_props"] == 1, "mrr"].item() == pytest.approx(
        (0.5 + 0 + 0 + 1 + 0 + 0) / 6
    )


# five draws per prompt, one guess each (the first `ok` answer of a draw)
VOTES = answers_table(
    [
        *[("bear", 1, d, 1, "wolf", "wolf", "", "", "ok") for d in (0, 2)],
        *[("bear", 1, d, 1, "bear", "bear", "bear", "exact", "ok") for d in (1, 3, 4)],
        ("bear", 1, 1, 2, "wolf", "wolf", "", "", "ok"),  # a second answer in a draw: no vote
        # a tie: fox and mouse named twice each, fox by an earlier draw
        ("mouse", 1, 0, 1, "fox", "fox", "fox", "exact", "ok"),
        ("mouse", 1, 1, 1, "mice", "mouse", "mouse", "exact", "ok"),
        ("mouse", 1, 2, 1, "a fox", "fox", "fox", "exact", "ok"),
        ("mouse", 1, 3, 1, "mouse", "mouse", "mouse", "exact", "ok"),
        ("mouse", 1, 4, 0, "", "", "", "", "refusal"),
        *[("goose", 1, d, 0, "", "", "", "", "refusal") for d in range(5)],
    ]
)


def plain_vote_rank(answers: pd.DataFrame, concept: str) -> float:
    """Votes per answer (its match, else its normal form; each draw's first ok answer), most
    first, ties by the earlier first draw; the target's place, or NaN."""
    votes: dict[str, int] = {}
    first: dict[str, int] = {}
    for draw in sorted(set(answers.loc[answers["concept"] == concept, "draw"])):
        rows = answers[(answers["concept"] == concept) & (answers["draw"] == draw)]
        rows = rows[rows["status"] == "ok"].sort_values("position")
        if len(rows):
            said = rows.iloc[0]["matched"] or rows.iloc[0]["normal"]
            votes[said] = votes.get(said, 0) + 1
            first.setdefault(said, draw)
    order = sorted(votes, key=lambda a: (-votes[a], first[a]))
    return float(order.index(concept) + 1) if concept in order else math.nan


def test_vote_ranks_against_a_plain_computation() -> None:
    prompts = PROMPTS[PROMPTS["n_props"] == 1].iloc[[0, 1, 2]]
    ranked = rank_generated(prompts, VOTES, KEYS, way="votes")
    expected = [plain_vote_rank(VOTES, c) for c in prompts["concept"]]
    assert ranked["rank"].tolist() == pytest.approx(expected, nan_ok=True)
    assert ranked["rank"].tolist()[:2] == [1.0, 2.0]  # bear 3 of 5; mouse tied with fox, later
    assert ranked["top5"].tolist()[:2] == ["bear:3 | wolf:2", "fox:2 | mouse:2"]
    assert ranked["n_refusal"].tolist() == [0, 1, 5]
    assert ranked["n_draws"].tolist() == [5, 5, 5]


def test_a_list_is_one_completion() -> None:
    with pytest.raises(TacitError, match="5 completions of one prompt .* a ranked list"):
        rank_generated(PROMPTS.iloc[:1], VOTES, KEYS, way="list")


def test_keys_must_tell_prompts_apart() -> None:
    with pytest.raises(ValueError, match=r"do not tell the prompts apart: \['bear'\] repeats"):
        rank_generated(PROMPTS, LISTS, ["concept"])


# the norming task: a bear's `has` features and three draws of a model listing them
FEATURES = pd.DataFrame(
    [
        ("bear", "has", "has fur_hair", 20),
        ("bear", "has", "has claws", 15),
        ("bear", "has", "has four legs", 10),
        ("bear", "has", "has a tail", 2),
        ("bear", "is", "is big", 18),
        ("bear", "is", "is brown", 9),
        ("goose", "has", "has feathers", 12),
        ("goose", "has", "has a beak", 8),
    ],
    columns=["concept", "relation", "feature", "pf"],
)
LISTING = pd.DataFrame.from_records(
    [
        dict(zip(["concept", "relation", *ANSWER, "status"], row))
        for row in [
            ("bear", "has", 0, 1, "raw", "stop", "fur", "fur", "has fur_hair", "exact", "ok"),
            ("bear", "has", 0, 2, "raw", "stop", "claws", "claw", "has claws", "exact", "ok"),
            ("bear", "has", 0, 3, "raw", "stop", "paws", "paw", "", "", "ok"),
            ("bear", "has", 0, 3, "raw", "stop", "Paws", "paw", "", "", "duplicate"),
            (
                "bear",
                "has",
                1,
                1,
                "raw",
                "stop",
                "thick fur",
                "thick fur",
                "has fur_hair",
                "head",
                "ok",
            ),
            ("bear", "has", 1, 2, "raw", "stop", "hair", "hair", "has fur_hair", "exact", "ok"),
            ("bear", "has", 1, 3, "raw", "stop", "paws", "paw", "", "", "ok"),
            ("bear", "has", 1, 4, "raw", "length", "a sno", "sno", "", "", "truncated"),
            ("bear", "has", 2, 0, "raw", "stop", "", "", "", "", "refusal"),
            ("bear", "is", 0, 1, "raw", "stop", "big", "big", "is big", "exact", "ok"),
            ("bear", "is", 0, 2, "raw", "stop", "brown", "brown", "is brown", "exact", "ok"),
            ("bear", "is", 1, 1, "raw", "stop", "big", "big", "is big", "exact", "ok"),
            ("goose", "has", 0, 0, "raw", "stop", "", "", "", "", "empty"),
        ]
    ]
)
LISTING_PROMPTS = pd.DataFrame(
    {"concept": ["bear", "bear", "goose"], "relation": ["has", "is", "has"], "model": "m"}
)


def plain_listing(concept: str, relation: str) -> dict[str, float]:
    """The norming metrics of one concept and relation, written out."""
    rows = LISTING[(LISTING["concept"] == concept) & (LISTING["relation"] == relation)]
    ok = rows[rows["status"] == "ok"]
    people = FEATURES[(FEATURES["concept"] == concept) & (FEATURES["relation"] == relation)]
    draws_of = {f: set() for f in people["feature"]}
    for row in ok.itertuples():
        if row.matched:
            draws_of[row.matched].add(row.draw)
    counts = [len(draws_of[f]) for f in people["feature"]]
    pfs = list(people["pf"])
    listed = [c > 0 for c in counts]
    distinct = {}
    for row in ok.itertuples():
        distinct.setdefault(row.normal, row.matched)
    constant = len(set(counts)) < 2 or len(set(pfs)) < 2
    return {
        "recall_pf": sum(p for p, on in zip(pfs, listed) if on) / sum(pfs),
        "recall": sum(listed) / len(pfs),
        "precision": (sum(1 for m in distinct.values() if m) / len(distinct))
        if distinct
        else math.nan,
        "spearman": math.nan if constant else spearmanr(counts, pfs).statistic,
        "n_novel": sum(1 for m in distinct.values() if not m),
    }


def test_feature_listing_against_a_plain_computation() -> None:
    scored = score_feature_lists(LISTING_PROMPTS, LISTING, FEATURES, ["concept", "relation"])
    for i, (concept, relation) in enumerate(
        zip(LISTING_PROMPTS["concept"], LISTING_PROMPTS["relation"])
    ):
        expected = plain_listing(concept, relation)
        for column, value in expected.items():
            assert scored.loc[i, column] == pytest.approx(value, nan_ok=True), (
                concept,
                relation,
                column,
            )
    bear = scored.iloc[0]
    # by hand: fur (20) and claws (15) of 47; 2 of 4 features; thick fur, fur, hair, claw
    # matched, paw not: 4 of 5 distinct
    assert bear["recall_pf"] == pytest.approx(35 / 47)
    assert bear["recall"] == 0.5
    assert bear["precision"] == pytest.approx(4 / 5)
    assert bear["spearman"] == pytest.approx(0.9486833)  # (2, 1, 0, 0) against (20, 15, 10, 2)
    assert bear["novel"] == "paws:2"
    assert bear["listed"] == "has fur_hair:2 | has claws:1"
    assert (bear["n_draws"], bear["n_refusal"], bear["n_truncated"], bear["n_answers"]) == (
        3,
        1,
        1,
        6,
    )
    goose = scored.iloc[2]
    assert goose["recall"] == 0 and math.isnan(goose["precision"]) and math.isnan(goose["spearman"])
    assert goose["n_empty"] == 1


def test_feature_listing_summary() -> None:
    scored = score_feature_lists(LISTING_PROMPTS, LISTING, FEATURES, ["concept", "relation"])
    summary = summarize_feature_lists(scored, n_resamples=50)
    assert summary["relation"].tolist() == ["has", "is", "all"]
    has = summary.iloc[0]
    assert has["recall_pf"] == pytest.approx((35 / 47 + 0) / 2)
    assert has["n_precision"] == 1 and has["precision"] == pytest.approx(4 / 5)
    assert has["n_concepts"] == 2 and has["spearman_chance"] == 0.0
    assert (has["n_refusal"], has["n_empty"], has["n_novel"]) == (1, 1, 1)
    assert has["recall_pf_ci_low"] <= has["recall_pf"] <= has["recall_pf_ci_high"]
    everything = summary.iloc[2]
    assert everything["n_prompts"] == 3


def test_a_listing_of_every_relation() -> None:
    """A prompt of relation `all` is scored against every feature of its concept given."""
    listing = LISTING[LISTING["concept"] == "bear"].assign(relation="all")
    listing = listing.assign(
        draw=listing["draw"] + 10 * (LISTING.loc[listing.index, "relation"] == "is")
    )
    prompts = pd.DataFrame({"concept": ["bear"], "relation": ["all"], "model": "m"})
    scored = score_feature_lists(prompts, listing, FEATURES, ["concept", "relation"])
    bear = FEATURES[FEATURES["concept"] == "bear"]
    listed = {"has fur_hair", "has claws", "is big", "is brown"}
    expected = bear.loc[bear["feature"].isin(listed), "pf"].sum() / bear["pf"].sum()
    assert scored.loc[0, "recall_pf"] == pytest.approx(expected)  # (20 + 15 + 18 + 9) / 74
    assert scored.loc[0, "n_features"] == 6 and scored.loc[0, "recall"] == pytest.approx(4 / 6)
