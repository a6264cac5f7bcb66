"""Batching for every model: longest first, halved when the device runs out of memory."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import numpy as np
import torch

from tacit.core.errors import TacitError
from tacit.core.option_names import option

OUT_OF_MEMORY = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)  # torch < 2.5
# what other devices' allocators say when memory runs out (as accelerate's
# should_reduce_batch_size reads them): HIP and XPU, Apple's MPS, the CPU
OUT_OF_MEMORY_MESSAGES = (
    " out of memory.",
    "MPS backend out of memory",
    "DefaultCPUAllocator: can't allocate memory",
)
# `--batch-size auto` starts here and shrinks until a batch fits (find_executable_batch_size's
# way). A CPU gains nothing from more than a few dozen texts at once, and its memory running
# out is rarely an error Python sees, so it starts low.
AUTO_START = {"cuda": 512, "mps": 256, "cpu": 64}
T = TypeVar("T")


class Batched(Protocol):
    """A model that runs in batches on a device (`auto_batch`: its batch size was not given
    but is being found)."""

    name: str

    @property
    def device(self) -> torch.device: ...

    batch_size: int


class InProcessModel(Batched, Protocol):
    """What the scoring modules read of an in-process scorer (tacit.models.hf_scorer.HFScorer):
    its model and tokenizer (its runtime's), batched on a device, and the longest input it
    takes."""

    @property
    def model(self) -> Any: ...

    @property
    def tokenizer(self) -> Any: ...

    @property
    def max_tokens(self) -> int: ...


def starting_batch_size(batch_size: int | str, device: torch.device) -> tuple[int, bool]:
    """(the batch size to start from, whether it is `auto`'s search)."""
    if batch_size == "auto":
        return AUTO_START.get(device.type, AUTO_START["cpu"]), True
    return int(batch_size), False


def out_of_memory(err: BaseException) -> bool:
    """Did the device run out of memory (CUDA's own error, or another allocator's message)?"""
    if isinstance(err, OUT_OF_MEMORY):
        return True
    return isinstance(err, RuntimeError) and any(m in str(err) for m in OUT_OF_MEMORY_MESSAGES)


def smaller_batch(model: Batched) -> int:
    """The next batch size to try after running out of memory: 90% (accelerate's step, which
    finds the largest size that fits to within a tenth) while `auto` searches, else half."""
    if getattr(model, "auto_batch", False):
        return max(1, min(model.batch_size - 1, int(model.batch_size * 0.9)))
    return max(1, model.batch_size // 2)


@contextmanager
def one_at_a_time(model: Batched) -> Iterator[None]:
    """Batches of one item, on one CPU thread, and no score cache (`--cache`: its answers were
    batched): the canonical scores the tie rule settles near ties on (tacit.ranking.ties);
    then the batch size, the threads and the cache as they were. One thread, because a CPU
    kernel's sums can follow its threads (a prompt alone differed by 1.8e-6 at one thread and
    two), so the canonical scores are then the same whatever `--threads` too, and because a
    pass of one prompt gains little from a second thread while a busy machine makes each of
    its operations wait for both (0.11-0.28 s a pass on one thread, 1.07-2.08 s on two, taking
    turns on a loaded 2-core CPU: docs/reproducibility.md)."""
    before, cache, threads = (
        model.batch_size,
        getattr(model, "cache", None),
        torch.get_num_threads(),
    )
    model.batch_size = 1
    if cache is not None:
        model.cache = None  # type: ignore[attr-defined]
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        model.batch_size = before
        if cache is not None:
            model.cache = cache  # type: ignore[attr-defined]


@contextmanager
def rows_per_batch(model: Batched, factor: int) -> Iterator[None]:
    """Batches of `factor` x the batch size rows, for rows `factor` times shorter than the texts
    the batch size counts (a causal LM's word suffixes after a shared prefix: a batch then
    holds as many tokens as `--batch-size` whole sentences); a batch size of 1 stays one row
    (the canonical scores of the tie rule). On running out of memory the size shrinks as
    usual, and the batch size it leaves is the one that fitted, divided back."""
    before = model.batch_size
    if before > 1:
        model.batch_size = before * max(1, factor)
    try:
        yield
    finally:
        if before > 1:
            model.batch_size = max(1, min(before, model.batch_size // max(1, factor)))


def longest_first_batches(
    lengths: Sequence[int],
    model: Batched,
    run: Callable[[np.ndarray], T],
    same_length: bool = False,
) -> Iterator[tuple[np.ndarray, T]]:
    """Yield (item indices, run(indices)) for batches of `model.batch_size` items of similar
    length, longest first, so that a batch size too large for the device shows at once: on
    running out of device memory `model.batch_size` shrinks (smaller_batch; an error at 1) and
    the batch runs again. With `--batch-size auto` this is the search for the largest size that
    fits, made on the longest batch. Results do not depend on the batch size;
    `model.batch_size` keeps the size that fitted, for the manifest. `same_length`: a batch
    holds items of one length only (tacit.models.invariant)."""
    order = np.argsort([-n for n in lengths], kind="stable")
    by_length = np.asarray(lengths)
    start = 0
    while start < len(order):
        indices = order[start : start + model.batch_size]
        if same_length:
            indices = indices[by_length[indices] == by_length[indices[0]]]
        fitted = False
        try:
            result = run(indices)
            fitted = True
        except Exception as err:
            if not out_of_memory(err):
                raise
            if model.batch_size == 1:
                raise TacitError(
                    f"{model.name}: out of memory on {model.device} even one item at a time; "
                    f"try {option('--dtype')} bfloat16 or another device"
                ) from err
        if not fitted:  # out of the except block, the failed batch's tensors are freed
            model.batch_size = smaller_batch(model)
            if model.device.type == "cuda":
                torch.cuda.empty_cache()
            continue
        yield indices, result
        start += len(indices)


def padded(
    encoded: Sequence[Sequence[int]],
    indices: np.ndarray,
    pad_id: int,
    device: torch.device,
    width: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(input ids, attention mask) of the token lists at `indices`, right-padded to the longest
    (or to `width`), on the device (through page-locked memory on CUDA, so the copy is
    asynchronous)."""
    width = width or max(len(encoded[i]) for i in indices)
    rows = [list(encoded[i]) + [pad_id] * (width - len(encoded[i])) for i in indices]
    lengths = torch.tensor([len(encoded[i]) for i in indices])
    ids = torch.tensor(rows, dtype=torch.long)
    attention = (torch.arange(width) < lengths.unsqueeze(1)).long()
    if device.type == "cuda":
        ids, attention = ids.pin_memory(), attention.pin_memory()
    return ids.to(device, non_blocking=True), attention.to(device, non_blocking=True)
