"""Retrieval's scoring, one model at a time: each prompt's target ranked at the blank, among
the shared vocabulary (the target is one token) or among candidate spans ("<mask> has fur, is
big, and has claws." with every concept of the norms, article and all: "A bear", "An
aardvark", "Scissors"), by the ranking layer (tacit.ranking) in one call.

prompts.csv has the target's rank, its probability under the model (a vocabulary word's over
the whole vocabulary; a span's where its score is its log-probability), its share of the
candidates, and the top 5; over spans also the target's span, its score and the candidate
count, so that summaries and figures read either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.ask.paraphrase import ITEM, TEMPLATE, TOP1, ensemble_frame, item_numbers, paraphrased
from tacit.ask.suffix_top import COLUMN as BOUNDED
from tacit.ask.suffix_top import bounded_counts
from tacit.ask.tokens import TOKENS_COLUMN, token_cells
from tacit.core.metrics import reciprocal_rank
from tacit.probes.base import Scored
from tacit.probes.retrieve.prompts import PROMPT_COLUMNS
from tacit.ranking import TOP, Question, Ranking, SharedVocabulary, SpanCandidates, rank

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer

METRICS = ["rank", "reciprocal_rank", "target_prob", "target_prob_shared", "top5"]
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
class Targets:
    """What retrieval ranks each prompt's blank among, and where its target is there.

    candidates: the shared vocabulary, or candidate spans (one set per form of the blank the
        templates take: `A bear`, `a bear`, `bear`; the sets list the same concepts in the same
        order, so that the ensemble of templates whose blanks differ in form is taken
        candidate by candidate).
    position: each target (a word, or a concept) -> its position among the candidates.
    set_of: spans, several forms: template id -> its candidate set.
    span_of: spans: candidate set -> concept -> span.
    """

    candidates: SharedVocabulary | SpanCandidates
    position: Mapping[str, int]
    set_of: Mapping[str, str] | None = None
    span_of: Mapping[str, Mapping[str, str]] | None = None

    @property
    def spans(self) -> bool:
        return isinstance(self.candidates, SpanCandidates)

    def sets(self, rows: pd.DataFrame) -> list[str] | None:
        """The candidate set of each row (spans), else None."""
        if not isinstance(self.candidates, SpanCandidates):
            return None
        if self.set_of is None or TEMPLATE not in rows:
            return [next(iter(self.candidates.sets))] * len(rows)
        return [self.set_of[t] for t in rows[TEMPLATE]]

    def names(self) -> np.ndarray:
        """The candidates' names as a row's top answer (`top1`) gives them: the words, or the
        first set's spans (the same concepts in every set)."""
        if isinstance(self.candidates, SpanCandidates):
            return np.asarray(next(iter(self.candidates.sets.values())).spans, dtype=object)
        return np.asarray(self.candidates.vocabulary.words, dtype=object)


def score_prompts(
    rows: pd.DataFrame,
    scorer: Scorer,
    targets: Targets,
    *,
    progress: bool | tqdm = True,
    offset: int = 0,
) -> Scored:
    """Rank each prompt's target with one model (with several templates, the ensemble of each
    item's templates too, its rows indexed from `offset`; tacit.ask.paraphrase), near ties
    settled as at batch size 1 (tacit.ranking.ties), and the work counted while scoring.
    `target_prob_shared` reads every candidate's score (a softmax over them), so a causal LM
    scores every word's text after the blank (tacit.models.causal_words)."""
    sets = targets.sets(rows)
    question = Question(
        list(rows["prompt"]),
        [[targets.position[t]] for t in rows["target"]],
        TOP,
        item_numbers(rows),
        shares=True,
        sets=sets,
    )
    ranking = rank(scorer, question, targets.candidates, progress=progress)
    tables = [_table(rows, ranking, targets, sets)]
    if ranking.ensemble is not None:
        frame = ensemble_frame(rows, offset).loc[offset + rows[ITEM].drop_duplicates()]
        tables.append(_table(frame, ranking.ensemble, targets, question.for_groups().sets))
    table = pd.concat(tables)
    table.insert(0, "model", scorer.name)
    return Scored(table, ranking.counts)


def _table(
    rows: pd.DataFrame, ranking: Ranking, targets: Targets, sets: Sequence[str] | None
) -> pd.DataFrame:
    """The rows with their targets' ranks, probabilities and shares, and the top five."""
    table = rows.copy()
    if sets is not None and targets.span_of is not None:
        table["target_span"] = [targets.span_of[s][c] for s, c in zip(sets, rows["target"])]
    table["rank"] = ranking.rank[:, 0]
    table["reciprocal_rank"] = reciprocal_rank(ranking.rank[:, 0])
    if targets.spans:
        table["target_score"] = ranking.score[:, 0].astype(float)
    table["target_prob"] = ranking.prob[:, 0].astype(float)
    assert ranking.share is not None, "retrieval reads the target's share"
    table["target_prob_shared"] = ranking.share[:, 0].astype(float)
    if targets.spans:
        table["n_candidates"] = ranking.n_candidates
    table["top5"] = ranking.listed
    metrics = SPAN_METRICS if targets.spans else METRICS
    extra = []
    if isinstance(targets.candidates, SharedVocabulary) and targets.candidates.suffix_top:
        table[BOUNDED] = bounded_counts(ranking)
        extra.append(BOUNDED)
    if paraphrased(rows):
        table[TOP1] = targets.names()[ranking.top_index[:, 0]]
        extra.append(TOP1)
    if ranking.tokens is not None:
        table[TOKENS_COLUMN] = token_cells(ranking.tokens)
        extra.append(TOKENS_COLUMN)
    return table[[*rows.columns, *metrics, *extra]]
