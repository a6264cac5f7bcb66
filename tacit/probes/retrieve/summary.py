"""Summaries of retrieval runs (MRR, precision at 1, hits at 10 and mean target probabilities
by condition and number of properties, with bootstrap intervals over concepts, and what chance
scores beside each: a uniformly random ranking of the same candidates), and their printed form
(tables: tacit.core.display)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tacit.ask.paraphrase import TEMPLATE, ensemble_rows, paraphrase_columns, paraphrased
from tacit.ask.suffix_top import BOUNDED_HEADER, bounded_columns, bounded_sum
from tacit.core.display import Table
from tacit.core.labels import short_labels
from tacit.core.metrics import chance_hits_at_k, chance_reciprocal_rank, hits_at_k
from tacit.core.stats import bootstrap_mean_ci
from tacit.probes.report import CHANCE as CHANCE_ROW
from tacit.probes.report import with_chance

HITS_K = 10  # hits@k: the target among the first k
RETRIEVAL_GROUPS = ["model", "selection", "order", "category", "n_props"]
CONDITION = ["selection", "order", "category"]
RETRIEVAL_SUMMARY_COLUMNS = [
    *RETRIEVAL_GROUPS,
    "n_prompts",
    "n_concepts",
    "n_samples",
    "mrr",
    "mrr_ci_low",
    "mrr_ci_high",
    "mrr_chance",
    "mrr_sample_sd",
    "p_at_1",
    "p_at_1_ci_low",
    "p_at_1_ci_high",
    "p_at_1_chance",
    f"hits_at_{HITS_K}",
    f"hits_at_{HITS_K}_ci_low",
    f"hits_at_{HITS_K}_ci_high",
    f"hits_at_{HITS_K}_chance",
    "mean_target_prob",
    "target_prob_ci_low",
    "target_prob_ci_high",
    "mean_target_prob_shared",
]
# each metric with a chance level -> its chance column
CHANCE = {
    "mrr": "mrr_chance",
    "p_at_1": "p_at_1_chance",
    f"hits_at_{HITS_K}": f"hits_at_{HITS_K}_chance",
}
# per-prompt metrics averaged per concept and resampled; the first three in the order of old
# runs, so that adding a metric leaves the earlier intervals as they were (the same resamples)
_METRICS = ["reciprocal_rank", "target_prob", "target_prob_shared", "hit_1", "hit_k"]


def summarize_retrieval(
    prompts: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    n_candidates: int | None = None,
) -> pd.DataFrame:
    """MRR and mean target probabilities by model x selection x order x category x n_props.

    Each mean comes with a percentile bootstrap interval over concepts (a concept's prompts
    averaged first, so random-baseline samples count as one concept), seeded by `seed` and the
    condition (not the model: the resamples are paired across models), so intervals depend
    neither on what else is in the run nor on where a model was loaded from. For conditions
    with several random samples, `mrr_sample_sd` is the standard deviation of the samples' MRRs.
    The model order is that of first appearance in `prompts` (the order of --model). `p_at_1`
    is the share of prompts whose target is ranked first, `hits_at_10` in the first ten. With
    several templates, a row per template and one for their ensemble, which carries the spread
    and consistency (tacit.ask.paraphrase).

    Beside each of MRR, P@1 and hits@10, its chance level (`mrr_chance`, ...): the mean over
    the prompts of what a uniformly random ranking of the prompt's N candidates scores, H_N / N,
    1 / N and min(10, N) / N, N the prompt's `n_candidates` (candidate spans) or, where the
    rows have none, `n_candidates` (the shared vocabulary's size; None: NaN).
    """
    among = _candidate_counts(prompts, n_candidates)
    prompts = prompts.assign(
        hit_1=hits_at_k(prompts["rank"], 1),
        hit_k=hits_at_k(prompts["rank"], HITS_K),
        _rr_chance=chance_reciprocal_rank(among),
        _hit_1_chance=chance_hits_at_k(among, 1),
        _hit_k_chance=chance_hits_at_k(among, HITS_K),
    )
    keys = [*RETRIEVAL_GROUPS, *([TEMPLATE] if paraphrased(prompts) else [])]
    rows = []
    for key, group in prompts.groupby(keys, sort=False):
        per_concept = group.groupby("concept", sort=True)[_METRICS].mean()
        # seeded by the condition, not the model: every model of the run is resampled over the
        # same concepts (a paired bootstrap), and a model's intervals do not depend on the
        # path it was loaded from
        condition = repr(key[1:])
        rng = np.random.default_rng([seed, zlib.crc32(condition.encode())])
        low, high = bootstrap_mean_ci(
            per_concept.to_numpy(), rng=rng, n_resamples=n_resamples, confidence=confidence
        )
        n_samples = group["sample"].nunique()
        sample_sd = (
            group.groupby("sample")["reciprocal_rank"].mean().std(ddof=1)
            if n_samples > 1
            else np.nan
        )
        rows.append(
            {
                **dict(zip(keys, key)),
                "n_prompts": len(group),
                "n_concepts": len(per_concept),
                "n_samples": n_samples,
                "mrr": group["reciprocal_rank"].mean(),
                "mrr_ci_low": low[0],
                "mrr_ci_high": high[0],
                "mrr_chance": group["_rr_chance"].mean(),
                "mrr_sample_sd": sample_sd,
                "p_at_1": group["hit_1"].mean(),
                "p_at_1_ci_low": low[3],
                "p_at_1_ci_high": high[3],
                "p_at_1_chance": group["_hit_1_chance"].mean(),
                f"hits_at_{HITS_K}": group["hit_k"].mean(),
                f"hits_at_{HITS_K}_ci_low": low[4],
                f"hits_at_{HITS_K}_ci_high": high[4],
                f"hits_at_{HITS_K}_chance": group["_hit_k_chance"].mean(),
                "mean_target_prob": group["target_prob"].mean(),
                "target_prob_ci_low": low[1],
                "target_prob_ci_high": high[1],
                "mean_target_prob_shared": group["target_prob_shared"].mean(),
                **bounded_sum(group),
            }
        )
    columns = [*keys, *RETRIEVAL_SUMMARY_COLUMNS[len(RETRIEVAL_GROUPS) :]]
    columns += bounded_columns(prompts)
    summary = pd.DataFrame(rows, columns=columns)
    model_order = {name: i for i, name in enumerate(dict.fromkeys(prompts["model"]))}
    summary = summary.sort_values(
        RETRIEVAL_GROUPS, key=lambda col: col.map(model_order) if col.name == "model" else col
    ).reset_index(drop=True)
    if paraphrased(prompts):
        summary = paraphrase_columns(summary, prompts, RETRIEVAL_GROUPS, "mrr")
    return summary


def _candidate_counts(prompts: pd.DataFrame, n_candidates: int | None) -> pd.Series:
    """Each prompt's number of candidates: its own (`n_candidates`, candidate spans), else the
    shared vocabulary's size given; NaN where neither says."""
    if "n_candidates" in prompts:
        return prompts["n_candidates"].astype(float)
    return pd.Series(np.nan if n_candidates is None else float(n_candidates), index=prompts.index)


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
    manifest tells: a decoder-only model scores the whole sentence, a seq2seq model its span's
    target with both sentinels, and spans normalised by `mean` or `pmi` are no probabilities
    (a model whose scores are probabilities is left out)."""
    manifest = manifest or {}
    normalize = manifest.get("normalize")
    reasons = {}
    for record in manifest.get("models", []):
        kind = record.get("kind")
        if "generation" in manifest:
            reasons[record["name"]] = "asked by generation: what a model says has no probability"
        elif normalize in ("mean", "pmi"):
            reasons[record["name"]] = f"span scores normalised by {normalize}, not sum"
        elif kind == "causal":
            reasons[record["name"]] = "a decoder-only model scores the whole sentence"
        elif kind == "seq2seq" and "candidates" in manifest:
            reasons[record["name"]] = "a seq2seq model scores its span's target with sentinels"
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
