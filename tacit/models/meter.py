"""What a calibration measures while a model scores (tacit.engine.estimate, `--dry-run`): the
sentences each family plans and scores and the prompt texts done, so that a short timing can
be scaled to the whole; and a stop (Spent) once `seconds` or `sentences` are spent, only
part-way through a text or between batches, so that what was done is a known share of what
was planned (`fraction`). With no meter on (`metering`), nothing here does anything.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

# the units of the families' bars that count sentences (a masked LM's span plan: its rows)
SENTENCE_UNITS = ("sentence", "row")


class Spent(Exception):
    """The calibration's budget is spent: raised inside scoring, caught by the calibration."""


@dataclass
class Meter:
    """One calibration's count (see the module docstring). `texts`: the prompt texts of the
    work it times; `seconds` and `sentences`: its budget; `in_block`: whether it may stop
    part-way through a block of sentences (a family's bar), which must then be one text's."""

    seconds: float
    sentences: int
    texts: int
    in_block: bool = True
    started: float = field(default_factory=lambda: time.monotonic())
    texts_done: int = 0
    sentences_done: int = 0  # in all (a text scored in one pass, with no sentences: one)
    text_started: float = 0.0  # when the text being scored began
    text_sentences: int = 0  # its sentences done so far
    block_started: float = 0.0  # when the block being scored began (a family's bar opened)
    block_planned: int = 0  # its sentences
    block_done: int = 0  # ... done so far
    block_weights: list[float] = field(default_factory=list)  # their lengths, summed in order
    stopped: bool = False

    def __post_init__(self) -> None:
        self.text_started = self.started

    def plan(self, sentences: int, lengths: Sequence[int] | None = None) -> None:
        """A block of `sentences` begins; `lengths`: their tokens, in the order they are scored
        (longest first: the first done are the slowest, and the share done is weighed by
        them)."""
        self.block_started, self.block_planned, self.block_done = time.monotonic(), sentences, 0
        self.block_weights = list(itertools.accumulate(lengths or ()))

    def did(self, sentences: int) -> None:
        self.sentences_done += sentences
        self.text_sentences += sentences
        self.block_done += sentences
        if self.in_block and self.block_done < self.block_planned:
            self._check()

    def text_done(self, texts: int) -> None:
        if not self.text_sentences:
            self.sentences_done += texts
        self.texts_done += texts
        self.text_started, self.text_sentences = time.monotonic(), 0
        self.block_planned = self.block_done = 0
        self._check()

    def _check(self) -> None:
        """Stop where the budget is spent and the timed work is not all done."""
        if self.texts_done >= self.texts:
            return
        if self.sentences_done >= self.sentences or self.elapsed >= self.seconds:
            self.stopped = True
            raise Spent

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def whole(self) -> tuple[float, float]:
        """(seconds, sentences) the timed work takes whole: as measured where it finished.
        Stopped part-way through a text's block of sentences: the text's time before the
        block, plus the block's time scaled to every sentence it planned; stopped between
        texts: the texts' time. Then the texts done so far scaled to all of them."""
        now = time.monotonic()
        if not self.stopped:
            return now - self.started, float(self.sentences_done)
        done_before = self.text_started - self.started
        sentences_before = self.sentences_done - self.text_sentences
        if self.block_planned and self.block_done < self.block_planned:
            block = (now - self.block_started) / self._block_share()
            seconds = done_before + (self.block_started - self.text_started) + block
            sentences = float(sentences_before + self.text_sentences - self.block_done)
            sentences += self.block_planned
            scale = self.texts / (self.texts_done + 1)
        else:
            seconds, sentences = now - self.started, float(self.sentences_done)
            scale = self.texts / max(self.texts_done, 1)
        return seconds * scale, sentences * scale

    def _block_share(self) -> float:
        """The share of the block done: of its tokens where their lengths are known, else of
        its sentences."""
        done = max(self.block_done, 1)
        if len(self.block_weights) == self.block_planned and self.block_weights[-1] > 0:
            return self.block_weights[min(done, self.block_planned) - 1] / self.block_weights[-1]
        return done / self.block_planned

    @contextmanager
    def bar(self) -> Iterator[Any]:
        """The (silent) progress bar a probe's work advances a text at a time, counted."""
        from tqdm.auto import tqdm

        with tqdm(disable=True) as bar:
            count(bar, self.text_done)
            yield bar


_METER: ContextVar[Meter | None] = ContextVar("tacit_meter", default=None)


@contextmanager
def metering(meter: Meter) -> Iterator[Meter]:
    """While the block runs, the families' bars of sentences report to `meter`."""
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


def count(bar: Any, counted: Any) -> None:
    """Every update of `bar` (n) is passed on to `counted(n)` after the bar's own."""
    update = bar.update

    def counting(n: float | None = 1) -> bool | None:
        shown = update(n)
        counted(int(n or 0))
        return shown

    bar.update = counting


def metered(
    bar: Any, total: int, unit: str = "sentence", lengths: Sequence[int] | None = None
) -> None:
    """A family's bar of `total` sentences (`unit`; `lengths`: their tokens in the order they
    are scored, where the family knows it), reported to the meter that is on, if any (a bar of
    other units, texts or pairs, is not)."""
    meter = _METER.get()
    if meter is None or unit not in SENTENCE_UNITS:
        return
    meter.plan(total, lengths)
    count(bar, meter.did)


@contextmanager
def quiet(total: int, lengths: Sequence[int] | None = None) -> Iterator[Any]:
    """A silent bar for `total` sentences scored inside a family's other work (a causal LM's
    word suffixes, a seq2seq LM's sentinels), reported to the meter that is on, if any."""
    from tqdm.auto import tqdm

    with tqdm(disable=True) as bar:
        metered(bar, total, lengths=lengths)
        yield bar


def longest_first(lengths: Sequence[int]) -> list[int]:
    """Lengths in the order longest-first batching scores them (tacit.models.batching)."""
    return sorted(lengths, reverse=True)
