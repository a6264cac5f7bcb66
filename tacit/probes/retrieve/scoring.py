"""Retrieval's scoring, one model at a time: each prompt's target ranked at the blank.

- over the shared vocabulary (score_prompts): the target is one token; its rank among the
  vocabulary, its probability under the whole-vocabulary softmax and its share of the shared
  vocabulary's, and the top 5 words;
- over candidate spans (score_span_prompts): "<mask> has fur, is big, and has claws." with
  every concept of the norms, article and all ("A bear", "An aardvark", "Scissors"), as a
  candidate. prompts.csv keeps the same columns, so summaries and figures read either, and adds
  the target's span, its score and the candidate count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.core.blank import MASK
from tacit.core.metrics import reciprocal_rank
from tacit.probes.candidates import SpanRanker, rank_targets, shares, top_spans
from tacit.probes.retrieve.prompts import PROMPT_COLUMNS

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer
    from tacit.vocab.shared import Vocabulary

RESULT_COLUMNS = [
    "model",
    *PROMPT_COLUMNS,
    "rank",
    "reciprocal_rank",
    "target_prob",
    "target_prob_shared",
    "top5",
]
SPAN_RESULT_COLUMNS = [
    "model",
    *PROMPT_COLUMNS,
    "target_span",
    "rank",
    "reciprocal_rank",
    "target_score",
    "target_prob",
    "target_prob_shared",
    "n_candidates",
    "top5",
]


def property_free(template: str) -> str:
    """The template without its properties, for `--normalize pmi`: '<mask>.'"""
    return f"{MASK}."


def score_span_prompts(
    rows: pd.DataFrame,
    scorer: Scorer,
    ranker: SpanRanker,
    span_of: dict[str, str],
    progress: tqdm | bool,
) -> pd.DataFrame:
    """Rank each prompt's target span among the candidates, with one model.

    target_prob: the span's probability (exp of its log-probability) where the score is one
    (`--normalize sum` with a masked LM), else empty; target_prob_shared: the target's share of
    the candidate set (softmax of the scores over the candidates).
    """
    templates = list(dict.fromkeys(rows["prompt"]))
    scores, is_probability = ranker.scores(scorer, templates, progress)
    row_of = {t: n for n, t in enumerate(templates)}
    per_row = scores[[row_of[p] for p in rows["prompt"]]]
    index = ranker.candidates.index()
    targets = np.array([index[span_of[c]] for c in rows["target"]])
    rank, target_score = rank_targets(per_row, targets)
    table = rows.copy()
    table.insert(0, "model", scorer.name)
    table["target_span"] = [span_of[c] for c in rows["target"]]
    table["rank"] = rank
    table["reciprocal_rank"] = reciprocal_rank(rank)
    table["target_score"] = target_score.astype(float)
    table["target_prob"] = np.exp(target_score) if is_probability else np.nan
    table["target_prob_shared"] = shares(per_row)[np.arange(len(targets)), targets]
    table["n_candidates"] = len(ranker.candidates.spans)
    table["top5"] = top_spans(per_row, ranker.candidates.spans)
    return table[SPAN_RESULT_COLUMNS]


def score_prompts(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    *,
    progress: bool | tqdm = True,
) -> pd.DataFrame:
    """Score every prompt with one model: the RESULT_COLUMNS table for that model."""
    targets = [vocab.index(t) for t in prompts["target"]]
    scores = scorer.score_targets(
        list(prompts["prompt"]), targets, vocab.token_ids[scorer.name], progress=progress
    )
    words = np.asarray(vocab.words, dtype=object)
    top5 = [
        " ".join(f"{w}:{p:.4g}" for w, p in zip(words[idx], prob))
        for idx, prob in zip(scores.top_index, scores.top_prob)
    ]
    table = prompts.copy()
    table.insert(0, "model", scorer.name)
    table["rank"] = scores.rank
    table["reciprocal_rank"] = reciprocal_rank(scores.rank)
    table["target_prob"] = scores.target_prob.astype(float)
    table["target_prob_shared"] = scores.target_prob_shared.astype(float)
    table["top5"] = top5
    return table[RESULT_COLUMNS]
