"""The summarise step (tacit.probes.summary): a metric is one spec. Adding one to retrieval's
summary (SUMMARY) gives its mean, interval and chance level, and leaves every other column as
it was, bit for bit (one draw of units per condition serves every metric)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tacit.core.metrics import chance_hits_at_k, hits_at_k
from tacit.probes.base import Metric
from tacit.probes.retrieve.summary import SUMMARY
from tacit.probes.summary import summarise


def _rows(seed: int = 0) -> pd.DataFrame:
    """Retrieval rows of two models over 12 concepts, 1 to 3 properties, ranks drawn."""
    rng = np.random.default_rng(seed)
    records = []
    for model in ("m1", "m2"):
        for concept in range(12):
            for n in (1, 2, 3):
                rank = int(rng.integers(1, 20))
                records.append(
                    {
                        "model": model,
                        "concept": f"c{concept}",
                        "n_props": n,
                        "selection": "top",
                        "order": "decreasing",
                        "category": "all",
                        "sample": 0,
                        "rank": rank,
                        "reciprocal_rank": 1.0 / rank,
                        "target_prob": float(rng.random() / 100),
                        "target_prob_shared": float(rng.random()),
                    }
                )
    return pd.DataFrame(records)


HITS_AT_3 = Metric(
    "hits_at_3",
    "hits@3",
    True,
    "hits_at_3_ci_low",
    "hits_at_3_ci_high",
    of=lambda rows, _: hits_at_k(rows["rank"], 3),
    chance="hits_at_3_chance",
    chance_of=lambda rows, context: chance_hits_at_k(
        pd.Series(float(context["n_candidates"]), index=rows.index), 3
    ),
)


def test_a_metric_added_to_retrieval_is_one_spec():
    rows = _rows()
    context = {"n_candidates": 40}
    before = summarise(rows, SUMMARY, seed=3, n_resamples=200, context=context)
    spec = replace(SUMMARY, columns=(*SUMMARY.columns, HITS_AT_3))
    after = summarise(rows, spec, seed=3, n_resamples=200, context=context)
    added = ["hits_at_3", "hits_at_3_ci_low", "hits_at_3_ci_high", "hits_at_3_chance"]
    assert list(after.columns) == [*before.columns, *added]
    pd.testing.assert_frame_equal(after[before.columns], before)  # every other column as it was
    for (model, n), group in rows.groupby(["model", "n_props"]):
        row = after[(after["model"] == model) & (after["n_props"] == n)].iloc[0]
        share = float((group["rank"] <= 3).mean())  # computed here, not by the spec
        assert row["hits_at_3"] == pytest.approx(share)
        assert row["hits_at_3_ci_low"] <= share <= row["hits_at_3_ci_high"]
        assert row["hits_at_3_chance"] == pytest.approx(3 / 40)


def test_a_metric_left_out_leaves_the_others_intervals_bit_for_bit():
    """The intervals are drawn once per condition for all metrics: taking one out (or
    reordering them) changes none of the others."""
    rows = _rows(1)
    full = summarise(rows, SUMMARY, seed=0, n_resamples=300, context={"n_candidates": 9})
    mrr, _, p_at_1, *rest = SUMMARY.columns
    fewer = replace(SUMMARY, columns=(p_at_1, mrr))
    part = summarise(rows, fewer, seed=0, n_resamples=300, context={"n_candidates": 9})
    for column in ("mrr_ci_low", "mrr_ci_high", "p_at_1_ci_low", "p_at_1_ci_high"):
        assert part[column].to_numpy().tobytes() == full[column].to_numpy().tobytes(), column


def test_the_resamples_are_paired_across_models_and_seeded_by_the_condition():
    """Two models with the same values get the same interval; another seed another."""
    rows = _rows(2)
    rows.loc[rows["model"] == "m2", "reciprocal_rank"] = rows.loc[
        rows["model"] == "m1", "reciprocal_rank"
    ].to_numpy()
    rows.loc[rows["model"] == "m2", "rank"] = rows.loc[rows["model"] == "m1", "rank"].to_numpy()
    summary = summarise(rows, SUMMARY, seed=0, n_resamples=100)
    m1, m2 = (summary[summary["model"] == m].reset_index(drop=True) for m in ("m1", "m2"))
    assert (m1["mrr_ci_low"] == m2["mrr_ci_low"]).all()
    other = summarise(rows, SUMMARY, seed=1, n_resamples=100)
    assert not (other["mrr_ci_low"] == summary["mrr_ci_low"]).all()
