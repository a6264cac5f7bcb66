"""The items probe's scoring and summary: every candidate of every item scored as a span in the
item's blank (tacit.ranking: the exact span scores and normalisations of `--candidates`), each
item's answers ranked among its candidates, and accuracy (P@1), MRR and P@k per group and
overall, with bootstrap intervals over items."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.tokens import TOKENS_COLUMN, token_cells
from tacit.core.labels import short_labels
from tacit.core.numbers import with_interval
from tacit.core.stats import bootstrap_ratio_ci
from tacit.probes.items.reading import ITEM_COLUMNS, OVERALL
from tacit.ranking import CandidateSet, Question, SpanCandidates, rank

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer

ROW_COLUMNS = ["model", *ITEM_COLUMNS, "score", "rank"]


def candidate_sets(items: pd.DataFrame) -> tuple[dict[str, CandidateSet], dict[str, str]]:
    """The items' distinct lists of candidates as candidate sets (items with the same
    candidates rank the same set: scored together), and each item's set."""
    lists = items.groupby("id", sort=False)["candidate"].agg(tuple)
    names = {spans: f"items-{n}" for n, spans in enumerate(dict.fromkeys(lists))}
    sets = {name: CandidateSet("items", list(spans)) for spans, name in names.items()}
    return sets, {str(item): names[spans] for item, spans in lists.items()}


def score_items(
    rows: pd.DataFrame,
    scorer: Scorer,
    candidates: SpanCandidates,
    set_of: dict[str, str],
    bar: tqdm | bool,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Each candidate's score in its item's blank (what candidates are ranked by, see
    `--normalize`) and its rank among the item's candidates (1 + those scored higher, or as
    high and listed earlier; near ties settled on the spans scored alone: tacit.ranking.ties),
    by the ranking layer in one call; also the work the scoring ran. With the candidates'
    `tokens`, each row carries its candidate's per-token scores (tacit.ask.tokens)."""
    first = rows.drop_duplicates("id")
    items = [str(i) for i in first["id"]]
    sets = [set_of[i] for i in items]
    every = [list(range(len(candidates.sets[s].spans))) for s in sets]  # each one's rank
    question = Question(list(first["text"]), every, top_k=0, sets=sets)
    ranking = rank(scorer, question, candidates, progress=bar)
    score_of: dict[tuple[str, str], tuple[float, int]] = {}
    cell_of: dict[tuple[str, str], str] = {}
    for n, (item, name) in enumerate(zip(items, sets)):
        spans = candidates.sets[name].spans
        for s, span in enumerate(spans):
            score_of[(item, span)] = (float(ranking.score[n, s]), int(ranking.rank[n, s]))
        if ranking.tokens is not None:
            cells = token_cells([[pair] for pair in ranking.tokens[n]])
            cell_of.update(zip(((item, span) for span in spans), cells))
    table = rows.copy()
    table.insert(0, "model", scorer.name)
    keys = list(zip(rows["id"].astype(str), rows["candidate"]))
    table["score"] = [score_of[key][0] for key in keys]
    table["rank"] = [score_of[key][1] for key in keys]
    if ranking.tokens is not None:
        table[TOKENS_COLUMN] = [cell_of[key] for key in keys]
    return table[ROW_COLUMNS + ([TOKENS_COLUMN] if ranking.tokens is not None else [])], dict(
        ranking.counts
    )


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


def summarize_items(rows: pd.DataFrame, k: int, *, seed: int = 0) -> pd.DataFrame:
    """Accuracy (P@1), MRR and P@k by model and group, and over every item (`group` all),
    each with a 95% percentile bootstrap interval over items, seeded by `seed` and the group
    (the same resamples for every model: paired). P@k is over the items with more than k
    candidates (`n_items_over_k`; empty where there are none)."""
    items = item_results(rows, k)
    metrics = ["correct", "reciprocal_rank", f"p_at_{k}"]
    names = ["accuracy", "mrr", f"p_at_{k}"]
    groups = [g for g in dict.fromkeys(items["group"]) if g]
    records = []
    for model, mine in items.groupby("model", sort=False):
        for group in [*groups, OVERALL]:
            chosen = mine if group == OVERALL else mine[mine["group"] == group]
            rng = np.random.default_rng([seed, zlib.crc32(group.encode())])
            values = chosen[metrics]
            defined = values.notna()
            low, high = bootstrap_ratio_ci(
                values.fillna(0.0).to_numpy(), defined.to_numpy(), rng=rng
            )
            record: dict[str, Any] = {
                "model": model,
                "group": group,
                "n_items": len(chosen),
                "n_items_over_k": int(defined[f"p_at_{k}"].sum()),
            }
            for n, name in enumerate(names):
                record[name] = float(values.iloc[:, n].mean())
                record[f"{name}_ci_low"], record[f"{name}_ci_high"] = low[n], high[n]
            records.append(record)
    return pd.DataFrame(records)


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
