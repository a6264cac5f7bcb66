"""Ranking over the shared vocabulary: batches of scored blanks (ScoredBatch) reduced on the
scorer's device, so that only small per-prompt results come back to the CPU: the anchors'
ranks, log-probabilities and probabilities, their share of the shared vocabulary, their
average precision, and the top-k words; a few label words' distribution (cloze). Ranks and
top-k lists follow the tie rule (tacit.ranking.ties): the comparisons batch noise could flip
are settled on the prompts scored alone (a Referee)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import torch

from tacit.models.answers import MARGIN, Needed, ScoredBatch
from tacit.models.batching import one_at_a_time
from tacit.ranking.question import Question, Ranking, SharedVocabulary
from tacit.ranking.ties import (
    Settled,
    padded_positions,
    ranks,
    relative_tolerance,
    settle_near,
    tolerance,
    top,
)

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer


class Settles:
    """Settles the near ties of a reduction's rows (tacit.ranking.ties) on `canonical` scores."""

    relative: float
    settled: Settled

    def canonical(self, row: int, positions: list[int]) -> torch.Tensor:
        """Row `row`'s canonical scores at these shared-vocabulary positions."""
        raise NotImplementedError

    def prepare(self, requests: list[tuple[int, list[int]]]) -> None:
        """Told every (row, positions) `canonical` is about to be asked for: a referee that can
        compute several at once does so here (Referee: side by side, one per CPU thread)."""

    def settle(
        self,
        scores: torch.Tensor,
        rows: torch.Tensor,
        anchors: torch.Tensor,
        anchor_mask: torch.Tensor,
        top_k: int,
        fixed: torch.Tensor | None = None,
    ) -> None:
        """Settle the near ties of `scores` ([rows x shared vocabulary], the rows numbered
        `rows`) around their anchors and top_k, in place (`fixed`: scores canonical already)."""
        numbers = rows.tolist()
        settle_near(
            scores,
            anchors,
            anchor_mask,
            top_k,
            tolerance(scores, self.relative),
            lambda row, positions: self.canonical(numbers[row], positions),
            self.settled,
            fixed,
            lambda requests: self.prepare([(numbers[row], at) for row, at in requests]),
        )


class Referee(Settles):
    """The canonical scores the tie rule settles near ties on: each prompt scored alone, in a
    batch of one (score_vocab; with `words`, score_words, where a word put in the blank is its
    own sentence, scored alone too). Values are kept per (prompt text, position), so a text is
    run once per set of positions asked."""

    def __init__(
        self,
        scorer: Scorer,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        words: Sequence[str] | None = None,
    ) -> None:
        self.scorer, self.prompts, self.vocab_ids, self.words = scorer, prompts, vocab_ids, words
        self.relative = relative_tolerance(scorer)
        self.settled = Settled()
        self._known: dict[tuple[str, int], float] = {}
        self._scored: set[str] = set()  # the prompt texts scored alone, counted once each

    def canonical(self, row: int, positions: list[int]) -> torch.Tensor:
        """The scores of prompt `row` at these shared-vocabulary positions, scored alone."""
        prompt = self.prompts[row]
        missing = self._missing(prompt, positions)
        if missing:
            with one_at_a_time(self.scorer):
                self._keep(prompt, self._alone(prompt, missing))
        return torch.tensor([self._known[(prompt, p)] for p in positions])

    def prepare(self, requests: list[tuple[int, list[int]]]) -> None:
        """The prompts of `requests` not known yet, scored alone side by side, one worker per
        CPU thread the run has (`--threads`), where the family can
        (Scorer.scores_alone_concurrently). Each worker's pass is a batch of one on one thread,
        the very computation `canonical` runs, so the values are the same: settling a batch's
        rows then takes the passes' time shared among the threads, not each in turn."""
        work: dict[str, set[int]] = {}
        for row, positions in requests:
            prompt = self.prompts[row]
            work.setdefault(prompt, set()).update(self._missing(prompt, positions))
        todo = {prompt: sorted(missing) for prompt, missing in work.items() if missing}
        workers = min(torch.get_num_threads(), len(todo))
        if workers < 2 or not self.scorer.scores_alone_concurrently():
            return  # canonical computes each in turn
        with one_at_a_time(self.scorer), ThreadPoolExecutor(workers) as pool:
            for prompt, values in zip(todo, pool.map(self._alone, todo, todo.values())):
                self._keep(prompt, values)

    def _missing(self, prompt: str, positions: list[int]) -> list[int]:
        return [p for p in positions if (prompt, p) not in self._known]

    def _keep(self, prompt: str, values: dict[int, float]) -> None:
        """Keep a prompt's scores alone, counting the prompt once."""
        if prompt not in self._scored:
            self._scored.add(prompt)
            self.settled.prompts += 1
        self._known.update({(prompt, p): value for p, value in values.items()})

    def _alone(self, prompt: str, positions: list[int]) -> dict[int, float]:
        """The prompt's scores at `positions`, scored alone (inside one_at_a_time): a word put
        in the blank is a sentence of its own, each alone; else one pass."""
        one_each = self.words is not None and not self.scorer.reads_blank(prompt)
        values: dict[int, float] = {}
        for group in [[p] for p in positions] if one_each else [positions]:
            values.update(zip(group, self._score(prompt, group).tolist()))
        return values

    def _score(self, prompt: str, positions: list[int]) -> torch.Tensor:
        ids = self.vocab_ids[positions]
        if self.words is None:
            batches = self.scorer.score_vocab([prompt], ids, progress=False)
        else:
            words = [self.words[p] for p in positions]
            batches = self.scorer.score_words([prompt], ids, words, progress=False)
        (batch,) = list(batches)
        return torch.as_tensor(batch.shared[0]).float().cpu()  # a family may give numpy


def on_device(batches: Iterable[ScoredBatch], device: torch.device) -> Iterator[ScoredBatch]:
    """Each batch with its arrays as torch tensors on `device` (a family that runs its model in
    this process gives them there already: nothing is copied; another gives numpy arrays)."""
    for batch in batches:
        yield ScoredBatch(
            rows=torch.as_tensor(batch.rows, device=device),
            batch_rows=torch.as_tensor(batch.batch_rows, device=device),
            shared=torch.as_tensor(batch.shared, device=device),
            log_z=torch.as_tensor(batch.log_z, device=device),
            cut=batch.cut,
            work=batch.work,
            exact=None if batch.exact is None else torch.as_tensor(batch.exact, device=device),
            fixed=None if batch.fixed is None else torch.as_tensor(batch.fixed, device=device),
        )


def average_precision_rows(
    scores: torch.Tensor,
    gold: torch.Tensor,
    gold_mask: torch.Tensor,
    among: torch.Tensor | None = None,
) -> torch.Tensor:
    """tacit.core.metrics.average_precision for each row of a batch, on the scores' device.

    Args:
        scores: [rows x words] scores.
        gold: [rows x k] positions of each row's relevant words, padded.
        gold_mask: [rows x k] True where `gold` holds a real position.
        among: optional [rows x words] mask: rank only among these words (the relevant ones
            must be among them).
    """
    gold_scores = scores.gather(1, gold)
    at_or_above = scores.unsqueeze(1) >= gold_scores.unsqueeze(2)  # rows x k x words
    if among is not None:
        at_or_above &= among.unsqueeze(1)
    at_least = at_or_above.sum(dim=2)
    gold_at_least = (
        (gold_scores.unsqueeze(1) >= gold_scores.unsqueeze(2)) & gold_mask.unsqueeze(1)
    ).sum(dim=2)
    precision = torch.where(gold_mask, gold_at_least / at_least.clamp(min=1), 0.0)
    return precision.sum(dim=1) / gold_mask.sum(dim=1)


class AnchorReduction:
    """Per prompt, gathered batch by batch on the device: its anchors' ranks, log-probabilities
    and probabilities under the whole-vocabulary softmax (and, with `shares`, their share of
    the shared vocabulary's), their average precision over the shared vocabulary and over the
    prompt's subset, and the top-k words with their probabilities (near ties settled by the
    `referee`, tacit.ranking.ties)."""

    def __init__(
        self,
        question: Question,
        n_words: int,
        device: torch.device,
        referee: Settles | None,
    ) -> None:
        self.question, self.device, self.referee = question, device, referee
        self.anchors, self.anchor_mask = padded_positions(question.anchors, device)
        self.among: torch.Tensor | None = None
        if question.subset_of_row is not None:
            self.among = torch.zeros((len(question.subsets), n_words), dtype=torch.bool)
            for n, positions in enumerate(question.subsets):
                self.among[n, torch.as_tensor(list(positions), dtype=torch.long)] = True
            self.among = self.among.to(device)
            self.subset = torch.as_tensor(list(question.subset_of_row), device=device)
        n, width, k = len(question.anchors), self.anchors.shape[1], question.top_k
        self.rank = torch.zeros((n, width), dtype=torch.long, device=device)
        self.logprob = torch.empty((n, width), dtype=torch.float32, device=device)
        self.prob = torch.empty((n, width), dtype=torch.float32, device=device)
        self.share = torch.empty((n, width), dtype=torch.float32, device=device)
        self.ap = torch.empty(n, device=device)
        self.ap_among = torch.full((n,), float("nan"), device=device)
        self.top_index = torch.empty((n, k), dtype=torch.long, device=device)
        self.top_prob = torch.empty((n, k), dtype=torch.float32, device=device)
        # True where an anchor's rank was counted against upper bounds (Needed.suffix_top)
        self.bounded = torch.zeros((n, width), dtype=torch.bool, device=device)
        self.top_bounded = torch.zeros(n, dtype=torch.bool, device=device)  # the top k likewise

    def add(self, batch: ScoredBatch) -> None:
        rows, at = batch.rows, batch.batch_rows
        shared, log_z = batch.shared[at], batch.log_z[at]
        anchors, mask = self.anchors[rows], self.anchor_mask[rows]
        if self.referee is not None:
            fixed = None if batch.fixed is None else batch.fixed[at]  # a budget's bounds
            self.referee.settle(shared, rows, anchors, mask, self.question.top_k, fixed)
        anchor_logits = shared.gather(1, anchors)
        self.rank[rows] = torch.where(mask, ranks(shared, anchors), 0)
        listed = shared
        if batch.exact is not None:  # a bound at or near an anchor may have counted above it
            exact = batch.exact[at]
            ceiling = torch.where(exact, float("-inf"), shared).amax(dim=1, keepdim=True)
            self.bounded[rows] = mask & (anchor_logits <= ceiling + MARGIN)
            listed = torch.where(exact, shared, float("-inf"))  # only scores listed as such
        logprob = anchor_logits - log_z.unsqueeze(1)
        self.logprob[rows] = logprob.float()
        self.prob[rows] = logprob.exp().float()
        if self.question.shares:
            whole = torch.logsumexp(shared, dim=-1, keepdim=True)
            self.share[rows] = (anchor_logits - whole).exp().float()
        self.ap[rows] = average_precision_rows(shared, anchors, mask).float()
        if self.among is not None:
            among = self.among[self.subset[rows]]
            self.ap_among[rows] = average_precision_rows(shared, anchors, mask, among).float()
        top_values, self.top_index[rows] = top(listed, self.question.top_k)
        self.top_prob[rows] = (top_values - log_z.unsqueeze(1)).exp().float()
        if batch.exact is not None and top_values.shape[1]:  # a bound could pass its k-th
            self.top_bounded[rows] = top_values[:, -1:].squeeze(1) <= ceiling.squeeze(1) + MARGIN

    def bounds_record(self) -> dict[str, int]:
        """Anchor ranks and top-k lists counted against bounds (Needed.suffix_top), where any."""
        found = {
            "ranks_bounded": int(self.bounded.sum()),
            "tops_bounded": int(self.top_bounded.sum()),
        }
        return {key: n for key, n in found.items() if n}

    def ranking(self, words: np.ndarray, counts: dict[str, int] | None = None) -> Ranking:
        """What was gathered, on the CPU (`words`: the shared vocabulary's, as listed)."""
        top_index, top_prob = self.top_index.cpu().numpy(), self.top_prob.cpu().numpy()
        bounded = self.bounded.cpu().numpy()
        return Ranking(
            rank=self.rank.cpu().numpy(),
            score=self.logprob.cpu().numpy(),
            prob=self.prob.cpu().numpy(),
            share=self.share.cpu().numpy() if self.question.shares else None,
            ap=self.ap.cpu().numpy().astype(float),
            ap_among=self.ap_among.cpu().numpy().astype(float),
            top_index=top_index,
            top_value=top_prob,
            listed=[
                " ".join(f"{w}:{p:.4g}" for w, p in zip(words[i], prob))
                for i, prob in zip(top_index, top_prob)
            ],
            best=list(words[top_index[:, 0]]) if top_index.shape[1] else [""] * len(top_index),
            n_candidates=np.full(len(top_index), len(words)),
            counts={**(counts or {}), **self.bounds_record()},
            bounded=bounded,
            top_bounded=self.top_bounded.cpu().numpy(),
        )


def reduce(
    batches: Iterable[ScoredBatch],
    question: Question,
    words: np.ndarray,
    device: torch.device,
    referee: Settles | None,
) -> AnchorReduction:
    """Every batch gathered into an AnchorReduction."""
    reduction = AnchorReduction(question, len(words), device, referee)
    for batch in on_device(batches, device):
        reduction.add(batch)
    return reduction


def rank_vocabulary(
    scorer: Scorer,
    question: Question,
    candidates: SharedVocabulary,
    progress: bool | tqdm = True,
) -> Ranking:
    """The question over the shared vocabulary at each prompt's blank, with one model, in one
    pass over the prompts (tacit.ranking.rank)."""
    vocab = candidates.vocabulary
    ids = vocab.token_ids[scorer.name]
    prompts = list(question.prompts)
    words = np.asarray(vocab.words, dtype=object)
    needed = Needed(
        question.anchors,
        question.top_k,
        question.groups,
        question.shares,
        candidates.suffix_top,
    )
    in_place = list(vocab.words) if candidates.in_place else None
    referee = Referee(scorer, prompts, ids, in_place)
    work = WorkCount()
    if in_place is None:
        scored = scorer.score_vocab(prompts, ids, progress=progress, needed=needed)
    else:
        scored = scorer.score_words(prompts, ids, in_place, progress=progress, needed=needed)
    batches = work.passing(scored)
    ensemble = None
    if question.groups is not None:
        ensemble = GroupMean(question.groups, scorer.device)
        batches = ensemble.passing(batches)
    rows = reduce(batches, question, words, scorer.device, referee)
    groups = None
    if ensemble is not None:
        grouped = reduce(
            [ensemble.batch()],
            question.for_groups(),
            words,
            scorer.device,
            ensemble.referee(referee),
        )
        groups = grouped.ranking(words)
    counts = {**work.counts, **referee.settled.counts()}
    return replace(rows.ranking(words, counts), ensemble=groups)


def distribution(
    batches: Iterable[ScoredBatch], n: int, device: torch.device
) -> tuple[np.ndarray, np.ndarray, int]:
    """For each of `n` prompts: the softmax over a few label words' logits at its blank, the
    words' total probability under the whole-vocabulary softmax, and how many distinct texts
    were cut to fit (float64, on the device until the end)."""
    probs: torch.Tensor | None = None
    mass = torch.empty(n, dtype=torch.float64, device=device)
    cut = 0
    for batch in on_device(batches, device):
        logits = batch.shared.double()
        if probs is None:
            probs = torch.empty((n, logits.shape[1]), dtype=torch.float64, device=device)
        probs[batch.rows] = torch.softmax(logits, dim=-1)[batch.batch_rows]
        whole = (logits - batch.log_z.double().unsqueeze(1)).exp().sum(dim=1)
        mass[batch.rows] = whole[batch.batch_rows]
        cut += batch.cut
    assert probs is not None, "no prompt scored"
    return probs.cpu().numpy(), mass.cpu().numpy(), cut


class GroupMean:
    """The ensemble of paraphrases, gathered while batches pass on to another reduction: per
    group of prompts (the templates of one question), the mean over its prompts of each
    shared-vocabulary word's log-probability (under each prompt's own softmax, `shared -
    log_z`), in float64. `batch()` gives it as one ScoredBatch (log-probabilities, `log_z`
    zero), which reduces like any other; `referee()` settles its near ties on the means of the
    prompts' scores alone."""

    def __init__(self, groups: Sequence[int], device: torch.device) -> None:
        self.groups = torch.as_tensor(np.asarray(groups, dtype=np.int64), device=device)
        self.n = int(self.groups.max()) + 1 if len(self.groups) else 0
        self.counts = torch.bincount(self.groups, minlength=self.n).double()
        self.sums: torch.Tensor | None = None
        self.log_z = torch.zeros(len(self.groups), dtype=torch.float64, device=device)
        self.device = device
        # per group and word, its prompts' scores that were bounds (ScoredBatch.exact), or None
        self.inexact: torch.Tensor | None = None
        # per group (and word, once a batch says per word), its prompts' scores that were not
        # canonical already (ScoredBatch.fixed): a mean of canonical scores is canonical
        self.loose = torch.zeros((self.n, 1), dtype=torch.int32, device=device)

    def passing(self, batches: Iterable[ScoredBatch]) -> Iterable[ScoredBatch]:
        """The batches, unchanged, each added to its groups' sums on the way."""
        for batch in on_device(batches, self.device):
            log_z = batch.log_z.double()[batch.batch_rows]
            log_probs = batch.shared.double()[batch.batch_rows] - log_z.unsqueeze(1)
            if self.sums is None:
                self.sums = torch.zeros(
                    (self.n, log_probs.shape[1]), dtype=torch.float64, device=self.device
                )
            self.sums.index_add_(0, self.groups[batch.rows], log_probs)
            self.log_z[batch.rows] = log_z
            if batch.exact is not None:
                if self.inexact is None:
                    self.inexact = torch.zeros_like(self.sums, dtype=torch.int32)
                bounds = (~batch.exact[batch.batch_rows]).int()
                self.inexact.index_add_(0, self.groups[batch.rows], bounds)
            self._count_loose(batch)
            yield batch

    def _count_loose(self, batch: ScoredBatch) -> None:
        if batch.fixed is None:
            loose = torch.ones((len(batch.rows), 1), dtype=torch.int32, device=self.device)
        else:
            loose = (~batch.fixed[batch.batch_rows]).int()
        if loose.shape[1] > self.loose.shape[1]:
            self.loose = self.loose.expand(-1, loose.shape[1]).clone()
        self.loose.index_add_(0, self.groups[batch.rows], loose.expand(-1, self.loose.shape[1]))

    def batch(self) -> ScoredBatch:
        """Every group's mean log-probabilities, as one batch whose rows are the groups."""
        assert self.sums is not None, "no batch passed"
        rows = torch.arange(self.n, device=self.device)
        mean = self.sums / self.counts.unsqueeze(1)
        exact = None if self.inexact is None else self.inexact == 0
        fixed = self.loose == 0  # a mean of fixed scores (bounds, canonical) is as fixed
        zero = torch.zeros(self.n, device=self.device)
        return ScoredBatch(rows, rows, mean, zero, exact=exact, fixed=fixed)

    def referee(self, members: Referee) -> GroupReferee:
        """The referee of batch(): its prompts' referee, averaged as the groups are."""
        return GroupReferee(self, members)


class GroupReferee(Settles):
    """A group's canonical scores: the mean over its prompts of their scores alone less the
    prompts' log_z (the log_z cancels from every comparison within a row: ranks are those of
    the prompts' scores alone)."""

    def __init__(self, ensemble: GroupMean, members: Referee) -> None:
        self.ensemble, self.members = ensemble, members
        self.relative, self.settled = members.relative, members.settled
        self.of_group = [
            (ensemble.groups == g).nonzero().flatten().tolist() for g in range(ensemble.n)
        ]

    def prepare(self, requests: list[tuple[int, list[int]]]) -> None:
        """Every member prompt of the groups asked, side by side (Referee.prepare)."""
        self.members.prepare(
            [(row, positions) for group, positions in requests for row in self.of_group[group]]
        )

    def canonical(self, group: int, positions: list[int]) -> torch.Tensor:
        total = torch.zeros(len(positions), dtype=torch.float64)
        for row in self.of_group[group]:
            z = self.ensemble.log_z[row].cpu()
            total += self.members.canonical(row, positions).double() - z
        return total / len(self.of_group[group])


class WorkCount:
    """The work the batches ran (ScoredBatch.work: a causal LM's suffixes scored), added up
    while they pass on to a reduction, for the model's record."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def passing(self, batches: Iterable[ScoredBatch]) -> Iterable[ScoredBatch]:
        """The batches, unchanged, each one's work added on the way."""
        for batch in batches:
            for key, value in batch.work.items():
                self.counts[key] = self.counts.get(key, 0) + int(value)
            yield batch
