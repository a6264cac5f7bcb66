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

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.core.metrics import reciprocal_rank
from tacit.probes.base import Scored
from tacit.probes.candidates import (
    TOP,
    SpanRanker,
    best_positions,
    rank_targets,
    settle_spans,
    shares,
    top_spans,
)
from tacit.probes.paraphrase import (
    ITEM,
    TEMPLATE,
    TOP1,
    ensemble_frame,
    group_mean,
    item_numbers,
    paraphrased,
)
from tacit.probes.retrieve.prompts import PROMPT_COLUMNS
from tacit.probes.token_rows import TOKENS_COLUMN

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer, TargetScores
    from tacit.vocab.shared import Vocabulary

METRICS = ["rank", "reciprocal_rank", "target_prob", "target_prob_shared", "top5"]
TOP_K = 5
SPAN_METRICS = [
    "target_span",
    "rank",
    "reciprocal_rank",
    "target_score",
    "target_prob",
    "target_prob_shared",
    "n_candidates",
    "top5",
]
RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, *METRICS]
SPAN_RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, *SPAN_METRICS]


@dataclass(frozen=True)
class SpanSets:
    """Retrieval's candidate spans: a ranker per candidate set, the set each template's blank
    takes (its form: `A bear`, `a bear` or `bear`), and each concept's span in each set. The
    sets list the same concepts in the same order, so that the ensemble of templates whose
    blanks differ in form is taken candidate by candidate."""

    rankers: dict[str, SpanRanker]
    set_of: dict[str, str]  # template id -> candidate set
    span_of: dict[str, dict[str, str]]  # candidate set -> concept -> span

    def of(self, rows: pd.DataFrame) -> pd.Series:
        """The candidate set of each row."""
        if TEMPLATE not in rows:
            return pd.Series(next(iter(self.rankers)), index=rows.index)
        return rows[TEMPLATE].map(self.set_of)


def score_span_prompts(
    rows: pd.DataFrame, scorer: Scorer, sets: SpanSets, progress: tqdm | bool, offset: int = 0
) -> pd.DataFrame:
    """Rank each prompt's target span among the candidates, with one model (and, with several
    templates, the ensemble of each item's templates: rows indexed from `offset`); near ties
    are settled on the spans scored alone (tacit.models.ties).

    target_prob: the span's probability (exp of its log-probability) where the score is one
    (`--normalize sum` with a masked LM), else empty; target_prob_shared: the target's share of
    the candidate set (softmax of the scores over the candidates).
    """
    first = next(iter(sets.rankers))
    per_row = np.zeros((len(rows), len(sets.rankers[first].candidates.spans)))
    is_probability = True
    set_of_row = sets.of(rows).to_numpy()
    for name, ranker in sets.rankers.items():
        mine = set_of_row == name
        if not mine.any():
            continue
        templates = list(dict.fromkeys(rows.loc[mine, "prompt"]))
        scores, is_probability = ranker.scores(scorer, templates, progress)
        row_of = {t: n for n, t in enumerate(templates)}
        per_row[mine] = scores[[row_of[p] for p in rows.loc[mine, "prompt"]]]
    members = [[(sets.rankers[n], p)] for n, p in zip(set_of_row, rows["prompt"])]
    targets = _targets(rows, sets)
    counted = sets.rankers[first]
    per_row = settle_spans(scorer, members, per_row, targets[:, None].tolist(), TOP, counted)
    tables = [_span_table(rows, per_row, sets, set_of_row, targets, is_probability)]
    if sets.rankers[first].tokens:
        listed = [[t, *top] for t, top in zip(targets, best_positions(per_row, TOP).tolist())]
        tables[0][TOKENS_COLUMN] = [
            sets.rankers[name].token_cells([prompt], [chosen])[0]
            for name, prompt, chosen in zip(set_of_row, rows["prompt"], listed)
        ]
    if paraphrased(rows):
        items, mean = group_mean(per_row, rows[ITEM].to_numpy())
        ensemble = ensemble_frame(rows, offset).loc[offset + items]
        grouped: dict[object, list[tuple[SpanRanker, str]]] = {}
        for member, item in zip(members, rows[ITEM]):
            grouped.setdefault(item, []).extend(member)
        at = _targets(ensemble, sets)
        mean = settle_spans(
            scorer, [grouped[i] for i in items], mean, at[:, None].tolist(), TOP, counted
        )
        names = np.full(len(items), first)
        tables.append(_span_table(ensemble, mean, sets, names, at, is_probability))
    table = pd.concat(tables)
    table.insert(0, "model", scorer.name)
    return table


def _targets(rows: pd.DataFrame, sets: SpanSets) -> np.ndarray:
    """Each row's target: its concept's position among the candidates (the sets list the same
    concepts in the same order)."""
    first = next(iter(sets.rankers))
    index = sets.rankers[first].candidates.index()
    return np.array([index[sets.span_of[first][c]] for c in rows["target"]], dtype=np.int64)


def _span_table(
    rows: pd.DataFrame,
    per_row: np.ndarray,
    sets: SpanSets,
    set_of_row: np.ndarray,
    targets: np.ndarray,
    is_probability: bool,
) -> pd.DataFrame:
    """The rows with their targets' ranks, scores and shares, and the top five spans."""
    first = next(iter(sets.rankers))
    spans = [sets.span_of[name][c] for name, c in zip(set_of_row, rows["target"])]
    rank, target_score = rank_targets(per_row, targets)
    table = rows.copy()
    table["target_span"] = spans
    table["rank"] = rank
    table["reciprocal_rank"] = reciprocal_rank(rank)
    table["target_score"] = target_score.astype(float)
    table["target_prob"] = np.exp(target_score) if is_probability else np.nan
    table["target_prob_shared"] = shares(per_row)[np.arange(len(targets)), targets]
    table["n_candidates"] = per_row.shape[1]
    table["top5"] = [
        top_spans(per_row[[n]], sets.rankers[name].candidates.spans)[0]
        for n, name in enumerate(set_of_row)
    ]
    if paraphrased(rows):
        names = np.asarray(sets.rankers[first].candidates.spans, dtype=object)
        table[TOP1] = names[best_positions(per_row, 1)[:, 0]]
    return table[[*rows.columns, *SPAN_METRICS, *([TOP1] if paraphrased(rows) else [])]]


def score_prompts(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    *,
    progress: bool | tqdm = True,
    offset: int = 0,
) -> Scored:
    """Score every prompt with one model: the RESULT_COLUMNS table for that model (with
    several templates, `top1` too, and the ensemble of each item's templates, indexed from
    `offset`), and the work counted while scoring, near ties settled (tacit.models.ties) too.
    `target_prob_shared` reads every word's score (a softmax over the shared vocabulary), so a
    causal LM scores every word's text after the blank (tacit.models.causal_vocab)."""
    from tacit.models.answers import Needed
    from tacit.models.reduce import GroupMean, Referee, WorkCount, rank_targets

    targets = [vocab.index(t) for t in prompts["target"]]
    ids = vocab.token_ids[scorer.name]
    texts = list(prompts["prompt"])
    items = item_numbers(prompts)
    needed = Needed([[t] for t in targets], TOP_K, items, every_word=True)
    referee = Referee(scorer, texts, ids)
    work = WorkCount()
    batches = work.passing(scorer.score_vocab(texts, ids, progress=progress, needed=needed))
    if items is None:
        scores = rank_targets(batches, targets, top_k=TOP_K, device=scorer.device, referee=referee)
        table = _vocab_table(prompts, scorer.name, scores, vocab)
        return Scored(table, {**work.counts, **referee.settled.counts()})
    ensemble = GroupMean(items, scorer.device)
    scores = rank_targets(
        ensemble.passing(batches), targets, top_k=TOP_K, device=scorer.device, referee=referee
    )
    frame = ensemble_frame(prompts, offset).loc[offset + prompts[ITEM].drop_duplicates()]
    combined = rank_targets(
        [ensemble.batch()],
        [vocab.index(t) for t in frame["target"]],
        top_k=TOP_K,
        device=scorer.device,
        referee=ensemble.referee(referee),
    )
    table = pd.concat(
        [
            _vocab_table(prompts, scorer.name, scores, vocab),
            _vocab_table(frame, scorer.name, combined, vocab),
        ]
    )
    return Scored(table, {**work.counts, **referee.settled.counts()})


def _vocab_table(
    prompts: pd.DataFrame, model: str, scores: TargetScores, vocab: Vocabulary
) -> pd.DataFrame:
    words = np.asarray(vocab.words, dtype=object)
    top5 = [
        " ".join(f"{w}:{p:.4g}" for w, p in zip(words[idx], prob))
        for idx, prob in zip(scores.top_index, scores.top_prob)
    ]
    table = prompts.copy()
    table.insert(0, "model", model)
    table["rank"] = scores.rank
    table["reciprocal_rank"] = reciprocal_rank(scores.rank)
    table["target_prob"] = scores.target_prob.astype(float)
    table["target_prob_shared"] = scores.target_prob_shared.astype(float)
    table["top5"] = top5
    if paraphrased(prompts):
        table[TOP1] = words[scores.top_index[:, 0]]
    return table[["model", *prompts.columns, *METRICS, *([TOP1] if paraphrased(prompts) else [])]]
