"""What a run would cost, before it runs (`--dry-run`): the probe's plan counted (prompts,
candidates, sentences per model) and each model timed on a short calibration (a few of the
run's own prompts, scored after one more to warm the model up), extrapolated over every
sentence. Nothing is written and nothing else is scored. The estimate is the calibration's
pace times the work: batches of a full run are fuller, so a long run usually goes a little
faster than said; the tokens are the calibration's per sentence, where the family counts them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from tacit.core.numbers import format_number
from tacit.engine.runner import each_model, score_chunk, use_threads

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.options import RunOptions
    from tacit.models.base import Scorer
    from tacit.probes.base import Plan, Work

# sentences a calibration scores at least (or the whole run, if it is smaller)
CALIBRATION_SENTENCES = 64
# the work counts a scorer keeps (tacit.models.answers.SpanScores.work) that are tokens
TOKEN_COUNTS = ("span_tokens", "span_rows")


@dataclass(frozen=True)
class ModelEstimate:
    """One model's part of a run: its sentences, the calibration that timed it, the estimate."""

    model: str
    sentences: int
    seconds: float  # the whole run's scoring, extrapolated
    load_seconds: float
    calibration_sentences: int
    calibration_seconds: float
    tokens: Mapping[str, int] = field(default_factory=dict)  # extrapolated work counts


@dataclass(frozen=True)
class RunEstimate:
    """What `--dry-run` says of a run: the plan's counts and each model's estimate."""

    probe: str
    prompts: int
    rows: int
    candidates: str
    models: list[ModelEstimate]

    @property
    def seconds(self) -> float:
        return sum(m.seconds + m.load_seconds for m in self.models)

    def __str__(self) -> str:
        lines = [
            f"{self.probe} (dry run: nothing scored beyond a calibration, nothing written)",
            f"  prompts: {self.prompts:,} ({self.rows:,} rows), ranked among {self.candidates}",
        ]
        for m in self.models:
            tokens = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in m.tokens.items())
            pace = m.calibration_sentences / m.calibration_seconds if m.calibration_seconds else 0
            lines.append(
                f"  {m.model}: {m.sentences:,} sentences{f' ({tokens})' if tokens else ''}; "
                f"about {_duration(m.seconds)} to score at {format_number(pace)} sentences/s "
                f"(timed on {m.calibration_sentences:,}), {_duration(m.load_seconds)} to load"
            )
        lines.append(f"  in all: about {_duration(self.seconds)}")
        return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_run(
    probe: str, models: Sequence[str | Scorer], options: RunOptions, plan: Plan
) -> RunEstimate:
    """The plan counted and each model timed (see the module docstring)."""
    work = plan.work
    assert work is not None, "a plan without work costs nothing"
    costs = work.costs()
    total = int(costs.sum())
    sample = _calibration_keys(costs)
    use_threads(options)
    estimates = []
    for _, model in each_model(
        models,
        options,
        probe=probe,
        needs=work.needs,
        tokenizers=plan.tokenizers,
        load_options=work.load_options,
    ):
        started = time.monotonic()
        scorer: Any = model if work.lazy else model.scorer
        loaded = time.monotonic() - started
        estimates.append(_timed(model.name, scorer, work, sample, total, loaded, options))
    candidates = plan.candidates
    among = (
        f"a shared vocabulary of {len(candidates.vocab):,} words"
        if candidates is not None and candidates.vocabulary is not None
        else f"{', '.join(f'{len(s.spans):,} spans' for s in candidates.sets.values())}"
        if candidates is not None and candidates.sets
        else "what the probe asks"
    )
    return RunEstimate(probe, len(costs), len(work.rows), among, estimates)


def _calibration_keys(costs: pd.Series) -> list[Any]:
    """The keys a calibration scores: one to warm up, then enough for CALIBRATION_SENTENCES."""
    keys, sentences = [], 0
    for key, cost in costs.items():
        keys.append(key)
        if len(keys) > 1:
            sentences += int(cost)
        if sentences >= CALIBRATION_SENTENCES:
            break
    return keys


def _timed(
    name: str,
    scorer: Any,
    work: Work,
    keys: list[Any],
    total: int,
    loaded: float,
    options: RunOptions,
) -> ModelEstimate:
    """One model's calibration: the first key alone (warm-up, not timed), then the rest."""
    rows = work.rows[work.key].isin(keys[:1])
    with tqdm(disable=True) as quiet:
        score_chunk(work, scorer, work.rows[rows], quiet)
        timed = work.rows[work.key].isin(keys[1:] or keys[:1])
        started = time.monotonic()
        scored = score_chunk(work, scorer, work.rows[timed], quiet)
        seconds = max(time.monotonic() - started, 1e-9)
    sentences = int(work.costs()[list(keys[1:] or keys[:1])].sum())
    per_sentence = seconds / max(sentences, 1)
    tokens = {
        key: round(scored.counts[key] / max(sentences, 1) * total)
        for key in TOKEN_COUNTS
        if key in scored.counts
    }
    return ModelEstimate(name, total, per_sentence * total, loaded, sentences, seconds, tokens)
