"""Paraphrases: one question asked through several templates (tacit.templates), and what a
run says about them, for the probes that take template files. Rows name their `template`, and
rows asking one question share an `item`; the ensemble (Jiang et al. 2020: per candidate, the
mean of its log-probabilities over the templates, ranked as one prompt) is one more row per
item (`template` = `ensemble`); consistency (ParaRel) is the share of template pairs whose
top answers agree; spread is the range of the templates' primary metric. The ensemble row is
the run's main result. docs/probes/templates.md has the details.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tacit.templates import ENSEMBLE

TEMPLATE, ITEM, TOP1 = "template", "item", "top1"


def with_items(prompts: pd.DataFrame, question: Sequence[str]) -> pd.DataFrame:
    """The prompts with an `item` number per question (the `question` columns) before their
    `template` column when some question has several templates; without either column when
    none has."""
    if not prompts.duplicated(list(question)).any():
        return prompts.drop(columns=TEMPLATE)
    keys = pd.MultiIndex.from_frame(prompts[list(question)])
    prompts = prompts.copy()
    prompts.insert(prompts.columns.get_loc(TEMPLATE), ITEM, pd.factorize(keys)[0])
    return prompts


def paraphrased(rows: pd.DataFrame) -> bool:
    """Whether the rows ask questions through several templates (then they have `item`)."""
    return ITEM in rows.columns


def item_numbers(rows: pd.DataFrame) -> list[int] | None:
    """Each row's item numbered from 0 in order of first appearance (the groups an ensemble
    averages over: tacit.ranking.Question.groups, tacit.models.answers.Needed), or None where
    the rows ask each question once."""
    return pd.factorize(rows[ITEM])[0].tolist() if paraphrased(rows) else None


def ensemble_frame(rows: pd.DataFrame, offset: int) -> pd.DataFrame:
    """One row per item of `rows`, to be filled with the ensemble's answer: the item's first
    row with `template` = `ensemble` and no prompt text, indexed `offset` + item (after every
    prompt row: its place does not depend on how the rows were chunked)."""
    first = rows.drop_duplicates(ITEM).copy()
    first[TEMPLATE] = ENSEMBLE
    first["prompt"] = ""
    first.index = offset + first[ITEM].to_numpy()
    return first


def pair_agreement(answers: Sequence[object]) -> float:
    """The fraction of pairs of answers that agree (NaN with fewer than two).

    Examples:
        >>> pair_agreement(["fur", "fur", "claws"]), pair_agreement(["fur"])
        (0.3333333333333333, nan)
    """
    n = len(answers)
    if n < 2:
        return float("nan")
    counts = pd.Series(list(answers)).value_counts().to_numpy()
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))


def paraphrase_columns(
    summary: pd.DataFrame, rows: pd.DataFrame, groups: Sequence[str], metric: str
) -> pd.DataFrame:
    """The summary with `spread` (of `metric` over the templates) and `consistency` (over the
    items) on its ensemble rows; `groups` are the summary's keys without `template`."""
    groups = list(groups)
    prompts = rows[rows[TEMPLATE] != ENSEMBLE]
    agreement = (
        prompts.groupby([*groups, ITEM], sort=False)[TOP1]
        .agg(pair_agreement)
        .groupby(groups, sort=False)
        .mean()
        .rename("consistency")
    )
    per_template = summary[summary[TEMPLATE] != ENSEMBLE].groupby(groups, sort=False)[metric]
    spread = (per_template.max() - per_template.min()).rename("spread")
    ensemble = summary[TEMPLATE] == ENSEMBLE
    keys = pd.MultiIndex.from_frame(summary[groups]) if len(groups) > 1 else summary[groups[0]]
    summary = summary.copy()
    for column in (spread, agreement):
        values = column.reindex(keys).to_numpy()
        summary[column.name] = np.where(ensemble, values, np.nan)
    return summary


def ensemble_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """The ensemble's rows where the summary has several templates (else all of it)."""
    if TEMPLATE not in summary.columns:
        return summary
    return summary[summary[TEMPLATE].astype(str) == ENSEMBLE]


def format_paraphrases(summary: pd.DataFrame, index: Sequence[str], metric: str, label: str) -> str:
    """The printed account: per model and `index` row, each template's `metric`, the
    ensemble's, the spread and the consistency."""
    from tacit.core.labels import short_labels

    summary = summary.assign(model=summary["model"].map(short_labels(summary["model"])))
    blocks = []
    for model, rows in summary.groupby("model", sort=False):
        table = rows.pivot_table(index=list(index), columns=TEMPLATE, values=metric, sort=False)
        templates = [t for t in dict.fromkeys(rows[TEMPLATE]) if t != ENSEMBLE]
        table = table[[*templates, ENSEMBLE]]
        ensemble = rows[rows[TEMPLATE] == ENSEMBLE].set_index(list(index))
        table["spread"] = ensemble["spread"]
        table["consistency"] = ensemble["consistency"]
        blocks.append(
            f"{model}: {label} per template, their ensemble, the spread (max - min) "
            "and the consistency (pairs of templates whose top answers agree)\n"
            + table.to_string(float_format=lambda x: f"{x:.4g}")
        )
    return "\n\n".join(blocks)
