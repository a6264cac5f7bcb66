"""The one loop over models that every probe runs.

For each model in turn (one in memory at a time): load it when first needed, score the probe's
rows in chunks of distinct texts (each chunk kept in the checkpoint, so an interrupted run can
`--resume`), finish (work that needs all of a model's rows), record the model for the
manifest, free it. A probe describes its work (tacit.probes.base.Work) and gets back one table
and the model records; `run_manifest` gives the keys every manifest shares. The models come
with their texts read (tacit.models.resolved): a name loads here, a Scorer already in memory
is used as it is.
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd
from tqdm.auto import tqdm

from tacit.ask.base import Scored, Work
from tacit.core.errors import TacitError
from tacit.core.files import sha256_bytes, table_text
from tacit.core.manifest import Manifest, ModelRecord, command_line, now, software
from tacit.core.option_names import option
from tacit.core.options import RunOptions
from tacit.core.secrets import redact, redacted
from tacit.engine import distributed
from tacit.engine.checkpoint import Checkpoint
from tacit.models.resolved import keeping

if TYPE_CHECKING:
    from tacit.core.modelspec import ModelSpec
    from tacit.models.base import Needs, Scorer
    from tacit.models.resolved import ResolvedModel

# A checkpointed chunk holds at most CHUNK_TEXTS distinct texts and, where a text costs several
# sentences (candidate spans in its blank), about CHUNK_SENTENCES sentences: small enough that
# an interruption loses about a minute of work (256 prompts of roberta-large, or 2,048 sentences
# of a 135M causal model on a 2-core CPU; seconds on a GPU), large enough that writing the
# chunks costs nothing next to scoring them. The cut depends on the plan alone (the same chunks
# in every run of it), never on timing, so that a resumed run finds its chunks.
CHUNK_TEXTS = 256
CHUNK_SENTENCES = 2048
# a run estimated at more than this many seconds, once its first chunk is timed, says so
LONG_RUN_SECONDS = 600
PACE_AFTER_SECONDS = 5  # a pace is read off no fewer seconds of work than this


class ModelHandle:
    """One model's turn in the run: its scorer loaded on first use of `scorer` (never, if
    everything it would compute is already in a checkpoint or cache), timed, with the score
    cache attached; freed after the turn (a scorer handed in stays its owner's)."""

    def __init__(
        self,
        model: ResolvedModel,
        *,
        cache: str | Path | None,
        probe: str,
        needs: Needs,
        load_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """`cache`: where --cache keeps answers (None: nowhere)."""
        self.model, self.name, self.cache = model, model.name, cache
        self.probe, self.needs, self.load_options = probe, needs, load_options or {}
        self.load_seconds: float | None = None  # how long loading took, where it loaded here
        self._scorer: Scorer | None = None
        # where the run keeps the model's generation answers as they come (in its checkpoint)
        self.answers_at: Path | None = None
        if model.given is not None:  # refused now, in one line, if it cannot answer
            self._scorer = model.load(needs, probe)

    @property
    def spec(self) -> ModelSpec | None:
        """The model's text read, the run's loading options where it gives none (None: a
        scorer already in memory)."""
        return self.model.spec

    @property
    def scorer(self) -> Scorer:
        if self._scorer is None:
            started = time.monotonic()
            scorer = self.model.load(self.needs, self.probe, self.load_options)
            self.load_seconds = time.monotonic() - started
            # a model loaded by name: its answers keep
            self._scorer = keeping(scorer, self.cache, self.answers_at)
        return self._scorer

    @property
    def loaded(self) -> bool:
        return self._scorer is not None

    def record(self) -> ModelRecord:
        """The model for the manifest; `batch_size_used` is smaller than --batch-size if device
        memory ran out. A model never loaded is recorded by name and revision only."""
        if self._scorer is None:
            revision = self.spec.revision if self.spec is not None else None
            record: ModelRecord = {"name": self.name}
            if self.model.public != self.name:
                record["text"] = self.model.public
            record |= {"revision": revision, "device": None, "batch_size_used": None}
            return record
        record = self._scorer.record()
        if self.model.public != self.name:  # beside the name, as the manifest lists them
            # named as its tables name it (a label=, a control's suffix), its text beside
            rest = {k: v for k, v in record.items() if k not in ("name", "text")}
            record = cast(ModelRecord, {"name": self.name, "text": self.model.public, **rest})
        record.setdefault("batch_size_used", self._scorer.batch_size)
        if self._scorer.cache is not None:
            record["cache"] = self._scorer.cache.record()
        return record

    def free(self) -> None:
        """Drop the model so that the next one loads into free memory (a scorer handed in stays
        its owner's)."""
        if self._scorer is not None:
            if self._scorer.run_answers is not None:
                self._scorer.run_answers.close()
                self._scorer.run_answers = None
            self._scorer = None
            if self.model.given is None:
                gc.collect()


def each_model(
    models: Sequence[ResolvedModel],
    *,
    cache: str | Path | None,
    probe: str,
    needs: Needs,
    load_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Iterator[tuple[int, ModelHandle]]:
    """(number, handle) for each of the run's models (tacit.models.resolved.resolved_models: each
    distinct model once), in order; each is freed before the next. `cache`: --cache's."""
    if not models:
        raise TacitError(f"no {option('--model')} given")
    for number, model in enumerate(models):
        handle = ModelHandle(
            model, cache=cache, probe=probe, needs=needs, load_options=load_options
        )
        try:
            yield number, handle
        finally:
            handle.free()


def checkpoint_for(
    probe: str,
    models: Sequence[ResolvedModel],
    options: RunOptions,
    work: Work,
    plan: Mapping[str, Any],
    run: Mapping[str, Any] | None = None,
) -> Checkpoint:
    """The run's chunk store; a resumed run must have the same plan (models, rows, options).
    `run`: this start as the checkpoint keeps it (Checkpoint). Only the main process of a
    data-parallel run keeps one (it gets every chunk whole)."""
    if not distributed.is_main():
        return Checkpoint(None, {}, resume=False, run=run)
    return Checkpoint(
        options.checkpoint,
        {
            "probe": probe,
            "tacit": software()["tacit"],
            "models": [model.public for model in models],
            "rows_sha256": sha256_bytes(table_text(work.rows)),
            **options.recorded(),
            **plan,
        },
        resume=options.resume,
        run=run,
    )


def run_models(
    models: Sequence[ResolvedModel],
    options: RunOptions,
    work: Work,
    *,
    probe: str,
    plan: Mapping[str, Any] | None = None,
    run: dict[str, Any] | None = None,
) -> tuple[pd.DataFrame, list[ModelRecord]]:
    """Score `work` with each model in turn: (all models' result rows, one record per model).

    Rows are scored in chunks of CHUNK_TEXTS distinct keys (the same chunks in every run), each
    kept in the checkpoint; `plan` adds what else must match for a resume (vocabulary, ...).
    `run` describes this start (its `started`, and what the manifest knows before scoring):
    the checkpoint keeps it, and it is updated in place with the run's history (its first
    start and command, and `resumed`, each resume's), for run_manifest.
    """
    here = distributed.world()
    run = run if run is not None else {}
    run.setdefault("command", command_line())
    checkpoint = checkpoint_for(probe, models, options, work, plan or {}, run)
    run.update(checkpoint.history)
    chunks = chunked(work)
    n_keys = work.rows[work.key].nunique()
    use_threads(options)
    tables: list[pd.DataFrame] = []
    records: list[ModelRecord] = []
    for number, model in each_model(
        models,
        cache=options.cache,
        probe=probe,
        needs=work.needs,
        load_options=work.load_options,
    ):
        scored = [checkpoint.chunk(number, c) for c in range(len(chunks))]
        model.answers_at = checkpoint.answers_path(number)
        timing: dict[str, Any] = {}
        if here.distributed:
            scored = distributed.broadcast(scored)  # the main process's resumed chunks
        if any(s is None for s in scored):
            # loaded before the bar opens (a loading error stays one line), unless the work
            # loads it itself when it needs it
            scorer: Any = model if work.lazy else model.scorer
            done = sum(chunks[c][work.key].nunique() for c, s in enumerate(scored) if s is not None)
            with tqdm(
                total=n_keys,
                initial=done,
                desc=f"{'asking' if work.sampling is not None else 'scoring'} {model.name}",
                unit=work.unit,
                disable=not (options.progress and here.main),
            ) as bar:
                recorded = False  # the model's record, kept once before its first new chunk
                pace = Pace(work, chunks, [s is None for s in scored], model.name, bar)
                for c, chunk in enumerate(chunks):
                    if scored[c] is None:
                        started = time.monotonic()
                        scored[c] = new = score_chunk(work, scorer, chunk, bar)
                        pace.done(c, time.monotonic() - started)
                        if model.loaded and not recorded:  # a kill after the chunk keeps both
                            checkpoint.keep_record(number, model.record())
                            recorded = True
                        checkpoint.keep_chunk(number, c, new)
                timing = pace.record(model.load_seconds)
        table = pd.concat([s.table for s in scored if s is not None]).sort_index(kind="stable")
        counts = sum((Counter(s.counts) for s in scored if s is not None), Counter())
        timing = {**(timing or {}), **times_of(counts)}
        extras: dict[str, Any] = {}
        if work.after_model is not None:
            table, extras = work.after_model(model, table)
        # a model that did not load this time (all resumed) keeps the record of when it did
        record = (None if model.loaded else checkpoint.record(number)) or model.record()
        checkpoint.keep_record(number, record)
        timed = {"timing": timing} if timing else {}
        records.append(cast(ModelRecord, {**record, **dict(counts), **extras, **timed}))
        tables.append(table)
    return pd.concat(tables, ignore_index=True), records


def times_of(counts: Counter[str]) -> dict[str, float]:
    """The counts that are times (`*_milliseconds`: the tie rule's settling), taken out of
    them as seconds for the model's `timing`: how long, not what (runs of the same work
    differ in them, as in scoring_seconds)."""
    found = {}
    for key in [k for k in counts if k.endswith("_milliseconds")]:
        found[key.removesuffix("_milliseconds") + "_seconds"] = round(counts.pop(key) / 1000, 3)
    return found


def chunked(work: Work) -> list[pd.DataFrame]:
    """The work's rows cut into checkpoint chunks: distinct keys in order of first appearance,
    a chunk closed at CHUNK_TEXTS keys or once it holds about CHUNK_SENTENCES sentences."""
    costs = work.costs()
    chunk_of_key: list[int] = []
    chunk, keys, sentences = 0, 0, 0
    for cost in costs.to_numpy():
        if keys and (keys == CHUNK_TEXTS or sentences + cost > CHUNK_SENTENCES):
            chunk, keys, sentences = chunk + 1, 0, 0
        chunk_of_key.append(chunk)
        keys, sentences = keys + 1, sentences + int(cost)
    key_chunk = dict(zip(costs.index, chunk_of_key))
    chunk_of_row = work.rows[work.key].map(key_chunk).to_numpy()
    return [work.rows[chunk_of_row == c] for c in range(chunk + 1)]


class Pace:
    """How long a model's part of the run takes: its estimate once its first chunk is scored
    (that chunk's seconds per sentence, times every sentence this run scores: what a dry run
    says, made from the run's own first chunk), and the time it took; kept in the manifest
    (`timing`) so that the two can be compared. Where the pace says the rest will take over
    LONG_RUN_SECONDS, said once, in a `note:` line above the bar (with what to do instead)."""

    def __init__(
        self, work: Work, chunks: list[pd.DataFrame], todo: list[bool], model: str, bar: tqdm
    ) -> None:
        costs = work.costs()
        self.cost = [int(costs[list(dict.fromkeys(c[work.key]))].sum()) for c in chunks]
        self.left = self.planned = sum(cost for cost, new in zip(self.cost, todo) if new)
        self.model, self.bar, self.said = model, bar, False
        self.started = time.monotonic()
        self.scored = 0
        self.seconds = 0.0  # scoring, summed over the chunks scored
        self.estimate: dict[str, float] = {}

    def done(self, chunk: int, seconds: float) -> None:
        self.scored += self.cost[chunk]
        self.left -= self.cost[chunk]
        self.seconds += seconds
        if not self.estimate and self.scored:
            self.estimate = {
                "estimate_seconds": round(seconds / self.scored * self.planned, 3),
                "estimated_from_sentences": self.scored,
                "estimated_from_seconds": round(seconds, 3),
            }
        elapsed = time.monotonic() - self.started
        if self.said or self.bar.disable or not self.scored or elapsed < PACE_AFTER_SECONDS:
            return
        remaining = elapsed / self.scored * self.left
        self.said = True
        if remaining > LONG_RUN_SECONDS:
            self.bar.write(
                f"note: {self.model} needs about {remaining / 60:.0f} more minutes at this "
                f"pace ({self.left:,} sentences left); an interruption keeps what was scored "
                f"({option('--resume')} goes on), {option('--limit')} takes a first look, and "
                f"{option('--dry-run')} says what a run costs before it starts",
                file=sys.stderr,
            )

    def record(self, load_seconds: float | None) -> dict[str, Any]:
        """The manifest's `timing` of the model: loading and scoring seconds, the sentences
        scored, and the estimate its first chunk gave."""
        return {
            **({"load_seconds": round(load_seconds, 3)} if load_seconds is not None else {}),
            "scoring_seconds": round(self.seconds, 3),
            "sentences": self.scored,
            **self.estimate,
        }


def use_threads(options: RunOptions) -> None:
    """torch's CPU threads as `--threads` asks (else torch's own choice, left as it is)."""
    if options.threads is not None:
        import torch

        torch.set_num_threads(options.threads)


def threads_used() -> int | None:
    """The CPU threads torch uses, where this process loaded torch (for the manifest)."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else None


def score_chunk(work: Work, scorer: Any, chunk: pd.DataFrame, bar: tqdm) -> Scored:
    """One chunk's result; in a data-parallel run, each process scores its shard of the chunk's
    distinct keys and every process gets the whole chunk back (same rows as one process)."""
    here = distributed.world()
    if not here.distributed:
        result = work.score(scorer, chunk, bar)
        return result if isinstance(result, Scored) else Scored(result)
    keys = list(dict.fromkeys(chunk[work.key]))
    mine = chunk[chunk[work.key].isin(distributed.shard(keys))]
    part: Scored | None = None
    if len(mine):
        with tqdm(disable=True) as quiet:  # the main bar counts whole chunks, below
            result = work.score(scorer, mine, quiet)
        part = result if isinstance(result, Scored) else Scored(result)
    distributed.test_exit()
    parts = [p for p in distributed.gather(part) if p is not None]
    bar.update(len(keys))
    return Scored(
        pd.concat([p.table for p in parts]).sort_index(kind="stable"),
        dict(sum((Counter(p.counts) for p in parts), Counter())),
    )


def run_manifest(
    probe: str,
    options: RunOptions,
    records: list[ModelRecord],
    started: str,
    history: Mapping[str, Any] | None = None,
    **extra: Any,
) -> Manifest:
    """The keys every probe's manifest has, then the probe's own (`extra`). `history` (what
    run_models kept of a resumed run): its first start and command, and `resumed`, a
    `started` and `command` per resume."""
    devices = [r.get("device") for r in records if r.get("device")]
    history = history or {}
    manifest: dict[str, Any] = {
        "probe": probe,
        "command": history.get("command") or command_line(),
        "software": software(),
        "models": records,
        "vocab_models": [redact(text) for text in options.vocab_models],
        "device": devices[0] if devices else None,
        "dtype": options.dtype,
        "batch_size": options.batch_size,
        "compile": options.compile,
        "seed": options.seed,
        "threads": threads_used(),
        "resumed": list(history.get("resumed") or []),
        **({"model_args": redacted(dict(options.model_args))} if options.model_args else {}),
        **({"vocab_words": options.vocab_words} if options.vocab_words != "all" else {}),
        **({"control": options.control} if options.control is not None else {}),
        **({"processes": distributed.world().size} if distributed.world().distributed else {}),
        **({"launch_warning": problem} if (problem := distributed.launch_problem()) else {}),
        **extra,
        "started": history.get("started") or started,
        "finished": now(),
    }
    return cast(Manifest, manifest)
