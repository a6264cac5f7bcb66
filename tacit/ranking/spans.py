"""Ranking among candidate spans of any length, scored exactly in each prompt's blank by any
model family (Scorer.score_spans), and the score they are ranked by (`--normalize`): `sum`,
the span's log-probability (a causal model's whole sentence, which ranks spans as P(span |
the rest); a seq2seq model's infilling target); `mean`, per token; `pmi`, `sum` minus the
span's `sum` in the prompt's property-free form, so that spans likely anywhere do not win.
Near ties are settled on each span's sentence alone (tacit.ranking.ties); an ensemble of
templates is the mean of its prompts' scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from tacit.core.blank import MASK
from tacit.core.metrics import average_precision
from tacit.ranking.question import CandidateSet, Question, Ranking, padded

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.answers import SpanScores, SpanTokens
    from tacit.models.base import Scorer


def span_alone(template: str) -> str:
    """A template without its context, for `--normalize pmi`: the span alone, '<mask>.'"""
    return f"{MASK}."


@dataclass
class SpanCandidates:
    """Candidate spans as what the blank is ranked among: one or several named sets (each
    prompt ranks one: Question.sets), scored as `scoring` says (a masked LM's `l2r` or
    `independent`), normalised as `normalize` says, `pmi` against `baseline_of(template)`;
    with `tokens`, each listed candidate's per-token scores are kept too. One per run: it keeps
    what it computed once per model (pmi's baselines, spans scored alone) across chunks."""

    sets: Mapping[str, CandidateSet]
    scoring: str = "l2r"
    normalize: str = "sum"
    baseline_of: Callable[[str], str] = span_alone
    tokens: bool = False
    rankers: dict[str, SpanRanker] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rankers = {
            name: SpanRanker(chosen, self.scoring, self.normalize, self.baseline_of)
            for name, chosen in self.sets.items()
        }


class SpanRanker:
    """One candidate set's scores in a probe's templates, normalised as asked, with the
    property-free baseline of `pmi` computed once per model; and the same scores of one
    template and span alone, which the tie rule settles near ties on (settle_spans)."""

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
        self._alone: dict[tuple[str, str, int], float] = {}
        # the (model, template) pairs with a span scored alone: the prompts the tie rule ran
        self.templates_alone: set[tuple[str, str]] = set()
        # (model, template) -> the largest |log-probability| its scores were made of
        self.scale: dict[tuple[str, str], float] = {}
        self.work: dict[str, int] = {}

    def scores(
        self, scorer: Scorer, templates: Sequence[str], bar: tqdm | bool, tokens: bool = False
    ) -> tuple[np.ndarray, bool, np.ndarray | None]:
        """[templates x candidates] scores to rank by (see the module docstring), whether they
        are log-probabilities of the spans themselves (`sum`, with a family that scores the
        span rather than its whole sentence), and with `tokens`, each pair's SpanTokens."""
        spans = self.candidates.spans
        shown = bar if isinstance(bar, bool) else not bar.disable  # the run's bar: its own moves
        raw = scorer.score_spans(
            templates, spans, scoring=self.scoring, progress=shown, tokens=tokens
        )
        self._count(raw)
        if not isinstance(bar, bool):
            bar.update(len(templates))  # the run's bar counts prompt texts
        baselines = None
        if self.normalize == "pmi":
            free = [self.baseline_of(t) for t in templates]
            missing = sorted({f for f in free if (scorer.name, f) not in self._baselines})
            if missing:
                got = scorer.score_spans(missing, spans, scoring=self.scoring, progress=False)
                self._count(got)
                for n, text in enumerate(missing):
                    self._baselines[(scorer.name, text)] = whole(got)[n]
            baselines = np.stack([self._baselines[(scorer.name, f)] for f in free])
        magnitude = np.abs(whole(raw)) + (0 if baselines is None else np.abs(baselines))
        largest = magnitude.max(axis=1).tolist()
        self.scale.update({(scorer.name, t): m for t, m in zip(templates, largest)})
        is_probability = self.normalize == "sum" and raw.sentence is None
        return self._normalised(raw, baselines), is_probability, raw.tokens

    def _normalised(self, raw: SpanScores, baselines: np.ndarray | None) -> np.ndarray:
        """The scores spans are ranked by (`--normalize`), from their log-probabilities and
        those in the property-free baseline (`pmi`)."""
        if self.normalize == "mean":
            return raw.span / raw.n_tokens
        if baselines is None:
            return whole(raw)
        return whole(raw) - baselines

    def alone(self, scorer: Scorer, template: str, positions: Sequence[int]) -> np.ndarray:
        """The scores of these candidates in the template, each span's sentence scored alone
        (a batch of one, the whole sentence: the canonical scores of tacit.ranking.ties), its
        baseline too (`pmi`); kept per model, template and span."""
        from tacit.models.batching import one_at_a_time

        spans = self.candidates.spans
        for position in positions:
            key = (scorer.name, template, position)
            if key in self._alone:
                continue
            texts = [template] + ([self.baseline_of(template)] if self.normalize == "pmi" else [])
            with one_at_a_time(scorer):
                got = [
                    scorer.score_spans(
                        [text], [spans[position]], scoring=self.scoring, progress=False, cache=False
                    )
                    for text in texts
                ]
            baseline = whole(got[1]) if len(got) > 1 else None
            self._alone[key] = float(self._normalised(got[0], baseline)[0, 0])
            self.templates_alone.add((scorer.name, template))
        return np.array([self._alone[(scorer.name, template, p)] for p in positions])

    def _count(self, scores: SpanScores) -> None:
        for key, value in scores.work.items():
            self.work[key] = self.work.get(key, 0) + value

    def take_counts(self) -> dict[str, int]:
        """The work run since the last call (SpanScores.work, and near ties settled), for the
        model's record."""
        counts, self.work = self.work, {}
        return counts


def whole(scores: SpanScores) -> np.ndarray:
    """What `sum` ranks spans by: the whole sentence's log-probability (a causal model), else
    the span's."""
    return scores.sentence if scores.sentence is not None else scores.span


Member = tuple[SpanRanker, str]  # a prompt's scores: its candidate set's ranker and template


def settle_spans(
    scorer: Scorer,
    members: Sequence[Sequence[Member]],
    scores: np.ndarray,
    anchors: Sequence[Sequence[int]],
    top_k: int,
    counted: dict[str, int],
) -> np.ndarray:
    """`scores` ([rows x candidates]) with their near ties settled (tacit.ranking.ties) around
    each row's anchors (targets, gold answers) and top_k: each row is the mean of its members'
    (ranker, template) scores (one member: a prompt; several: an ensemble of templates), and a
    near score is put in place by the mean of theirs alone. The counts are added to
    `counted`."""
    from tacit.ranking.ties import Settled, relative_tolerance, settle_array

    settled = Settled()
    relative = relative_tolerance(scorer)
    scale = np.array([max(r.scale[(scorer.name, t)] for r, t in row) for row in members])
    out = np.array(scores, dtype=np.float64)

    rankers = list({id(r): r for row in members for r, _ in row}.values())
    before = sum(len(r.templates_alone) for r in rankers)

    def canonical(row: int, positions: list[int]) -> np.ndarray:
        return np.mean([r.alone(scorer, t, positions) for r, t in members[row]], axis=0)

    settle_array(out, anchors, top_k, relative * np.maximum(scale, 1.0), canonical, settled)
    settled.prompts = sum(len(r.templates_alone) for r in rankers) - before
    for key, value in settled.counts().items():
        counted[key] = counted.get(key, 0) + value
    return out


def rank_candidates(scores: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
    """[rows x m] the rank of each of `positions` (default: every candidate) in its row, in
    the tie rule's order (tacit.ranking.ties.ranks)."""
    import torch

    from tacit.ranking.ties import ranks

    if positions is None:
        positions = np.tile(np.arange(scores.shape[1]), (len(scores), 1))
    table = torch.from_numpy(np.asarray(scores, dtype=np.float64))
    return ranks(table, torch.as_tensor(positions, dtype=torch.long)).numpy()


def shares(scores: np.ndarray) -> np.ndarray:
    """Softmax of each row's scores over the candidate set (a target's share of the set)."""
    shifted = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


def best_positions(scores: np.ndarray, k: int) -> np.ndarray:
    """[rows x k] each row's k best candidates in the tie rule's order (tacit.ranking.ties)."""
    import torch

    from tacit.ranking.ties import top

    return top(torch.from_numpy(np.asarray(scores, dtype=np.float64)), k)[1].numpy()


def top_spans(scores: np.ndarray, spans: Sequence[str], k: int) -> list[str]:
    """'A bear:-3.21 | A dog:-4.5 | ...': each row's k best candidates with their scores
    (spans hold spaces, so ` | ` separates them)."""
    names = np.asarray(spans, dtype=object)
    return [
        " | ".join(f"{names[i]}:{row[i]:.4g}" for i in order)
        for row, order in zip(scores, best_positions(scores, k))
    ]


def mean_of(rows: Sequence[np.ndarray]) -> np.ndarray:
    """The mean of a group's rows of scores, added in order: the ensemble of its templates."""
    total = np.zeros_like(rows[0], dtype=np.float64)
    for row in rows:
        total += row
    return total / len(rows)


@dataclass
class _Rows:
    """Rows of one size of candidate set, gathered for one matrix: their positions among the
    question's rows, their scores, the members their scores are made of, their set's names."""

    at: list[int] = field(default_factory=list)
    scores: list[np.ndarray] = field(default_factory=list)
    members: list[list[Member]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


def rank_spans(
    scorer: Scorer,
    question: Question,
    candidates: SpanCandidates,
    progress: bool | tqdm = True,
) -> Ranking:
    """The question over candidate spans in each prompt's blank, with one model
    (tacit.ranking.rank): each set's distinct templates scored once, near ties settled on the
    spans scored alone, and the ensemble of each group's templates."""
    only = next(iter(candidates.rankers))
    set_of_row = (
        list(question.sets) if question.sets is not None else [only] * len(question.prompts)
    )
    per_row: list[np.ndarray] = [np.empty(0)] * len(set_of_row)
    tokens_of: dict[tuple[str, str], np.ndarray] = {}
    is_probability = True
    for name, ranker in candidates.rankers.items():
        mine = [n for n, s in enumerate(set_of_row) if s == name]
        if not mine:
            continue
        templates = list(dict.fromkeys(question.prompts[n] for n in mine))
        scores, is_probability, tokens = ranker.scores(
            scorer, templates, progress, candidates.tokens
        )
        row_of = {t: n for n, t in enumerate(templates)}
        for n in mine:
            per_row[n] = scores[row_of[question.prompts[n]]]
        if tokens is not None:
            tokens_of.update({(name, t): tokens[row_of[t]] for t in templates})
    counts: dict[str, int] = {}
    members = [[(candidates.rankers[s], p)] for s, p in zip(set_of_row, question.prompts)]
    ranking = _ranked(
        scorer,
        question,
        candidates,
        set_of_row,
        per_row,
        members,
        is_probability,
        counts,
        tokens_of if candidates.tokens else None,
    )
    if question.groups is not None:
        groups = np.asarray(question.groups)
        first = question.first_of_group
        grouped: list[list[Member]] = [[] for _ in first]
        for member, group in zip(members, groups):
            grouped[group].extend(member)
        means = [
            mean_of([per_row[n] for n in np.flatnonzero(groups == g)]) for g in range(len(first))
        ]
        ensemble = _ranked(
            scorer,
            question.for_groups(),
            candidates,
            [set_of_row[n] for n in first],
            means,
            grouped,
            is_probability,
            counts,
            None,
        )
        ranking = replace(ranking, ensemble=ensemble)
    for ranker in candidates.rankers.values():
        for key, value in ranker.take_counts().items():
            counts[key] = counts.get(key, 0) + value
    return replace(ranking, counts=counts)


def _ranked(
    scorer: Scorer,
    question: Question,
    candidates: SpanCandidates,
    set_of_row: Sequence[str],
    per_row: list[np.ndarray],
    members: Sequence[Sequence[Member]],
    is_probability: bool,
    counted: dict[str, int],
    tokens_of: Mapping[tuple[str, str], np.ndarray] | None,
) -> Ranking:
    """Each row's scores settled (in place in `per_row`), ranked and read as the question
    asks; rows whose sets have the same size share one matrix."""
    n, k = len(per_row), question.top_k
    blocks: dict[int, _Rows] = {}
    for row, scores in enumerate(per_row):
        block = blocks.setdefault(len(scores), _Rows())
        block.at.append(row)
        block.scores.append(scores)
        block.members.append(list(members[row]))
        block.names.append(set_of_row[row])
    anchors, mask = padded(question.anchors)
    out = _Filled(n, anchors.shape[1], k, question.shares)
    for block in blocks.values():
        at = np.asarray(block.at)
        wanted = [list(question.anchors[r]) for r in block.at]
        settled = settle_spans(scorer, block.members, np.stack(block.scores), wanted, k, counted)
        for r, scores in zip(block.at, settled):
            per_row[r] = scores
        where, real = anchors[at], mask[at]
        rows = np.arange(len(at))[:, None]
        out.rank[at] = np.where(real, rank_candidates(settled, where), 0)
        out.score[at] = np.where(real, settled[rows, where], np.nan)
        if is_probability:
            out.prob[at] = np.where(real, np.exp(settled[rows, where]), np.nan)
        if out.share is not None:
            out.share[at] = np.where(real, shares(settled)[rows, where], np.nan)
        subsets = question.subset_of_row
        for i, r in enumerate(block.at):
            relevant = np.zeros(settled.shape[1], dtype=bool)
            relevant[list(question.anchors[r])] = True
            out.ap[r] = average_precision(settled[i], relevant)
            if subsets is not None:
                among = np.zeros(settled.shape[1], dtype=bool)
                among[list(question.subsets[subsets[r]])] = True
                out.ap_among[r] = average_precision(settled[i][among], relevant[among])
        best = best_positions(settled, k) if k else np.zeros((len(at), 0), dtype=np.int64)
        out.top_index[at, : best.shape[1]] = best  # a set smaller than k lists all it has
        out.top_value[at, : best.shape[1]] = settled[rows, best]
        for i, r in enumerate(block.at):
            spans = candidates.sets[block.names[i]].spans
            out.listed[r] = top_spans(settled[[i]], spans, k)[0] if k else ""
            out.best[r] = spans[best[i, 0]] if k else ""
            out.n_candidates[r] = len(spans)
            if tokens_of is not None:
                chosen = [*question.anchors[r], *best[i].tolist()]
                found = tokens_of[(block.names[i], question.prompts[r])]
                out.tokens[r] = [(spans[p], found[p]) for p in chosen]
    return out.ranking(tokens_of is not None)


class _Filled:
    """A Ranking's arrays, filled block by block."""

    def __init__(self, n: int, width: int, k: int, shares: bool) -> None:
        self.rank = np.zeros((n, width), dtype=np.int64)
        self.score = np.full((n, width), np.nan)
        self.prob = np.full((n, width), np.nan)
        self.share = np.full((n, width), np.nan) if shares else None
        self.ap = np.full(n, np.nan)
        self.ap_among = np.full(n, np.nan)
        self.top_index = np.zeros((n, k), dtype=np.int64)
        self.top_value = np.zeros((n, k))
        self.listed = [""] * n
        self.best = [""] * n
        self.n_candidates = np.zeros(n, dtype=np.int64)
        self.tokens: list[list[tuple[str, SpanTokens]]] = [[] for _ in range(n)]

    def ranking(self, with_tokens: bool) -> Ranking:
        return Ranking(
            rank=self.rank,
            score=self.score,
            prob=self.prob,
            share=self.share,
            ap=self.ap,
            ap_among=self.ap_among,
            top_index=self.top_index,
            top_value=self.top_value,
            listed=self.listed,
            best=self.best,
            n_candidates=self.n_candidates,
            tokens=self.tokens if with_tokens else None,
        )
