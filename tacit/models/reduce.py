"""What the probes take from batches of scored blanks (ScoredBatch), reduced on the device:
a target's rank, the average precision of a set of gold answers, a distribution over a few
label words. Probes call these and never read a batch's fields; only small per-prompt results
come back to the CPU."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import torch

from tacit.models.answers import ScoredBatch, TargetScores


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
        )


def rank_targets(
    batches: Iterable[ScoredBatch], targets: Sequence[int], *, top_k: int, device: torch.device
) -> TargetScores:
    """Each prompt's target (its position in the shared vocabulary) ranked at the blank: rank,
    probability over the whole vocabulary and over the shared one, and the top-k words."""
    targets_t = torch.as_tensor(np.asarray(targets, dtype=np.int64), device=device)
    n = len(targets_t)
    rank = torch.empty(n, dtype=torch.long, device=device)
    prob = torch.empty(n, dtype=torch.float32, device=device)
    prob_shared = torch.empty(n, dtype=torch.float32, device=device)
    top_index = torch.empty((n, top_k), dtype=torch.long, device=device)
    top_prob = torch.empty((n, top_k), dtype=torch.float32, device=device)
    for batch in on_device(batches, device):
        rows, at = batch.rows, batch.batch_rows
        log_z_shared = torch.logsumexp(batch.shared, dim=-1)
        top_values, top_positions = batch.shared.topk(top_k, dim=-1)
        shared = batch.shared[at]
        target_logit = shared.gather(1, targets_t[rows].unsqueeze(1))
        rank[rows] = 1 + (shared > target_logit).sum(dim=1)
        prob[rows] = (target_logit.squeeze(1) - batch.log_z[at]).exp()
        prob_shared[rows] = (target_logit.squeeze(1) - log_z_shared[at]).exp()
        top_index[rows] = top_positions[at]
        top_prob[rows] = (top_values - batch.log_z.unsqueeze(1)).exp()[at]
    return TargetScores(
        rank=rank.cpu().numpy(),
        target_prob=prob.cpu().numpy(),
        target_prob_shared=prob_shared.cpu().numpy(),
        top_index=top_index.cpu().numpy(),
        top_prob=top_prob.cpu().numpy(),
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


class GoldScores:
    """Per prompt: average precision of its gold answers over the shared vocabulary and over a
    subset of it (`among`), each gold's probability and rank, and the top-k words."""

    def __init__(
        self,
        batches: Iterable[ScoredBatch],
        golds: Sequence[Sequence[int]],
        *,
        among: torch.Tensor | None,
        among_of_row: Sequence[int] | None,
        top_k: int,
        device: torch.device,
    ) -> None:
        width = max(len(g) for g in golds)
        gold_index = torch.zeros((len(golds), width), dtype=torch.long)
        gold_mask = torch.zeros((len(golds), width), dtype=torch.bool)
        for row, gold in enumerate(golds):
            gold_index[row, : len(gold)] = torch.as_tensor(list(gold), dtype=torch.long)
            gold_mask[row, : len(gold)] = True
        gold_index, gold_mask = gold_index.to(device), gold_mask.to(device)
        subset = None if among_of_row is None else torch.as_tensor(among_of_row, device=device)
        n = len(golds)
        ap = torch.empty(n, device=device)
        ap_among = torch.full((n,), float("nan"), device=device)
        prob = torch.empty((n, width), device=device)
        rank = torch.empty((n, width), dtype=torch.long, device=device)
        top_index = torch.empty((n, top_k), dtype=torch.long, device=device)
        top_prob = torch.empty((n, top_k), device=device)
        for batch in on_device(batches, device):
            rows, at = batch.rows, batch.batch_rows
            shared, log_z = batch.shared[at], batch.log_z[at]
            g, m = gold_index[rows], gold_mask[rows]
            ap[rows] = average_precision_rows(shared, g, m)
            if among is not None and subset is not None:
                ap_among[rows] = average_precision_rows(shared, g, m, among=among[subset[rows]])
            gold_logits = shared.gather(1, g)
            prob[rows] = (gold_logits - log_z.unsqueeze(1)).exp()
            rank[rows] = 1 + (shared.unsqueeze(1) > gold_logits.unsqueeze(2)).sum(dim=2)
            top_values, top_positions = shared.topk(top_k, dim=1)
            top_index[rows] = top_positions
            top_prob[rows] = (top_values - log_z.unsqueeze(1)).exp()
        self.ap = ap.cpu().numpy().astype(float)
        self.ap_among = ap_among.cpu().numpy().astype(float)
        self.prob = prob.cpu().numpy()
        self.rank = rank.cpu().numpy()
        self.top_index = top_index.cpu().numpy()
        self.top_prob = top_prob.cpu().numpy()


def label_distribution(
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
    log_z`). `batch()` gives it as one ScoredBatch (log-probabilities, `log_z` zero), which
    rank_targets and GoldScores read like any other."""

    def __init__(self, groups: Sequence[int], device: torch.device) -> None:
        self.groups = torch.as_tensor(np.asarray(groups, dtype=np.int64), device=device)
        self.n = int(self.groups.max()) + 1 if len(self.groups) else 0
        self.counts = torch.bincount(self.groups, minlength=self.n).double()
        self.sums: torch.Tensor | None = None
        self.device = device

    def passing(self, batches: Iterable[ScoredBatch]) -> Iterable[ScoredBatch]:
        """The batches, unchanged, each added to its groups' sums on the way."""
        for batch in on_device(batches, self.device):
            log_probs = (batch.shared - batch.log_z.unsqueeze(1)).double()[batch.batch_rows]
            if self.sums is None:
                self.sums = torch.zeros(
                    (self.n, log_probs.shape[1]), dtype=torch.float64, device=self.device
                )
            self.sums.index_add_(0, self.groups[batch.rows], log_probs)
            yield batch

    def batch(self) -> ScoredBatch:
        """Every group's mean log-probabilities, as one batch whose rows are the groups."""
        assert self.sums is not None, "no batch passed"
        rows = torch.arange(self.n, device=self.device)
        mean = (self.sums / self.counts.unsqueeze(1)).float()
        return ScoredBatch(rows, rows, mean, torch.zeros(self.n, device=self.device))


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
