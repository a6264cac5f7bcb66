"""Summaries of retrieval runs (MRR and mean target probabilities by condition and number of
properties, with bootstrap intervals over concepts), and their printed form."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from tacit.core.labels import short_labels
from tacit.core.metrics import bootstrap_mean_ci
from tacit.probes.paraphrase import TEMPLATE, ensemble_rows, paraphrase_columns, paraphrased

RETRIEVAL_GROUPS = ["model", "selection", "order", "category", "n_props"]
RETRIEVAL_SUMMARY_COLUMNS = [
    *RETRIEVAL_GROUPS,
    "n_prompts",
    "n_concepts",
    "n_samples",
    "mrr",
    "mrr_ci_low",
    "mrr_ci_high",
    "mrr_sample_sd",
    "mean_target_prob",
    "target_prob_ci_low",
    "target_prob_ci_high",
    "mean_target_prob_shared",
]
_METRICS = ["reciprocal_rank", "target_prob", "target_prob_shared"]


def summarize_retrieval(
    prompts: pd.DataFrame, *, seed: int = 0, n_resamples: int = 1000, confidence: float = 0.95
) -> pd.DataFrame:
    """MRR and mean target probabilities by model x selection x order x category x n_props.

    Each mean comes with a percentile bootstrap interval over concepts (a concept's prompts
    averaged first, so random-baseline samples count as one concept), seeded by `seed` and the
    condition (not the model: the resamples are paired across models), so intervals depend
    neither on what else is in the run nor on where a model was loaded from. For conditions
    with several random samples, `mrr_sample_sd` is the standard deviation of the samples' MRRs.
    The model order is that of first appearance in `prompts` (the order of --model). With
    several templates, a row per template and one for their ensemble, which carries the spread
    and consistency (tacit.probes.paraphrase).
    """
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
                "mrr_sample_sd": sample_sd,
                "mean_target_prob": group["target_prob"].mean(),
                "target_prob_ci_low": low[1],
                "target_prob_ci_high": high[1],
                "mean_target_prob_shared": group["target_prob_shared"].mean(),
            }
        )
    columns = [*keys, *RETRIEVAL_SUMMARY_COLUMNS[len(RETRIEVAL_GROUPS) :]]
    summary = pd.DataFrame(rows, columns=columns)
    model_order = {name: i for i, name in enumerate(dict.fromkeys(prompts["model"]))}
    summary = summary.sort_values(
        RETRIEVAL_GROUPS, key=lambda col: col.map(model_order) if col.name == "model" else col
    ).reset_index(drop=True)
    if paraphrased(prompts):
        summary = paraphrase_columns(summary, prompts, RETRIEVAL_GROUPS, "mrr")
    return summary


def format_retrieval_summary(summary: pd.DataFrame, *, verbose: bool = False) -> str:
    """MRR and mean target probability by number of properties, one column pair per model (by
    its short label). Several conditions (an ablation): one compact table of MRR, a column per
    condition and model, unless `verbose` (a table per condition, as summary.csv has it). With
    several templates: their ensemble's (the templates' own are printed apart)."""
    summary = ensemble_rows(summary)
    labels = short_labels(summary["model"])
    summary = summary.assign(model=summary["model"].map(labels))
    models = list(dict.fromkeys(summary["model"]))
    conditions = summary.groupby(["selection", "order", "category"], sort=False)
    if conditions.ngroups > 1 and not verbose:
        names = summary[["selection", "order", "category"]].astype(str).agg("/".join, axis=1)
        table = summary.assign(column=names + " " + summary["model"]).pivot(
            index="n_props", columns="column", values="mrr"
        )
        table = table[list(dict.fromkeys(names + " " + summary["model"]))]
        return ("MRR by condition (selection/order/category) and model; mean target "
                "probabilities in summary.csv (--verbose prints them)\n"
                + table.to_string(float_format=lambda x: f"{x:.4g}"))  # fmt: skip
    blocks = []
    for (selection, order, category), rows in conditions:
        table = rows.pivot(index="n_props", columns="model", values=["mrr", "mean_target_prob"])
        table = table.reindex(
            columns=pd.MultiIndex.from_product([["mrr", "mean_target_prob"], models])
        )
        short = {"mrr": "mrr", "mean_target_prob": "prob"}
        table.columns = [f"{short[metric]} {model}" for metric, model in table.columns]
        title = (f"selection={selection} order={order} category={category} "
                 "(prob: mean target probability)")  # fmt: skip
        samples = int(rows["n_samples"].max())
        if samples > 1:
            title += f" ({samples} random samples per concept)"
        blocks.append(title + "\n" + table.to_string(float_format=lambda x: f"{x:.4g}"))
    return "\n\n".join(blocks)
