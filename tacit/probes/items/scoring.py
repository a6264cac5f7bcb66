"""The items probe's scoring and summary: every candidate of every item scored as a span in the
item's blank (tacit.ranking: the exact span scores and normalisations of `--candidates`), each
item's answers ranked among its candidates, and accuracy (P@1), MRR and P@k per group and
overall, with bootstrap intervals over items."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from tacit.ask.base import Answered
from tacit.ask.tokens import TOKENS_COLUMN, token_cells
from tacit.core.labels import short_labels
from tacit.core.numbers import with_interval
from tacit.probes.base import Metric
from tacit.probes.items.options import ACCURACY, MRR
from tacit.probes.items.reading import ITEM_COLUMNS, OVERALL
from tacit.probes.summary import Summary, count, defined, summarise
from tacit.ranking import CandidateSet


def candidate_sets(items: pd.DataFrame) -> tuple[dict[str, CandidateSet], dict[str, str]]:
    """The items' distinct lists of candidates as candidate sets (items with the same
    candidates rank the same set: scored together), and each item's set."""
    lists = items.groupby("id", sort=False)["candidate"].agg(tuple)
    names = {spans: f"items-{n}" for n, spans in enumerate(dict.fromkeys(lists))}
    sets = {name: CandidateSet("items", list(spans)) for spans, name in names.items()}
    return sets, {str(item): names[spans] for item, spans in lists.items()}


def item_rows(
    sets: Mapping[str, CandidateSet], set_of: Mapping[str, str]
) -> Callable[[pd.DataFrame, Answered], pd.DataFrame]:
    """How a chunk's rows (one per item and candidate) are written from its items asked (one
    row each, every candidate an answer): each candidate's score in its item's blank (what
    candidates are ranked by, see `--normalize`) and its rank among the item's candidates (1
    + those scored higher, or as high and listed earlier: tacit.ranking.ties); with the
    candidates' tokens, each row's per-token scores (tacit.ask.tokens)."""

    def written(rows: pd.DataFrame, answered: Answered) -> pd.DataFrame:
        scores, ranks = answered["scores"], answered["ranks"]
        pairs = answered.get("token_pairs")
        score_of: dict[tuple[str, str], tuple[float, int]] = {}
        cell_of: dict[tuple[str, str], str] = {}
        for n, item in enumerate(str(i) for i in answered.rows["id"]):
            spans = sets[set_of[item]].spans
            for s, span in enumerate(spans):
                score_of[(item, span)] = (float(scores[n, s]), int(ranks[n, s]))
            if pairs is not None:
                cells = token_cells([[pair] for pair in pairs[n]])
                cell_of.update(zip(((item, span) for span in spans), cells))
        table = rows.copy()
        keys = list(zip(rows["id"].astype(str), rows["candidate"]))
        table["score"] = [score_of[key][0] for key in keys]
        table["rank"] = [score_of[key][1] for key in keys]
        columns = [*ITEM_COLUMNS, "score", "rank"]
        if pairs is not None:
            table[TOKENS_COLUMN] = [cell_of[key] for key in keys]
            columns.append(TOKENS_COLUMN)
        return table[columns]

    return written


def item_results(rows: pd.DataFrame, k: int) -> pd.DataFrame:
    """One row per model and item: the best rank of its answers, and whether it is first, in
    the top k (empty for an item of k or fewer candidates: there it is so whatever the scores),
    and its reciprocal."""
    answers = rows[rows["answer"].astype(bool)]
    items = answers.groupby(["model", "id"], sort=False).agg(
        group=("group", "first"), rank=("rank", "min")
    )
    items = items.reset_index()
    choices = rows.groupby(["model", "id"], sort=False).size()
    many = choices.loc[list(zip(items["model"], items["id"]))].to_numpy() > k
    items["correct"] = (items["rank"] == 1).astype(float)
    items["reciprocal_rank"] = 1.0 / items["rank"]
    items[f"p_at_{k}"] = np.where(many, (items["rank"] <= k).astype(float), np.nan)
    return items


def items_summary(k: int) -> Summary:
    """Accuracy (P@1), MRR and P@k by model and group, and over every item (`group` all),
    each interval over items, seeded by the group (the same resamples for every model:
    paired). P@k is over the items with more than k candidates (`n_items_over_k`)."""

    def parts(mine: pd.DataFrame, items: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
        groups = [g for g in dict.fromkeys(items["group"]) if g]
        return [*((g, mine[mine["group"] == g]) for g in groups), (OVERALL, mine)]

    p_at_k = f"p_at_{k}"
    return Summary(
        ("model", "group"),
        (
            ACCURACY,
            MRR,
            Metric(p_at_k, f"P@{k}", True, f"{p_at_k}_ci_low", f"{p_at_k}_ci_high", of=p_at_k),
        ),
        counts=(count("n_items"), defined("n_items_over_k", p_at_k)),
        by=("model",),
        parts=parts,
        pooled="group",
        stream=lambda key, group: str(group),
        unit=None,
        prepare=lambda rows, _: item_results(rows, k),
        templates=False,
    )


def summarize_items(rows: pd.DataFrame, k: int, *, seed: int = 0) -> pd.DataFrame:
    """The summary of an items run (items_summary)."""
    return summarise(rows, items_summary(k), seed=seed)


def items_report(summary: pd.DataFrame, k: int) -> str:
    """Accuracy, MRR and P@k per group and overall, a block per model (numbers as every table
    prints them); where P@k leaves out items of k or fewer candidates, a line says so."""
    labels = short_labels(summary["model"])
    blocks = []
    for model, rows in summary.groupby("model", sort=False):
        table = pd.DataFrame(
            {
                "items": rows["n_items"].to_numpy(),
                **{
                    label: [
                        with_interval(v, lo, hi)
                        for v, lo, hi in zip(
                            rows[name], rows[f"{name}_ci_low"], rows[f"{name}_ci_high"]
                        )
                    ]
                    for name, label in (
                        ("accuracy", "accuracy (P@1)"),
                        ("mrr", "MRR"),
                        (f"p_at_{k}", f"P@{k}"),
                    )
                },
            },
            index=rows["group"].to_numpy(),
        )
        blocks.append(
            f"{labels[model]}: per group and over all items (95% bootstrap intervals "
            "over items)\n" + table.to_string()
        )
    overall = summary[summary["group"] == OVERALL].iloc[0]  # the same items for every model
    over, every = int(overall["n_items_over_k"]), int(overall["n_items"])
    text = "\n\n".join(blocks)
    if over < every:
        counted = f"{over} of {every}" if over else "none here"
        text += (
            f"\nP@{k}: over the items with more than {k} candidates ({counted}): with {k} or "
            f"fewer, an answer is among the first {k} whatever the scores"
        )
    return text
