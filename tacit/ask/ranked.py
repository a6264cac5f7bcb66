"""Asking among fixed candidates (the shared vocabulary, candidate spans): a chunk's prompts
ranked by the ranking layer in one call, their answers by name found among the candidates, and
the Ranking's arrays given to the probe as fields (Answered), for the rows and, with several
templates, for each item's ensemble after them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Asking, Column, Scored, Work, with_model, written
from tacit.ask.paraphrase import ITEM, ensemble_frame, item_numbers, paraphrased
from tacit.ask.tokens import token_cells
from tacit.ranking import TOP, Question, rank

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Needs, Scorer
    from tacit.ranking import Among, Ranking

# (set, answer names) -> their positions among that set's candidates
Positions = Callable[[str | None, Sequence[str]], Any]
# how a probe writes its rows: Columns, or (a chunk's rows, what was answered) -> its table
Rows = Sequence[Column] | Callable[[pd.DataFrame, Answered], pd.DataFrame]
FIELDS = (
    "rank",
    "ranks",
    "scores",
    "prob",
    "probs",
    "share",
    "ap",
    "ap_among",
    "listed",
    "best",
    "top",
    "token_pairs",
)


def ranked_work(
    rows: pd.DataFrame,
    key: str | None,
    asking: Asking,
    columns: Rows,
    among: Among,
    needs: Needs,
    positions: Positions,
    subset: Positions,
    fields: Callable[[Ranking, Sequence[str] | None, pd.DataFrame], dict[str, Any]],
    *,
    sets: bool = False,
    labels: Sequence[str] | None = None,
    cost: Callable[[pd.DataFrame], pd.Series] | None = None,
    questions: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> Work:
    """The Work of ranking every row's answers among `among` (`sets`: the rows rank the sets
    Asking.sets names; `labels`: the names of the candidates every set lists, for `top`;
    `fields`: what the Ask adds to a ranking's fields; `questions`: rows -> the rows asked,
    where several rows share one question; `key`: the rows are chunked on it, by default each
    prompt, or with several templates each item, whose ensemble is ranked with it)."""
    offset = len(rows)
    key = key or default_key(rows)

    def score(scorer: Scorer, chunk: pd.DataFrame, bar: tqdm | bool) -> Scored:
        asked = questions(chunk) if questions is not None else chunk
        named = asking.answers(asked)
        row_sets = asking.sets(asked) if sets and asking.sets is not None else None
        chosen: Sequence[str | None] = row_sets or [None] * len(asked)
        among_subsets = dict(asking.subsets or {})
        subsets = list(among_subsets)
        question = Question(
            list(asked["prompt"]),
            [positions(s, names) for s, names in zip(chosen, named)],
            TOP if asking.top_k is None else asking.top_k,
            item_numbers(asked),
            subsets=[subset(s, among_subsets[s]) for s in subsets],
            subset_of_row=(
                [subsets.index(s) for s in asking.subset_of(asked)]
                if subsets and asking.subset_of is not None
                else None
            ),
            shares=asking.shares,
            sets=row_sets,
        )
        ranking = rank(scorer, question, among, progress=bar)
        tables = [_written(columns, chunk, asked, ranking, row_sets, labels, fields)]
        if ranking.ensemble is not None:
            frame = ensemble_frame(asked, offset)
            group_sets = question.for_groups().sets
            tables.append(
                _written(columns, frame, frame, ranking.ensemble, group_sets, labels, fields)
            )
        return Scored(with_model(scorer, pd.concat(tables)), ranking.counts)

    return Work(rows, key, score, needs=needs, cost=cost)


def default_key(rows: pd.DataFrame) -> str:
    """What ranked rows are chunked on: each prompt, or with several templates each item
    (whose ensemble is ranked with its prompts)."""
    return ITEM if paraphrased(rows) else "prompt"


def _written(
    columns: Rows,
    chunk: pd.DataFrame,
    rows: pd.DataFrame,
    ranking: Ranking,
    sets: Sequence[str] | None,
    labels: Sequence[str] | None,
    fields: Callable[[Ranking, Sequence[str] | None, pd.DataFrame], dict[str, Any]],
) -> pd.DataFrame:
    """The rows asked with the probe's columns (or the chunk's rows as its function writes
    them, where several rows share one question)."""
    answered = Answered(rows, {**ranking_fields(ranking, labels), **fields(ranking, sets, rows)})
    if callable(columns):
        return columns(chunk, answered)
    return written(rows, answered, columns)


def ranking_fields(
    ranking: Ranking, labels: Sequence[str] | None = None
) -> Mapping[str, Callable[[], Any]]:
    """What a Ranking tells of its rows, by field: the first answer's rank, probability and
    share; every answer's ranks, scores and probabilities; average precision (over every
    candidate, and over the row's subset); the top k as listed, the best candidate and its
    name (`labels`: the names every set's candidates go by); each listed span's tokens."""
    found: dict[str, Callable[[], Any]] = {
        "rank": lambda: ranking.rank[:, 0],
        "ranks": lambda: ranking.rank,
        "scores": lambda: ranking.score,
        "prob": lambda: ranking.prob[:, 0].astype(float),
        "probs": lambda: ranking.prob,
        "ap": lambda: ranking.ap,
        "ap_among": lambda: ranking.ap_among,
        "listed": lambda: ranking.listed,
        "best": lambda: ranking.best,
        "top": lambda: (
            np.asarray(labels, dtype=object)[ranking.top_index[:, 0]]
            if labels is not None
            else ranking.best
        ),
    }
    if ranking.share is not None:
        found["share"] = lambda: ranking.share[:, 0].astype(float)  # type: ignore[index]
    if ranking.tokens is not None:
        found["token_pairs"] = lambda: ranking.tokens
        found["tokens"] = lambda: token_cells(ranking.tokens or [])
    return found
