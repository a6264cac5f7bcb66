"""Summaries of elicitation runs (mAP over the vocabulary or the candidates and over the
sensible answers, Spearman's rho, by model, relation and prefix), and the paper's Table 1."""

from __future__ import annotations

import pandas as pd

from tacit.core.labels import short_labels
from tacit.probes.paraphrase import TEMPLATE, ensemble_rows, paraphrase_columns, paraphrased

ELICITATION_GROUPS = ["model", "relation", "prefix"]
ELICITATION_SUMMARY_COLUMNS = [
    *ELICITATION_GROUPS,
    "n_prompts",
    "map_vocab",
    "map_sens",
    "spearman_mean",
    "n_spearman",
]


def summarize_elicitation(prompts: pd.DataFrame) -> pd.DataFrame:
    """mAP over the shared and the sensible vocabulary and mean Spearman's rho, by model x
    relation x prefix. `n_spearman` counts the prompts where rho is defined (the mean is over
    those only). With several templates, a row per template and one for their ensemble, which
    carries the spread and consistency (tacit.probes.paraphrase)."""
    keys = [*ELICITATION_GROUPS, *([TEMPLATE] if paraphrased(prompts) else [])]
    summary = (
        prompts.groupby(keys, sort=False)
        .agg(
            n_prompts=("ap_vocab", "size"),
            map_vocab=("ap_vocab", "mean"),
            map_sens=("ap_sens", "mean"),
            spearman_mean=("spearman", "mean"),
            n_spearman=("spearman", "count"),
        )
        .reset_index()
    )
    summary = summary[[*keys, *ELICITATION_SUMMARY_COLUMNS[len(ELICITATION_GROUPS) :]]]
    if paraphrased(prompts):
        summary = paraphrase_columns(summary, prompts, ELICITATION_GROUPS, "map_vocab")
    return summary


def format_elicitation_table(summary: pd.DataFrame, paper_counts: dict[str, int]) -> str:
    """The paper's Table 1 layout: relations x models, mAP_VOCAB / mAP_SENS / rho, and our
    prompt counts beside the paper's; with and without the prefix, the Table 2 deltas. With
    several templates: their ensemble's."""
    summary = ensemble_rows(summary)
    summary = summary.assign(model=summary["model"].map(short_labels(summary["model"])))
    blocks = []
    for prefix, rows in summary.groupby("prefix", sort=False):
        table = rows.pivot(
            index="relation", columns="model", values=["map_vocab", "map_sens", "spearman_mean"]
        )
        table.columns = [f"{metric} {model}" for metric, model in table.columns]
        counts = rows.groupby("relation")["n_prompts"].first()
        table.insert(0, "n_prompts", counts)
        table.insert(1, "paper_n_prompts", [paper_counts.get(r) for r in table.index])
        title = "with prefix 'Everyone knows that'" if prefix else "without prefix"
        blocks.append(title + "\n" + table.to_string(float_format=lambda x: f"{x:.3f}"))
    if summary["prefix"].nunique() == 2:
        keys = ["model", "relation"]
        both = summary.pivot_table(
            index=keys, columns="prefix", values=["map_vocab", "map_sens", "spearman_mean"]
        )
        delta = pd.DataFrame(
            {
                m: both[(m, False)] - both[(m, True)]
                for m in ["map_vocab", "map_sens", "spearman_mean"]
            }
        ).reset_index()
        blocks.append(
            "change when the prefix is dropped (without - with)\n"
            + delta.to_string(index=False, float_format=lambda x: f"{x:+.3f}")
        )
    return "\n\n".join(blocks)
