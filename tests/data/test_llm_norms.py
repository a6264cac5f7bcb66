"""gpt-3.5-turbo's published feature listings (Hansen & Hebart 2022, ../shared/data/llm-norms)
read as recorded answers and scored as a free listing against CSLB (issue 60): the counts
docs/probes/generation.md shows, pinned on the real file."""

from __future__ import annotations

import pytest
from support import REAL_NORMS, SHARED_DATA

import tacit
from tacit.models.recorded_answers import read_recorded
from tacit.probes.elicit.free_listing import listing_matchers

RAW = SHARED_DATA / "llm-norms" / "chatgpt-gpt3.5-turbo" / "raw_answers.csv"
needs_llm_norms = pytest.mark.skipif(
    not RAW.is_file() or not REAL_NORMS.is_file(),
    reason=f"../shared/data (gpt-3.5-turbo's listings, CSLB's norms) not found at {SHARED_DATA}",
)


@needs_llm_norms
def test_every_row_of_the_released_file_is_read():
    """2,471 rows, one with unescaped quotes (line 2101) read whole; 1,854 concept ids; the
    completions cut at the API's 70 tokens read as cut (no sentence end)."""
    recorded = read_recorded(str(RAW), "gpt-3.5-turbo")
    record = recorded.record()
    assert record["rows"] == record["completions"] == 2471
    assert record["lines_repaired"] == [2101] and record["rows_left_out"] == {}
    assert record["keys_recorded"] == 1854
    assert record["finish_reasons_inferred"] == {"length": 2019, "stop": 452}
    cauliflower = recorded.answers({"concept": "cauliflower"})
    assert (
        cauliflower is not None and 'it has a head or "curd", it has leaves' in cauliflower[1].text
    )
    assert len(record["texts_of_several_concepts"]) == 27  # bat1/bat2, chicken1/chicken2, ...


@pytest.mark.slow
@needs_llm_norms
def test_the_free_listing_of_gpt35_against_cslb():
    result = tacit.elicit(
        [f"gpt-3.5-turbo,recorded={RAW}"],
        norms=REAL_NORMS,
        by="generation",
        relations=["all"],
        questions="hansen-hebart",
        quiet=True,
    )
    record = result.manifest["models"][0]["recorded"]
    assert (record["requests_answered"], record["requests_without_answers"]) == (443, 195)
    answers = result.extra["answers"]
    assert answers.drop_duplicates(["concept", "draw"]).shape[0] == 603
    assert answers["status"].value_counts().to_dict() == {
        "ok": 5903,
        "truncated": 515,
        "refusal": 1,
    }
    ok = answers[answers["status"] == "ok"]
    assert ok["rule"].value_counts().to_dict() == {"exact": 2708, "": 2400, "head": 795}
    matchers = listing_matchers(tacit.load_norms(REAL_NORMS), sorted(set(ok["concept"])))
    unmatched = ok[ok["matched"] == ""]
    why = [
        matchers[(c, "all")].why_unmatched(a) for c, a in zip(unmatched.concept, unmatched.answer)
    ]
    assert {w: why.count(w) for w in set(why)} == {
        "other words": 1497,
        "not the head": 860,
        "negated": 29,
        "another relation": 14,
    }
    summary = result.summary.set_index("relation")
    assert summary.loc["all", "n_prompts"] == 443
    assert summary.loc["all", ["recall_pf", "recall", "precision"]].round(3).tolist() == [
        0.346,
        0.197,
        0.578,
    ]
    assert summary.loc["has", ["recall_pf", "precision"]].round(3).tolist() == [0.382, 0.815]
    assert summary.loc["is", ["recall_pf", "precision"]].round(3).tolist() == [0.254, 0.477]
