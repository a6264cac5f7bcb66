"""What a run would cost, before it runs (`--dry-run`), in seconds rather than minutes: the
plan counted (no model loaded: prompts, rows, what they rank among, the sentences each model
scores), each model timed on a short calibration of the run's own work (scored as the run
scores it, until `dry_run_seconds` or CALIBRATION_SENTENCES are spent, a prompt stopped
part-way scaled by the share done: tacit.models.meter), and past LONG_RUN_SECONDS the
settings that take less. Nothing is written. docs/architecture.md ("Estimates") says where
the estimate errs and why.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tacit.core.numbers import format_number
from tacit.core.option_names import option
from tacit.engine.runner import LONG_RUN_SECONDS, each_model, score_chunk, use_threads

if TYPE_CHECKING:
    import pandas as pd

    from tacit.ask.base import Work
    from tacit.core.options import RunOptions
    from tacit.models.resolved import ResolvedModel
    from tacit.probes.base import Plan

# sentences a calibration scores at most, past its warm-up (a budget of seconds stops it too)
CALIBRATION_SENTENCES = 2048
# the work counts a scorer keeps (tacit.models.answers.SpanScores.work) that are tokens, and
# what generating cost (tacit.models.answers.generation_counts), a judge's too (--judge: the
# calibration judges its answers, so its requests are timed and counted with the model's)
TOKEN_COUNTS = (
    "span_tokens",
    "span_rows",
    "generation_prompt_tokens",
    "generation_completion_tokens",
    "judge_generation_requests",
    "judge_generation_prompt_tokens",
    "judge_generation_completion_tokens",
)


@dataclass(frozen=True)
class ModelEstimate:
    """One model's part of a run: the sentences it would score, the estimate, and the
    calibration it rests on (None where the dry run loaded no model: counts alone)."""

    model: str
    sentences: int  # what the plan counts, or, with a calibration, what it found per prompt
    seconds: float | None = None  # the whole run's scoring, extrapolated
    load_seconds: float | None = None
    calibration_seconds: float = 0.0
    calibration_sentences: int = 0
    calibration_prompts: int = 0  # prompt texts timed (the last one possibly in part)
    calibration_partial: bool = False  # a prompt was stopped part-way and scaled up
    kind: str | None = None  # the family's kind (masked, causal, ...), once loaded
    tokens: Mapping[str, int] = field(default_factory=dict)  # extrapolated work counts


@dataclass(frozen=True)
class RunEstimate:
    """What `--dry-run` says of a run: the plan's counts, each model's estimate, and what
    would take less where it is long (`notes`)."""

    probe: str
    prompts: int
    rows: int
    candidates: str
    sentences: int  # per model, as the plan counts them
    models: list[ModelEstimate]
    notes: list[str] = field(default_factory=list)
    asked: str = ""  # a plan by generation: its requests and completions, counted and bounded

    @property
    def seconds(self) -> float | None:
        """The whole run, loading included; None where no model was timed."""
        if any(m.seconds is None for m in self.models):
            return None
        return sum((m.seconds or 0) + (m.load_seconds or 0) for m in self.models)

    def __str__(self) -> str:
        timed = any(m.seconds is not None for m in self.models)
        what = (
            "nothing scored beyond a calibration" if timed else "the plan counted, no model loaded"
        )
        counted = (
            f"asked in words: {self.asked}"
            if self.asked
            else f"ranked among {self.candidates}; {self.sentences:,} sentences per model"
        )
        lines = [
            f"{self.probe} (dry run: {what}, nothing written)",
            f"  prompts: {self.prompts:,} ({self.rows:,} rows) per model, {counted}",
        ]
        untimed = [m.model for m in self.models if m.seconds is None]
        if untimed:
            lines.append(
                f"  not loaded, not timed ({option('--dry-run-seconds')} 0): {', '.join(untimed)}"
            )
        for m in self.models:
            if m.seconds is None:
                continue
            tokens = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in m.tokens.items())
            pace = m.calibration_sentences / m.calibration_seconds if m.calibration_seconds else 0
            unit = "requests" if self.asked else "sentences"
            found = f"{m.sentences:,} {unit}" if m.sentences != self.sentences else ""
            counted = "; ".join(t for t in (found, tokens) if t)
            part = ", the last in part" if m.calibration_partial else ""
            lines.append(
                f"  {m.model}: about {duration(m.seconds)} to {'ask' if self.asked else 'score'}"
                + (f" ({counted})" if counted else "")
                + f"; timed {m.calibration_sentences:,} {unit} of "
                f"{m.calibration_prompts:,} prompt(s){part} in {m.calibration_seconds:.1f} s "
                f"({format_number(pace)} {unit}/s); {duration(m.load_seconds or 0)} to load"
            )
        if self.seconds is not None:
            lines.append(f"  in all: about {duration(self.seconds)}")
        return "\n".join(lines + self.notes)


def duration(seconds: float) -> str:
    """`42 s`, `12 min`, `3.5 h`."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_run(
    probe: str, models: Sequence[ResolvedModel], options: RunOptions, plan: Plan
) -> RunEstimate:
    """The plan counted and each model timed (see the module docstring)."""
    work = plan.work
    assert work is not None, "a plan without work costs nothing"
    costs = work.costs()
    total = int(costs.sum())
    estimates = []
    if options.dry_run_seconds == 0:  # the counts alone: no model loaded
        estimates = [ModelEstimate(model.name, total) for model in models]
    else:
        use_threads(options)
        # no cache: time the scoring, not a cache's reads
        for _, model in each_model(
            models, cache=None, probe=probe, needs=work.needs, load_options=work.load_options
        ):
            started = time.monotonic()
            scorer: Any = model if work.lazy else model.scorer
            loaded = time.monotonic() - started
            batch = options.batch_size if isinstance(options.batch_size, int) else 32
            timed = _calibrated(work, scorer, costs, batch, options.dry_run_seconds)
            estimates.append(replace(timed, model=model.name, load_seconds=loaded))
    among = plan.ask.among() if plan.ask is not None else "what the probe asks"
    estimate = RunEstimate(
        probe, len(costs), len(work.rows), among, total, estimates, asked=_asked(work)
    )
    return replace(
        estimate, notes=usual_way(estimate, plan) + faster(estimate, probe, plan, options)
    )


def usual_way(estimate: RunEstimate, plan: Plan) -> list[str]:
    """The usual way of the same work (Plan.usual) counted, and timed at each model's pace:
    `usual: one prompt per feature: 12,000 sentences per model (300 times as many); m: about
    2 h`."""
    if plan.usual is None:
        return []
    what, sentences = plan.usual
    ratio = sentences / estimate.sentences if estimate.sentences else float("nan")
    line = (
        f"  usual: {what}: {sentences:,} sentences per model ({format_number(ratio)} times as many)"
    )
    timed = [
        f"{m.model}: about {duration(m.seconds * sentences / m.sentences)}"
        for m in estimate.models
        if m.seconds is not None and m.sentences
    ]
    return [line + (f"; {'; '.join(timed)}" if timed else "")]


def _asked(work: Work) -> str:
    """A plan by generation counted: `13 requests, 39 completions of at most 64 tokens (at
    most 2,496 completion tokens) per model`; the prompt tokens are the calibration's."""
    sampling = work.sampling
    if sampling is None:
        return ""
    requests = int(work.rows[work.key].nunique())  # a repeated question is asked once
    completions = requests * sampling.n
    return (
        f"{requests:,} requests, {completions:,} completions of at most {sampling.max_tokens:,} "
        f"tokens (at most {completions * sampling.max_tokens:,} completion tokens) per model"
    )


@dataclass(frozen=True)
class _Group:
    """Work a calibration times in one go: rows of the plan, their sentences, their texts."""

    rows: pd.DataFrame
    cost: int
    texts: int


def _groups(work: Work, costs: pd.Series, batch: int) -> Iterator[_Group]:
    """The run's work in its order, in pieces a calibration times: prompts that cost a
    sentence each, as many as a batch holds; prompts of candidate spans, one text of each (its
    templates in turn, from one prompt to the next), as many as fill a batch of sentences (a
    prompt of more sentences alone)."""
    import pandas as pd

    keys = list(costs.index)
    column = work.rows[work.key]
    if work.cost is None:
        for start in range(0, len(keys), batch):
            chosen = keys[start : start + batch]
            rows = work.rows[column.isin(chosen)]
            texts = rows["prompt"].nunique() if "prompt" in rows else len(chosen)
            yield _Group(rows, len(chosen), int(texts))
        return
    pieces: list[pd.DataFrame] = []
    cost = 0
    for n, key in enumerate(keys):
        rows = work.rows[column == key]
        if "prompt" in rows:
            texts = list(dict.fromkeys(rows["prompt"]))
            rows = rows[rows["prompt"] == texts[n % len(texts)]]
        pieces.append(rows)
        cost += int(work.cost(rows).sum())
        if cost >= batch:
            yield _Group(pd.concat(pieces), cost, len(pieces))
            pieces, cost = [], 0
    if pieces:
        yield _Group(pd.concat(pieces), cost, len(pieces))


def _calibrated(
    work: Work, scorer: Any, costs: pd.Series, batch: int, seconds: float
) -> ModelEstimate:
    """One model timed: its first piece of work to warm up (one batch, untimed), then the
    next ones until `seconds` or CALIBRATION_SENTENCES are spent (the first again for a run
    of one), each scaled by the share of it done; the pace per sentence of the plan, times
    every sentence of the plan."""
    from tacit.models.meter import Meter, Spent, metering

    groups = _groups(work, costs, batch)
    first = next(groups)

    def meter(group: _Group, seconds: float, sentences: int) -> Meter:
        # a block of a prompt's sentences (a family's bar) is one text's where a prompt's
        # sentences are its own (a causal LM's word suffixes), or where it is timed alone
        alone = work.cost is None or group.texts == 1
        return Meter(seconds, sentences, group.texts, in_block=alone)

    warm = meter(first, 0, 0)
    with metering(warm), warm.bar() as bar, suppress(Spent):
        score_chunk(work, scorer, first.rows, bar)
    spent, sentences, prompts, partial = 0.0, 0, 0, False
    whole_seconds, whole_cost, whole_sentences = 0.0, 0, 0.0
    counts: Counter[str] = Counter()
    counted_cost = 0
    for group in _timed(groups, first):
        timing = meter(group, seconds - spent, CALIBRATION_SENTENCES - sentences)
        scored = None
        with metering(timing), timing.bar() as bar:
            try:
                scored = score_chunk(work, scorer, group.rows, bar)
            except Spent:
                partial = True
        took = timing.elapsed
        whole = timing.whole()
        spent += took
        sentences += timing.sentences_done
        prompts += timing.texts_done + (1 if timing.stopped and timing.block_done else 0)
        whole_seconds += whole[0]
        whole_cost += group.cost
        whole_sentences += whole[1]
        if scored is not None:
            counts.update(scored.counts)
            counted_cost += group.cost
        if spent >= seconds or sentences >= CALIBRATION_SENTENCES:
            break
    total = int(costs.sum())
    per_cost = total / max(whole_cost, 1)
    tokens = {
        key: round(counts[key] / counted_cost * total)
        for key in TOKEN_COUNTS
        if key in counts and counted_cost
    }
    return ModelEstimate(
        "",  # named by the caller
        # the plan's count, or, where a prompt is one sentence in the plan but a causal LM
        # scores its words' suffixes too, what the calibration found per prompt
        sentences=total if work.cost is not None else max(total, round(whole_sentences * per_cost)),
        seconds=whole_seconds * per_cost,
        calibration_seconds=spent,
        calibration_sentences=sentences,
        calibration_prompts=prompts,
        calibration_partial=partial,
        kind=getattr(scorer, "kind", None),
        tokens=tokens,
    )


def _timed(groups: Iterator[_Group], first: _Group) -> Iterator[_Group]:
    """The groups after the warm-up's, or the warm-up's again where it was the only one."""
    any_left = False
    for group in groups:
        any_left = True
        yield group
    if not any_left:
        yield first


def faster(estimate: RunEstimate, probe: str, plan: Plan, options: RunOptions) -> list[str]:
    """Where the run would take longer than LONG_RUN_SECONDS: a `note:` line with what takes
    less, as this plan and these models allow: `--limit N` (the N that takes about that long,
    for a probe that can be limited), fewer candidates, fewer words, one pass per span, a GPU.
    None for a short run or one not timed."""
    from tacit.probes import registry

    seconds = estimate.seconds
    if seconds is None or seconds <= LONG_RUN_SECONDS:
        return []
    ways = []
    unit = registry.get(probe).limit
    work = plan.work
    column = {"concepts": "concept", "items": "item"}.get(unit or "")
    if work is not None and column in work.rows:
        units = int(work.rows[column].nunique())
        n = max(1, int(units * LONG_RUN_SECONDS / seconds))
        ways.append(
            f"{option('--limit')} {n} takes about {duration(seconds * n / units)} "
            f"({n} of {units:,} {unit}, a first look)"
        )
    elif unit is not None:
        ways.append(f"{option('--limit')} N takes the first look at N {unit}")
    if plan.ask is not None:
        longer = any(m.sentences > estimate.sentences for m in estimate.models)
        ways += plan.ask.faster(longer, {m.kind for m in estimate.models})
    if options.device in ("auto", "cpu") and not _gpu_here():
        ways.append(f"a GPU ({option('--device')} cuda)")
    return [f"note: about {duration(seconds)}: " + "; ".join(ways)]


def _gpu_here() -> bool:
    """Does this machine have a CUDA GPU (where torch is loaded: a calibration loaded it)?"""
    import sys

    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.cuda.is_available())
