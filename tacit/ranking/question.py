"""What a probe asks of the ranking layer, and the plain answer it gets back (numpy only).

A Question is a list of prompts (each with one blank), the candidates they are ranked among,
and what is read of each ranking: the candidates a probe cares about (`anchors`: retrieval's
target, elicitation's and Prince's gold answers, every candidate of an item), the top k, the
average precision of the anchors (over every candidate, and over a subset), their share of the
candidates, and the ensemble of a group of prompts (an item's templates). A Ranking holds, per
prompt and per group, what was read, and the work the scoring ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tacit.models.answers import SpanTokens
    from tacit.vocab.shared import Vocabulary

TOP = 5  # candidates listed per prompt in prompts.csv


@dataclass(frozen=True)
class CandidateSet:
    """Spans every prompt of a set ranks, and where they came from (`concepts`, `answers`, a
    file's path, `items`)."""

    source: str
    spans: list[str]

    @property
    def text(self) -> str:
        """candidates.txt: one span a line."""
        return "".join(f"{span}\n" for span in self.spans)

    @property
    def sha256(self) -> str:
        from tacit.core.files import sha256_bytes

        return sha256_bytes(self.text.encode("utf-8"))

    def index(self) -> dict[str, int]:
        return {span: n for n, span in enumerate(self.spans)}

    def record(self) -> dict[str, Any]:
        return {"source": self.source, "size": len(self.spans), "sha256": self.sha256}


@dataclass(frozen=True)
class SharedVocabulary:
    """The shared vocabulary's one-token words as the candidates of every prompt's blank.

    in_place: where a model cannot read the blank where it is (a causal LM, a blank inside the
        sentence), each word is put in it and its sentence scored (Scorer.score_words):
        Prince's person prompt.
    suffix_top: a budget of the exact scores a family that pays per word (a causal LM's text
        after the blank) computes beyond the top k: the K words of highest upper bound
        (`--suffix-top K`, tacit.models.causal_words; 0: every score a rank reads exact).
        Ranks counted against bounds are said (Ranking.bounded).
    """

    vocabulary: Vocabulary
    in_place: bool = False
    suffix_top: int = 0


@dataclass(frozen=True)
class Question:
    """What a probe reads of each prompt's ranking.

    prompts: texts with one `<mask>` each (repeated texts are scored once).
    anchors: per prompt, the positions among its candidates whose rank, score and probability
        are read (retrieval's target, elicitation's gold answers); their average precision too.
    top_k: how many of each prompt's best candidates are listed.
    groups: per prompt, its group (the templates of one item, numbered from 0 in order of
        first appearance), whose ensemble is ranked too (Ranking.ensemble: per candidate, the
        mean over the group's prompts of its log-probability; spans: of its score), the
        group's anchors those of its first prompt; None: no ensemble.
    subsets: positions among the candidates that a second average precision is taken among
        (elicitation: the answers any concept gave to the relation), and `subset_of_row` the
        subset of each prompt.
    shares: read each anchor's share of the candidates (a softmax over every candidate's
        score: a family that bounds the scores nobody reads must score them all).
    sets: span candidates only: per prompt, the name of the candidate set it ranks (None: the
        only one).
    """

    prompts: Sequence[str]
    anchors: Sequence[Sequence[int]]
    top_k: int = TOP
    groups: Sequence[int] | None = None
    subsets: Sequence[Sequence[int] | np.ndarray] = ()
    subset_of_row: Sequence[int] | None = None
    shares: bool = False
    sets: Sequence[str] | None = None

    def __post_init__(self) -> None:
        n = len(self.prompts)
        for name in ("anchors", "groups", "subset_of_row", "sets"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise ValueError(f"{name}: one per prompt ({len(value)} for {n} prompts)")

    @property
    def first_of_group(self) -> np.ndarray:
        """The first prompt of each group, in group order."""
        assert self.groups is not None, "a question without groups"
        groups = np.asarray(self.groups)
        return np.unique(groups, return_index=True)[1]

    def for_groups(self) -> Question:
        """The question of the ensemble: one row per group, its first prompt's anchors and
        subset (every prompt of a group asks the same)."""
        first = self.first_of_group.tolist()
        return Question(
            ["" for _ in first],
            [self.anchors[i] for i in first],
            self.top_k,
            None,
            self.subsets,
            None if self.subset_of_row is None else [self.subset_of_row[i] for i in first],
            self.shares,
            None if self.sets is None else [self.sets[i] for i in first],
        )


@dataclass(frozen=True)
class Ranking:
    """What a Question read, per prompt (and, in `ensemble`, per group), as numpy arrays.

    rank: [rows x anchors] int64: 1 + the candidates scored higher, or as high at an earlier
        position (the tie rule, tacit.ranking.ties); 0 past a row's anchors.
    score: [rows x anchors] what candidates are ranked by: a vocabulary word's log-probability
        under the model's whole vocabulary; a span's normalised score (`--normalize`).
    prob: [rows x anchors] the anchor's probability under the model: a word's over the whole
        vocabulary; a span's where its score is its log-probability (`sum` with a family that
        scores the span itself), else NaN.
    share: [rows x anchors] the anchor's share of the candidates (a softmax over them), where
        the question asked for shares, else None.
    ap: [rows] average precision of the anchors among every candidate.
    ap_among: [rows] the same among the row's subset (NaN without one).
    top_index: [rows x top_k] each row's best candidates, in the tie rule's order (a row of
        fewer candidates lists them all, the rest of its row padded with 0).
    top_value: [rows x top_k] what is listed beside them: a word's probability under the
        whole vocabulary, a span's score.
    listed: each row's top_k as prompts.csv prints them (`word:prob ...`, `span:score | ...`).
    best: each row's best candidate's name.
    n_candidates: [rows] how many candidates each row ranked.
    tokens: span candidates with `tokens`: per row, each of its anchors and top candidates
        with its tokens and their terms, (span, SpanTokens), else None.
    counts: the work the scoring ran and the near ties settled, for the model's record.
    ensemble: the groups' Ranking (one row per group, in group order), or None.
    bounded: [rows x anchors] bool: True where the anchor's rank is an upper bound of its rank
        (counted against words whose scores are bounds: SharedVocabulary.suffix_top), so its average
        precision a lower bound; None where every rank is exact by construction.
    top_bounded: [rows] bool: True where a word left at its bound could enter the row's top k
        (listed: the best of the words scored); None as `bounded`.
    """

    rank: np.ndarray
    score: np.ndarray
    prob: np.ndarray
    share: np.ndarray | None
    ap: np.ndarray
    ap_among: np.ndarray
    top_index: np.ndarray
    top_value: np.ndarray
    listed: list[str]
    best: list[str]
    n_candidates: np.ndarray
    tokens: list[list[tuple[str, SpanTokens]]] | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    ensemble: Ranking | None = None
    bounded: np.ndarray | None = None
    top_bounded: np.ndarray | None = None


def padded(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, positions of any number ([rows x widest] int64, padded with 0), and where they
    are (a mask)."""
    width = max((len(p) for p in lists), default=0)
    index = np.zeros((len(lists), width), dtype=np.int64)
    mask = np.zeros((len(lists), width), dtype=bool)
    for row, positions in enumerate(lists):
        index[row, : len(positions)] = list(positions)
        mask[row, : len(positions)] = True
    return index, mask
