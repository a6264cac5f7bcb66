"""The tie rule: ranks and top-k lists that do not depend on the batch size.

Scores are compared exactly, equal scores ordered by position; a comparison that batch noise
could flip (two scores within the row's `tolerance`) is settled on canonical scores, those of
the prompt scored alone on one thread (`near`, `settle`), and each score computed again checks
the noise (`noisy`). A batch canonical already (ScoredBatch.fixed) has nothing to settle.
docs/reproducibility.md has the rule, the tolerances and the measured noise.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from tacit.ranking.question import padded

# the tolerance over a row's largest |score|, by the precision the model computes in: over ten
# times the batch noise measured (float32: 1.6e-6 on a CPU, docs/reproducibility.md; float16
# 3e-3 and bfloat16 1.8e-2, which 8- and 4-bit weights are counted as, from an earlier run of
# bench/bench_batch_noise.py in half precision, not repeated on this CPU-only machine)
RELATIVE_TOLERANCE = {"float32": 2e-5, "float16": 3e-2, "bfloat16": 2e-1}
RULE = (
    "scores compared exactly, equal ones ordered by position; a comparison of two scores within "
    "the tolerance (relative_tolerance x the row's largest |score|, at least 1) is settled on "
    "the prompt scored alone (a batch of one, on one CPU thread)"
)


def relative_tolerance(scorer: Any) -> float:
    """The tie tolerance relative to a row's scale for this scorer: by its weights' precision
    (`dtype`; quantized weights compute in half precision, counted as bfloat16). A family
    that runs no torch model here (a lookup table, numpy) says no dtype: float32's."""
    spec = getattr(scorer, "spec", None)
    if spec is not None and getattr(spec, "quantization", None):
        return RELATIVE_TOLERANCE["bfloat16"]
    dtype = getattr(scorer, "dtype", None)
    if dtype is None or dtype in (torch.float32, torch.float64):
        return RELATIVE_TOLERANCE["float32"]
    return RELATIVE_TOLERANCE["float16" if dtype == torch.float16 else "bfloat16"]


def tolerance(scores: torch.Tensor, relative: float) -> torch.Tensor:
    """Each row's tie tolerance: `relative` times the row's largest |score|, at least 1."""
    return relative * scores.abs().amax(dim=1).clamp(min=1)


def top(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's k highest scores and their positions, in the total order: by score, equal
    scores by position (topk leaves their order to the kernel)."""
    k = min(k, scores.shape[1])
    values, positions = scores.topk(min(k + 1, scores.shape[1]), dim=1)
    tied = (values[:, 1:] == values[:, :-1]).any(dim=1)
    if bool(tied.any()):
        ordered, order = scores[tied].sort(dim=1, descending=True, stable=True)
        values[tied], positions[tied] = ordered[:, : values.shape[1]], order[:, : values.shape[1]]
    return values[:, :k], positions[:, :k]


# past this many positions a row, ranks come from one sort of the row, not a pass per position
SORTED_RANKS = 32


def ranks(scores: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """[rows x m] rank of each of `positions` ([rows x m]) in its row, in the total order: 1 +
    the scores above it + the scores equal to it at an earlier position."""
    if positions.shape[1] > SORTED_RANKS:  # many positions: one stable sort of each row
        order = scores.sort(dim=1, descending=True, stable=True).indices  # ties: earlier first
        place = torch.empty_like(order)
        place.scatter_(
            1, order, torch.arange(scores.shape[1], device=scores.device).expand_as(order)
        )
        return 1 + place.gather(1, positions)
    every = torch.arange(scores.shape[1], device=scores.device)
    out = torch.empty(positions.shape, dtype=torch.long, device=scores.device)
    for column in range(positions.shape[1]):  # a position at a time: [rows x n] at most
        at = positions[:, column : column + 1]
        score = scores.gather(1, at)
        out[:, column] = 1 + ((scores > score) | ((scores == score) & (every < at))).sum(dim=1)
    return out


def near(
    scores: torch.Tensor,
    anchors: torch.Tensor,
    anchor_mask: torch.Tensor,
    top_k: int,
    limit: torch.Tensor,
) -> torch.Tensor:
    """[rows x n] the scores that a comparison the reductions read could see on either side by
    batch noise: those within the row's tolerance (`limit`, [rows]) of an anchor's ([rows x m]
    positions: targets, gold answers; `anchor_mask` True where real) or of one of the top_k,
    and each anchor or top score that has such a neighbour."""
    _, best = scores.topk(min(top_k, scores.shape[1]), dim=1)
    points = torch.cat([anchors, best], dim=1)
    real = torch.cat([anchor_mask, torch.ones_like(best, dtype=torch.bool)], dim=1)
    found = torch.zeros(scores.shape, dtype=torch.bool, device=scores.device)
    every = torch.arange(scores.shape[1], device=scores.device)
    for column in range(points.shape[1]):  # a point at a time: [rows x n], never [rows x m x n]
        at = points[:, column : column + 1]
        close = (scores - scores.gather(1, at)).abs() <= limit.unsqueeze(1)
        close &= real[:, column : column + 1] & (every != at)  # a point is not its own neighbour
        found |= close
        found.scatter_(1, at, found.gather(1, at) | close.any(dim=1, keepdim=True))
    return found


@dataclass
class Settled:
    """What settling ran, for the model's record: rows with a comparison settled, scores
    computed again alone, and of those, how many had moved by more than a third of the
    tolerance (the rule assumes the noise smaller: past it, ranks could depend on the batch);
    the distinct prompts (a span's: templates) scored again alone, and the time settling took
    (finding the near scores and computing them again), what the rule costs a run."""

    rows: int = 0
    scores: int = 0
    noisy: int = 0
    prompts: int = 0
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """The manifest's counts (integers, summed over chunks: the time in milliseconds)."""
        return {
            "tie_rows": self.rows,
            "tie_scores": self.scores,
            "tie_noisy": self.noisy,
            "tie_prompts": self.prompts,
            "tie_milliseconds": round(self.seconds * 1000),
        }


def asked(found: torch.Tensor) -> list[tuple[int, list[int]]]:
    """The (row, positions) of the `found` scores ([rows x n], near), for each row with any."""
    rows = found.any(dim=1).nonzero().flatten().tolist()
    return [(row, found[row].nonzero().flatten().tolist()) for row in rows]


def settle(
    scores: torch.Tensor,
    requests: list[tuple[int, list[int]]],
    canonical: Callable[[int, list[int]], torch.Tensor],
    limit: torch.Tensor,
    settled: Settled,
) -> None:
    """Put canonical scores (`canonical(row, positions)`: the row's prompt scored alone) in
    place of the scores `requests` name (asked: the near ones), in place, counting them in
    `settled`."""
    for row, at in requests:
        positions = torch.tensor(at, device=scores.device)
        values = canonical(row, at).to(scores.device, scores.dtype)
        moved = (values - scores[row, positions]).abs()
        scores[row, positions] = values
        settled.rows += 1
        settled.scores += len(positions)
        settled.noisy += int((moved > limit[row] / 3).sum())


def settle_near(
    scores: torch.Tensor,
    anchors: torch.Tensor,
    anchor_mask: torch.Tensor,
    top_k: int,
    limit: torch.Tensor,
    canonical: Callable[[int, list[int]], torch.Tensor],
    settled: Settled,
    fixed: torch.Tensor | None = None,
    prepare: Callable[[list[tuple[int, list[int]]]], None] | None = None,
) -> None:
    """`near`, then `settle`: the one call the reductions make (timed in `settled`). `fixed`
    ([rows x n], or None): scores that are canonical already, left as they are (a causal LM's
    bounds under `--suffix-top`: the text before the blank is always run alone). `prepare`
    (or None) is told every (row, positions) that `canonical` will be asked for, first: a
    referee that can run several prompts alone at once does so there."""
    if fixed is not None and bool(fixed.all()):
        return  # canonical already (a batch-invariant batch): nothing to find or settle
    started = time.perf_counter()
    found = near(scores, anchors, anchor_mask, top_k, limit)
    if fixed is not None:
        found &= ~fixed
    requests = asked(found)
    if prepare is not None:
        prepare(requests)
    settle(scores, requests, canonical, limit, settled)
    settled.seconds += time.perf_counter() - started


def padded_positions(
    lists: Sequence[Sequence[int]], device: torch.device | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, positions of any number ([rows x widest], padded with 0) and where they are, as
    tensors on `device` (tacit.ranking.question.padded)."""
    index, mask = padded(lists)
    return torch.from_numpy(index).to(device), torch.from_numpy(mask).to(device)


def settle_array(
    scores: np.ndarray,
    anchors: Sequence[Sequence[int]],
    top_k: int,
    limit: np.ndarray,
    canonical: Callable[[int, list[int]], np.ndarray],
    settled: Settled,
) -> None:
    """settle_near on a [rows x candidates] float64 array, in place (candidate spans)."""
    table = torch.from_numpy(scores)
    index, mask = padded_positions(anchors)
    settle_near(
        table,
        index,
        mask,
        top_k,
        torch.from_numpy(limit),
        lambda row, positions: torch.from_numpy(np.asarray(canonical(row, positions))),
        settled,
    )
