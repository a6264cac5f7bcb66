"""Summaries of per-prompt results, and their printed form."""

from __future__ import annotations

import pandas as pd

RETRIEVAL_GROUPS = ["model", "selection", "order", "category", "n_props"]
RETRIEVAL_SUMMARY_COLUMNS = [
    *RETRIEVAL_GROUPS,
    "n_prompts",
    "mrr",
    "mean_target_prob",
    "mean_target_prob_shared",
]


def summarize_retrieval(prompts: pd.DataFrame) -> pd.DataFrame:
    """MRR and mean target probabilities by model x selection x order x category x n_props.

    The model order is that of first appearance in `prompts` (the order of --model).
    """
    grouped = prompts.groupby(RETRIEVAL_GROUPS, sort=False)
    summary = grouped.agg(
        n_prompts=("rank", "size"),
        mrr=("reciprocal_rank", "mean"),
        mean_target_prob=("target_prob", "mean"),
        mean_target_prob_shared=("target_prob_shared", "mean"),
    ).reset_index()
    model_order = {name: i for i, name in enumerate(dict.fromkeys(prompts["model"]))}
    summary = summary.sort_values(
        RETRIEVAL_GROUPS, key=lambda col: col.map(model_order) if col.name == "model" else col
    )
    return summary[RETRIEVAL_SUMMARY_COLUMNS].reset_index(drop=True)


def format_retrieval_summary(summary: pd.DataFrame) -> str:
    """MRR and mean target probability by number of properties, one column pair per model."""
    models = list(dict.fromkeys(summary["model"]))
    conditions = summary.groupby(["selection", "order", "category"], sort=False)
    blocks = []
    for (selection, order, category), rows in conditions:
        table = rows.pivot(index="n_props", columns="model", values=["mrr", "mean_target_prob"])
        table = table.reindex(
            columns=pd.MultiIndex.from_product([["mrr", "mean_target_prob"], models])
        )
        table.columns = [f"{metric} {model}" for metric, model in table.columns]
        title = f"selection={selection} order={order} category={category}"
        blocks.append(title + "\n" + table.to_string(float_format=lambda x: f"{x:.4g}"))
    return "\n\n".join(blocks)
