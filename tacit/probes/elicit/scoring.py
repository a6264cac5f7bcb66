"""Elicitation's scoring, one model at a time: each prompt's gold answers ranked at the blank,
among the shared vocabulary or among candidate spans, by the ranking layer (tacit.ranking) in
one call.

Average precision of the gold answers over the candidates (`ap_vocab`: the shared vocabulary,
or the candidate spans) and over the answers any concept gave to the relation (`ap_sens`; the
two are equal for `--candidates answers`), Spearman's rho between the answers' production
frequencies and the model's scores, and the top 5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from tacit.ask.paraphrase import TOP1, ensemble_frame, item_numbers, paraphrased
from tacit.ask.suffix_top import COLUMN as BOUNDED
from tacit.ask.suffix_top import bounded_counts
from tacit.ask.tokens import TOKENS_COLUMN, token_cells
from tacit.probes.base import Scored
from tacit.probes.elicit.prompts import PROMPT_COLUMNS, parse_gold, parse_span_gold
from tacit.ranking import TOP, Question, Ranking, SharedVocabulary, SpanCandidates, rank

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer

METRICS = ["ap_vocab", "ap_sens", "spearman", "top5"]
RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, *METRICS]
SPAN_RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, "n_candidates", *METRICS]


@dataclass(frozen=True)
class Golds:
    """What elicitation ranks each prompt's blank among, and where the gold answers are there.

    candidates: the shared vocabulary, or candidate spans (one set per relation).
    sensible: relation -> positions among its candidates of every gold answer of that relation
        across concepts (what `ap_sens` ranks among).
    """

    candidates: SharedVocabulary | SpanCandidates
    sensible: Mapping[str, Sequence[int] | np.ndarray]

    @property
    def spans(self) -> bool:
        return isinstance(self.candidates, SpanCandidates)

    def parsed(self, gold: str) -> list[tuple[str, float]]:
        """A prompt's gold answers with their production frequencies."""
        return list(parse_span_gold(gold) if self.spans else parse_gold(gold))

    def positions(self, relation: str, gold: str) -> list[int]:
        """A prompt's gold answers as positions among its candidates."""
        if isinstance(self.candidates, SpanCandidates):
            index = self.candidates.sets[relation].index()
            return [index[span] for span, _ in parse_span_gold(gold)]
        vocab = self.candidates.vocabulary
        return [vocab.index(word) for word, _ in parse_gold(gold)]


def score_elicitation(
    rows: pd.DataFrame,
    scorer: Scorer,
    golds: Golds,
    *,
    progress: bool | tqdm = True,
    offset: int = 0,
) -> Scored:
    """AP over the candidates and over the relation's answers, Spearman's rho, top 5, per
    prompt (with several templates, `top1` too, and the ensemble of each item's templates,
    indexed from `offset`), near ties settled as at batch size 1 (tacit.ranking.ties), and the
    work counted while scoring."""
    relations = list(golds.sensible)
    question = Question(
        list(rows["prompt"]),
        [golds.positions(r, g) for r, g in zip(rows["relation"], rows["gold"])],
        TOP,
        item_numbers(rows),
        subsets=[golds.sensible[r] for r in relations],
        subset_of_row=[relations.index(r) for r in rows["relation"]],
        sets=list(rows["relation"]) if golds.spans else None,
    )
    ranking = rank(scorer, question, golds.candidates, progress=progress)
    tables = [_table(rows, ranking, golds)]
    if ranking.ensemble is not None:
        tables.append(_table(ensemble_frame(rows, offset), ranking.ensemble, golds))
    table = pd.concat(tables)
    table.insert(0, "model", scorer.name)
    return Scored(table, ranking.counts)


def _table(rows: pd.DataFrame, ranking: Ranking, golds: Golds) -> pd.DataFrame:
    table = rows.copy()
    extra = []
    if golds.spans:
        table["n_candidates"] = ranking.n_candidates
        extra.append("n_candidates")
    table["ap_vocab"] = ranking.ap
    table["ap_sens"] = ranking.ap_among
    table["spearman"] = [
        rank_correlation([pf for _, pf in gold], ranking.score[row, : len(gold)])
        for row, gold in enumerate(golds.parsed(g) for g in rows["gold"])
    ]
    table["top5"] = ranking.listed
    metrics = [*extra, *METRICS]
    if isinstance(golds.candidates, SharedVocabulary) and golds.candidates.suffix_top:
        table[BOUNDED] = bounded_counts(ranking)
        metrics.append(BOUNDED)
    if paraphrased(rows):
        table[TOP1] = ranking.best
        metrics.append(TOP1)
    if ranking.tokens is not None:
        table[TOKENS_COLUMN] = token_cells(ranking.tokens)
        metrics.append(TOKENS_COLUMN)
    return table[[*rows.columns, *metrics]]


def rank_correlation(pf: ArrayLike, prob: ArrayLike) -> float:
    """Spearman's rho between production frequencies and model probabilities (or any scores
    that order the answers as they do: log-probabilities).

    NaN (undefined) with fewer than 2 answers or when either side has no variance.

    Examples:
        >>> rank_correlation([3, 2, 1], [0.5, 0.2, 0.1]), rank_correlation([3, 3], [0.5, 0.2])
        (1.0, nan)
    """
    from scipy.stats import spearmanr  # scipy.stats takes a second to import: only when used

    x, y = np.asarray(pf, dtype=float), np.asarray(prob, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)
