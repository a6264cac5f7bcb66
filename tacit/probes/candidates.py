"""Candidate sets of spans, and scoring a probe's prompts over them (any model family).

A candidate set is a list of text spans put in the blank of every prompt: `concepts` (every
concept of the norms with its article, "A bear", "An aardvark", "Scissors"), `answers` (every
answer to an elicitation relation over all concepts, "fur", "four legs"), or a FILE (one span
a line). The scorer gives each span's log-probability (Scorer.score_spans); this module turns
it into the score spans are ranked by (`--normalize`):

- `sum`: the span's log-probability (a causal model: the whole sentence's, which ranks spans
  as P(span | the rest of the sentence));
- `mean`: the span's log-probability per token;
- `pmi`: `sum` minus the same span's `sum` in the prompt's property-free form (retrieval:
  "<span>."; elicitation: the prompt with "it" for the concept), so that spans likely
  anywhere do not win for being likely.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError, shorten
from tacit.core.files import sha256_bytes
from tacit.core.options import NORMALIZATIONS, SPAN_SCORINGS, check_choice
from tacit.lexicon import noun_phrase, sentence_start
from tacit.norms.phrasing import answer_spans

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer
    from tacit.norms.reader import NormSet

TOP = 5  # candidates listed per prompt in prompts.csv


@dataclass(frozen=True)
class CandidateSet:
    """The spans every prompt ranks, and where they came from (`concepts`, `answers`, a file)."""

    source: str
    spans: list[str]

    @property
    def text(self) -> str:
        """candidates.txt: one span a line."""
        return "".join(f"{span}\n" for span in self.spans)

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.text.encode("utf-8"))

    def index(self) -> dict[str, int]:
        return {span: n for n, span in enumerate(self.spans)}

    def record(self) -> dict[str, Any]:
        return {"source": self.source, "size": len(self.spans), "sha256": self.sha256}


def read_candidates(path: str | Path) -> CandidateSet:
    """A FILE of candidates, one span a line (UTF-8); blank lines and repeats are errors that
    name the line, so that the set scored is exactly the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TacitError(f"--candidates {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise TacitError(f"--candidates {path}: cannot read it as UTF-8 text ({err})") from None
    spans: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        span = line.strip()
        if not span:
            raise TacitError(f"{path}, line {number}: a blank line (one candidate a line)")
        if span in seen:
            raise TacitError(f"{path}, line {number}: {shorten(span)!r} repeats line {seen[span]}")
        seen[span] = number
        spans.append(span)
    if not spans:
        raise TacitError(f"--candidates {path}: the file names no candidate")
    return CandidateSet(str(path), spans)


def concept_candidates(
    norms: NormSet, concepts: Sequence[str], articles: Mapping[str, str] | None = None
) -> tuple[CandidateSet, dict[str, str]]:
    """Every concept of the norms as a sentence-initial span ("A bear"), and each given
    concept's span. Two senses with one name read the same: one candidate, the target of
    both concepts' prompts."""
    span_of = {c: sentence_start(noun_phrase(c, articles)) for c in norms.concepts}
    spans = list(dict.fromkeys(span_of.values()))
    return CandidateSet("concepts", spans), {c: span_of[c] for c in concepts}


def relation_answers(norms: NormSet, relation: str) -> pd.DataFrame:
    """`concept, span, pf` of every answer to the relation (a span given by several features
    of a concept keeps the highest pf)."""
    table = norms.table[norms.table["relation"] == relation]
    rows = [(concept, span, pf)
            for concept, answer, pf in zip(table["concept"], table["answer"], table["pf"])
            for span in answer_spans(answer)]  # fmt: skip
    answers = pd.DataFrame(rows, columns=["concept", "span", "pf"])
    return (answers.sort_values("pf", ascending=False, kind="stable")
            .drop_duplicates(["concept", "span"]).reset_index(drop=True))  # fmt: skip


def check_span_options(span_scoring: str, normalize: str) -> None:
    check_choice("--span-scoring", span_scoring, SPAN_SCORINGS)
    check_choice("--normalize", normalize, NORMALIZATIONS)


class SpanRanker:
    """One model's scores of the candidates in a probe's templates, normalised as asked, with
    the property-free baseline of `pmi` computed once per model."""

    def __init__(
        self,
        candidates: CandidateSet,
        scoring: str,
        normalize: str,
        baseline_of: Callable[[str], str],
    ) -> None:
        self.candidates, self.scoring, self.normalize = candidates, scoring, normalize
        self.baseline_of = baseline_of  # template -> its property-free form
        self._baselines: dict[tuple[str, str], np.ndarray] = {}
        self.work: dict[str, int] = {}

    def scores(self, scorer: Scorer, templates: Sequence[str], bar: tqdm | bool) -> np.ndarray:
        """[templates x candidates] scores to rank by (see the module docstring)."""
        spans = self.candidates.spans
        raw = scorer.score_spans(templates, spans, scoring=self.scoring, progress=False)
        self._count(scorer)
        if not isinstance(bar, bool):
            bar.update(len(templates))  # the run's bar counts prompt texts
        base = raw.sentence if raw.sentence is not None else raw.span
        if self.normalize == "mean":
            return raw.span / raw.n_tokens
        if self.normalize == "sum":
            return base
        free = [self.baseline_of(t) for t in templates]
        missing = sorted({f for f in free if (scorer.name, f) not in self._baselines})
        if missing:
            got = scorer.score_spans(missing, spans, scoring=self.scoring, progress=False)
            self._count(scorer)
            got_base = got.sentence if got.sentence is not None else got.span
            for n, text in enumerate(missing):
                self._baselines[(scorer.name, text)] = got_base[n]
        return base - np.stack([self._baselines[(scorer.name, f)] for f in free])

    def _count(self, scorer: Scorer) -> None:
        for key, value in scorer.span_work.items():
            self.work[key] = self.work.get(key, 0) + value

    def take_counts(self) -> dict[str, int]:
        """The work run since the last call (Scorer.span_work), for the model's record."""
        counts, self.work = self.work, {}
        return counts


def rank_targets(scores: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rank, target score) of each row's target among the candidates: rank is 1 + the number
    of candidates scored strictly higher."""
    target_score = scores[np.arange(len(targets)), targets]
    return 1 + (scores > target_score[:, None]).sum(axis=1), target_score


def shares(scores: np.ndarray) -> np.ndarray:
    """Softmax of each row's scores over the candidate set (a target's share of the set)."""
    shifted = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


def top_spans(scores: np.ndarray, spans: Sequence[str], k: int = TOP) -> list[str]:
    """'A bear:-3.21 | A dog:-4.5 | ...': each row's k best candidates with their scores
    (spans hold spaces, so ` | ` separates them)."""
    names = np.asarray(spans, dtype=object)
    best = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return [" | ".join(f"{names[i]}:{row[i]:.4g}" for i in order)
            for row, order in zip(scores, best)]  # fmt: skip
