"""The items probe's scoring and summary: every candidate of every item scored as a span in the
item's blank (tacit.probes.candidates.SpanRanker: the exact span scores and normalisations of
`--candidates`), each item's answers ranked among its candidates, and accuracy (P@1), MRR and
P@k per group and overall, with bootstrap intervals over items."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.labels import short_labels
from tacit.core.numbers import with_interval
from tacit.core.stats import bootstrap_ratio_ci
from tacit.probes.candidates import (
    CandidateSet,
    SpanRanker,
    rank_candidates,
    settle_spans,
    span_alone,
    take_counts,
)
from tacit.probes.items.reading import ITEM_COLUMNS, OVERALL
from tacit.probes.token_rows import TOKENS_COLUMN

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer

ROW_COLUMNS = ["model", *ITEM_COLUMNS, "score", "rank"]


def score_items(
    rows: pd.DataFrame,
    scorer: Scorer,
    scoring: str,
    normalize: str,
    bar: tqdm | bool,
    tokens: bool = False,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Each candidate's score in its item's blank (what candidates are ranked by, see
    `--normalize`) and its rank among the item's candidates (1 + those scored higher, or as
    high and listed earlier; near ties settled on the spans scored alone: tacit.models.ties);
    items with the same candidates are scored together. Also the work the scoring ran. With
    `tokens`, each row carries its candidate's per-token scores (tacit.probes.token_rows)."""
    first = rows.drop_duplicates("id")
    candidates = rows.groupby("id", sort=False)["candidate"].agg(tuple)
    by_set: dict[tuple[str, ...], list[str]] = {}
    for item, spans in candidates.items():
        by_set.setdefault(spans, []).append(str(item))
    text_of = dict(zip(first["id"], first["text"]))
    score_of: dict[tuple[str, str], tuple[float, int]] = {}
    cell_of: dict[tuple[str, str], str] = {}
    rankers = []
    for spans, items in by_set.items():
        chosen = CandidateSet("items", list(spans))
        ranker = SpanRanker(chosen, scoring, normalize, span_alone, tokens)
        rankers.append(ranker)
        texts = [text_of[i] for i in items]
        scores, _ = ranker.scores(scorer, texts, bar)
        if tokens:
            for item, text in zip(items, texts):
                cells = ranker.token_cells([text] * len(spans), [[s] for s in range(len(spans))])
                cell_of.update({(item, span): cell for span, cell in zip(spans, cells)})
        every = [list(range(len(spans)))] * len(items)  # each candidate's rank is printed
        members = [[(ranker, text)] for text in texts]
        scores = settle_spans(scorer, members, scores, every, 0, ranker)
        rank = rank_candidates(scores)
        for n, item in enumerate(items):
            score_of.update(
                {
                    (item, span): (float(scores[n, s]), int(rank[n, s]))
                    for s, span in enumerate(spans)
                }
            )
    table = rows.copy()
    table.insert(0, "model", scorer.name)
    scored = [score_of[(i, c)] for i, c in zip(rows["id"], rows["candidate"])]
    table["score"] = [score for score, _ in scored]
    table["rank"] = [rank for _, rank in scored]
    if tokens:
        table[TOKENS_COLUMN] = [cell_of[(i, c)] for i, c in zip(rows["id"], rows["candidate"])]
    return table[ROW_COLUMNS + ([TOKENS_COLUMN] if tokens else [])], take_counts(rankers)


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
