"""Tolerant subsets (issue 47): a concept of `--concepts` that cannot be asked (no answer to the
relation, not a retrieval target) is dropped and counted with its reason, as `--limit` drops
concepts; the run fails only when nothing is left, saying which relation was asked, and before
any model or tokenizer loads. A name the norms do not hold stays an error for both probes (a
typo, not a subset)."""

from __future__ import annotations

import pandas as pd
import pytest
from support import fails_cleanly

import tacit
from tacit.core.errors import TacitError


def test_elicitation_drops_a_concept_without_an_answer(tiny_bert, toy_norms_path, tmp_path):
    result = tacit.elicit(
        [tiny_bert],
        norms=toy_norms_path,
        relations=["has"],
        concepts=["bear", "knife", "apple", "cat"],
        quiet=True,
    )
    assert set(result.prompts["concept"]) == {"bear", "cat"}
    dropped = result.dropped
    assert list(dropped.columns) == ["concept", "relation", "reason"]
    assert sorted(dropped["concept"]) == ["apple", "knife"]
    assert set(dropped["relation"]) == {"has"}
    assert set(dropped["reason"]) == {"no answer to the relation in the norms"}
    counts = result.manifest["counts"]
    assert counts["concepts_dropped_by_reason"] == {
        "has: no answer to the relation in the norms": 2
    }
    assert "has: 2 concepts asked, 2 left out (no answer to the relation in the norms: 2)" in (
        result.text
    )
    saved = result.save(tmp_path / "run")
    pd.testing.assert_frame_equal(pd.read_csv(saved / "dropped.csv"), dropped)


def test_elicitation_counts_the_limit_beside_the_other_drops(tiny_bert, toy_norms_path):
    result = tacit.elicit(
        [tiny_bert],
        norms=toy_norms_path,
        relations=["has"],
        concepts=["bear", "knife", "cat"],
        limit=1,
        limit_by="first",
        quiet=True,
    )
    reasons = dict(zip(result.dropped["concept"], result.dropped["reason"]))
    assert reasons == {
        "knife": "no answer to the relation in the norms",
        "cat": "left out by the limit (kept the first 1 concepts)",
    }


def test_nothing_left_names_the_relation_before_anything_loads(toy_norms_path, tmp_path):
    missing = tmp_path / "no-model"  # a tokenizer or model load would fail on it first
    with pytest.raises(TacitError) as error:
        tacit.elicit(
            [str(missing)],
            norms=toy_norms_path,
            relations=["has"],
            concepts=["knife", "apple"],
            quiet=True,
        )
    said = str(error.value)
    assert "any relation" not in said
    assert "no concept is left to ask about has" in said
    assert "no answer to the relation in the norms: apple, knife" in said
    line = fails_cleanly(
        [
            "elicit",
            "-m",
            missing,
            "--norms",
            toy_norms_path,
            "--relation",
            "has",
            "--concepts",
            "knife",
            "--out",
            tmp_path / "out",
        ],
        "--concepts: no concept is left to ask about has",
        tmp_path / "out",
    )
    assert "no such directory" not in line


def test_an_unknown_name_is_an_error_in_both_probes(tiny_bert, toy_norms_path):
    for probe in (tacit.retrieve, tacit.elicit):
        with pytest.raises(TacitError, match="^concepts: not in the norms: unicorn"):
            probe([tiny_bert], norms=toy_norms_path, concepts=["bear", "unicorn"], quiet=True)


def test_retrieval_drops_concepts_that_cannot_be_targets(tiny_bert, toy_norms_path):
    result = tacit.retrieve(
        [tiny_bert],
        norms=toy_norms_path,
        concepts=["bear", "apple", "bat_(animal)"],
        max_props=1,
        quiet=True,
    )
    assert set(result.prompts["concept"]) == {"bear"}
    assert dict(zip(result.dropped["concept"], result.dropped["reason"])) == {
        "apple": "vowel-initial (a/an)",
        "bat_(animal)": "sense label",
    }
    assert result.manifest["counts"]["concepts_dropped_by_reason"] == {
        "vowel-initial (a/an)": 1,
        "sense label": 1,
    }
    assert "concepts: 1 kept, 2 dropped" in result.text


def test_retrieval_with_nothing_left_fails_before_anything_loads(toy_norms_path, tmp_path):
    with pytest.raises(TacitError) as error:
        tacit.retrieve(
            [str(tmp_path / "no-model")],
            norms=toy_norms_path,
            concepts=["apple", "bat_(animal)"],
            quiet=True,
        )
    said = str(error.value)
    assert said.startswith("concepts: no concept is left to retrieve: ")
    assert "vowel-initial (a/an): apple" in said and "sense label: bat_(animal)" in said
