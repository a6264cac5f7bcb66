"""Summaries of retrieval runs (MRR, precision at 1, hits at 10 and mean target probabilities
by condition and number of properties, with bootstrap intervals over concepts, and what chance
scores beside each: a uniformly random ranking of the same candidates), and their printed form
(tables: tacit.core.display)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tacit.ask.base import asked_by
from tacit.ask.paraphrase import ensemble_rows
from tacit.ask.vocabulary import BOUNDED_HEADER, bounded_columns
from tacit.core.display import Table
from tacit.core.labels import short_labels
from tacit.probes.report import CHANCE as CHANCE_ROW
from tacit.probes.report import with_chance
from tacit.probes.retrieve.metrics import (
    HITS_AT_10,
    HITS_K,
    MRR,
    P_AT_1,
    TARGET_PROB,
    TARGET_PROB_SHARED,
)
from tacit.probes.summary import Stat, Summary, count, summarise

RETRIEVAL_GROUPS = ["model", "selection", "order", "category", "n_props"]
CONDITION = ["selection", "order", "category"]


def _sample_sd(rows: pd.DataFrame, _: Any) -> float:
    """For a condition with several random samples, the standard deviation of their MRRs."""
    if rows["sample"].nunique() < 2:
        return np.nan
    return float(rows.groupby("sample")["reciprocal_rank"].mean().std(ddof=1))


def _in_order(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Models in the order of first appearance (--model's), then by condition."""
    model_order = {name: i for i, name in enumerate(dict.fromkeys(rows["model"]))}
    return summary.sort_values(
        RETRIEVAL_GROUPS, key=lambda col: col.map(model_order) if col.name == "model" else col
    ).reset_index(drop=True)


# the summary: MRR, P@1, hits@10 and the target's mean probabilities by model, condition and
# number of properties, each interval over concepts (a concept's prompts averaged first, so
# a random baseline's samples count as one concept), seeded by the condition
SUMMARY = Summary(
    tuple(RETRIEVAL_GROUPS),
    (MRR, Stat("mrr_sample_sd", _sample_sd), P_AT_1, HITS_AT_10, TARGET_PROB, TARGET_PROB_SHARED),
    counts=(count("n_prompts"), count("n_concepts", "concept"), count("n_samples", "sample")),
    means="units",
    order=_in_order,
)
# each metric with a chance level -> its chance column
CHANCE = {m.column: m.chance for m in SUMMARY.metrics if m.chance is not None}


def summarize_retrieval(
    prompts: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    n_candidates: int | None = None,
) -> pd.DataFrame:
    """The summary by model x selection x order x category x n_props (SUMMARY), model order
    that of --model; each mean with a percentile bootstrap interval over concepts, seeded by
    `seed` and the condition (not the model: paired across models), and its chance level
    over the prompt's N candidates (`n_candidates` in the rows, else `n_candidates`: the
    shared vocabulary's size; None: NaN). With several templates, a row per template and one
    for their ensemble, which carries the spread and consistency (tacit.ask.paraphrase)."""
    return summarise(
        prompts,
        SUMMARY,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        context={"n_candidates": n_candidates},
    )


def condition_labels(summary: pd.DataFrame) -> pd.Series:
    """Each row's condition as `selection/order/category` (`top/decreasing/all`)."""
    return summary[CONDITION].astype(str).agg("/".join, axis=1)


def retrieval_table(summary: pd.DataFrame, title: str = "") -> Table:
    """Every metric by model (and condition, where there are several) and number of
    properties, MRR with its 95% interval: a row each, so that it fits a terminal."""
    table = summary.assign(condition=condition_labels(summary))
    columns = [
        "model",
        "condition",
        "n_props",
        "n_concepts",
        "mrr",
        "mrr_ci_low",
        "mrr_ci_high",
        "p_at_1",
        f"hits_at_{HITS_K}",
        "mean_target_prob",
        *bounded_columns(table),
    ]
    if table["condition"].nunique() == 1:
        columns.remove("condition")
    chance = [c for c in CHANCE.values() if c in table]  # a run saved before them: none
    headers = {
        "n_props": "props",
        "n_concepts": "concepts",
        "mrr": "MRR [95% CI]",
        "p_at_1": "P@1",
        f"hits_at_{HITS_K}": f"hits@{HITS_K}",
        "mean_target_prob": "prob",
        **BOUNDED_HEADER,
    }
    return Table(
        with_chance(table[columns + chance].reset_index(drop=True), CHANCE),
        title,
        intervals={"mrr": ("mrr_ci_low", "mrr_ci_high")},
        headers=headers,
        note=no_probability(table),
    )


WHY_NO_PROBABILITY = "why_no_probability"  # the column a figure reads the reason from


def why_no_probability(manifest: Mapping[str, Any] | None) -> dict[str, str]:
    """Per model of a run, why its scores are no probability of the concept alone, as its
    Ask says of its manifest record (Ask.no_probability); a model whose scores are
    probabilities is left out."""
    manifest = manifest or {}
    asked = asked_by(manifest)
    reasons = {}
    for record in manifest.get("models", []) if asked is not None else []:
        reason = asked.no_probability(manifest, record)
        if reason is not None:
            reasons[record["name"]] = reason
    return reasons


def no_probability(summary: pd.DataFrame) -> str:
    """Why `prob` is a dash for some models (their scores are no probability of the concept
    alone), or nothing where every model has it."""
    missing = summary.groupby("model", sort=False)["mean_target_prob"].apply(
        lambda values: values.isna().all()
    )
    if not missing.any():
        return ""
    return (
        f"prob – for {', '.join(map(str, missing[missing].index))}: no probability of the "
        "concept alone, since a decoder-only model scores the whole sentence (a seq2seq "
        "model its span's target, with both sentinels) and "
        "--normalize mean or pmi scores are no probabilities; mean_target_prob_shared in "
        "summary.csv is the target's share of the candidates"
    )


def mrr_by_condition(summary: pd.DataFrame) -> Table:
    """MRR with a row per model and condition and a column per number of properties."""
    table = summary.assign(condition=condition_labels(summary))
    order = list(dict.fromkeys(zip(table["model"], table["condition"])))
    pivot = table.pivot_table(
        index=["model", "condition"], columns="n_props", values="mrr", sort=False
    )
    pivot = pivot.reindex(pd.MultiIndex.from_tuples(order, names=["model", "condition"]))
    pivot.columns = [str(n) for n in pivot.columns]
    return Table(
        pivot.reset_index(), "MRR by condition (selection/order/category) and number of properties"
    )


def retrieval_tables(summary: pd.DataFrame, *, verbose: bool = False) -> list[Table]:
    """A run's printed summary: every metric by number of properties; for several conditions
    (an ablation) the MRR by condition, unless `verbose`. With several templates: their
    ensemble's (the templates' own are printed apart)."""
    summary = ensemble_rows(summary)
    labels = short_labels(summary["model"])
    summary = summary.assign(model=summary["model"].map(labels))
    several = summary[CONDITION].drop_duplicates().shape[0] > 1
    if several and not verbose:
        table = mrr_by_condition(summary)
        table.note = (
            "P@1, hits@10 and mean target probabilities by condition: summary.csv "
            "(--verbose prints them)"
        )
        return [table]
    samples = int(summary["n_samples"].max())
    title = "Concept retrieval by number of properties (props; P@1: target ranked first"
    title += f"; hits@{HITS_K}: among the first {HITS_K}; prob: mean target probability;"
    title += f" {CHANCE_ROW}: a uniformly random ranking of the candidates)"
    if samples > 1:
        title += f"; {samples} random samples per concept in the random baseline"
    return [retrieval_table(summary, title)]
