"""The one loop over models that every probe runs.

For each model in turn (one in memory at a time): load it when first needed, score the probe's
rows in chunks of distinct texts (each chunk kept in the checkpoint, so an interrupted run can
`--resume`), finish (work that needs all of a model's rows), record the model for the
manifest, free it. A probe describes its work (tacit.probes.base.Work) and gets back one table
and the model records; `run_manifest` gives the keys every manifest shares. A model is a name
(a hub id or a local directory, loaded here) or a Scorer already in memory (used as it is).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import pandas as pd
from tqdm.auto import tqdm

from tacit.core.errors import TacitError
from tacit.core.files import sha256_bytes, table_text
from tacit.core.interface import option
from tacit.core.manifest import Manifest, ModelRecord, command_line, now, software
from tacit.core.options import RunOptions
from tacit.engine import distributed
from tacit.engine.checkpoint import Checkpoint
from tacit.probes.base import Scored, Work

if TYPE_CHECKING:
    from tacit.models.base import Scorer

# Distinct texts per checkpointed chunk: small enough that an interrupted run loses little (256
# prompts: under a minute of roberta-large on a 2-core CPU, seconds on a GPU), large enough
# that writing the chunks costs nothing next to scoring them.
CHUNK_TEXTS = 256


def model_name(model: str | Scorer) -> str:
    """How a model is named in tables and the manifest: as given, or a scorer's own name."""
    return model if isinstance(model, str) else model.name


class ModelHandle:
    """One model of the run: a name, loaded on first use of `scorer` (never, if everything it
    would compute is already in a checkpoint or cache), or a scorer already in memory."""

    def __init__(
        self,
        model: str | Scorer,
        options: RunOptions,
        *,
        probe: str,
        kinds: Sequence[str],
        tokenizer: Any = None,
        load_options: Mapping[str, Mapping[str, Any]] | None = None,
        hints: Mapping[str, str] | None = None,
    ) -> None:
        self.name, self.options, self.probe, self.kinds = model_name(model), options, probe, kinds
        self.tokenizer, self.load_options, self.hints = tokenizer, load_options or {}, hints
        self._scorer: Scorer | None = None
        self._given = not isinstance(model, str)
        if not isinstance(model, str):
            from tacit.models import check_kind

            check_kind(model.name, model.kind, kinds, probe, hints)
            self._scorer = model

    @property
    def scorer(self) -> Scorer:
        if self._scorer is None:
            from tacit.models import load_scorer

            self._scorer = load_scorer(
                self.name,
                self.options,
                kinds=self.kinds,
                probe=self.probe,
                tokenizer=self.tokenizer,
                load_options=self.load_options,
                hints=self.hints,
            )
        return self._scorer

    @property
    def loaded(self) -> bool:
        return self._scorer is not None

    def record(self) -> ModelRecord:
        """The model for the manifest; `batch_size_used` is smaller than --batch-size if device
        memory ran out. A model never loaded is recorded by name and revision only."""
        if self._scorer is None:
            revision = self.options.model_spec(self.name).revision
            return {
                "name": self.name,
                "revision": revision,
                "device": None,
                "batch_size_used": None,
            }
        record = self._scorer.record()
        record["batch_size_used"] = self._scorer.batch_size
        return record

    def free(self) -> None:
        """Drop the model so that the next one loads into free memory (a scorer handed in stays
        its owner's)."""
        if self._scorer is not None:
            self._scorer = None
            if not self._given:
                gc.collect()


def each_model(
    models: Sequence[str | Scorer],
    options: RunOptions,
    *,
    probe: str,
    kinds: Sequence[str],
    tokenizers: Mapping[str, Any] | None = None,
    load_options: Mapping[str, Mapping[str, Any]] | None = None,
    hints: Mapping[str, str] | None = None,
) -> Iterator[tuple[int, ModelHandle]]:
    """(number, handle) for each distinct model, in order; each is freed before the next.
    `tokenizers` are those already loaded (for the shared vocabulary), reused."""
    if not models:
        raise TacitError(f"no {option('--model')} given")
    first: dict[str, str | Scorer] = {}
    for model in models:
        first.setdefault(model_name(model), model)
    for number, (name, model) in enumerate(first.items()):
        handle = ModelHandle(
            model,
            options,
            probe=probe,
            kinds=kinds,
            tokenizer=(tokenizers or {}).get(name),
            load_options=load_options,
            hints=hints,
        )
        try:
            yield number, handle
        finally:
            handle.free()


def checkpoint_for(
    probe: str,
    models: Sequence[str | Scorer],
    options: RunOptions,
    work: Work,
    plan: Mapping[str, Any],
) -> Checkpoint:
    """The run's chunk store; a resumed run must have the same plan (models, rows, options).
    Only the main process of a data-parallel run keeps one (it gets every chunk whole)."""
    if not distributed.is_main():
        return Checkpoint(None, {}, resume=False)
    return Checkpoint(
        options.checkpoint,
        {
            "probe": probe,
            "tacit": software()["tacit"],
            "models": list(dict.fromkeys(model_name(m) for m in models)),
            "rows_sha256": sha256_bytes(table_text(work.rows)),
            **options.recorded(),
            **plan,
        },
        resume=options.resume,
    )


def run_models(
    models: Sequence[str | Scorer],
    options: RunOptions,
    work: Work,
    *,
    probe: str,
    plan: Mapping[str, Any] | None = None,
    tokenizers: Mapping[str, Any] | None = None,
) -> tuple[pd.DataFrame, list[ModelRecord]]:
    """Score `work` with each model in turn: (all models' result rows, one record per model).

    Rows are scored in chunks of CHUNK_TEXTS distinct keys (the same chunks in every run), each
    kept in the checkpoint; `plan` adds what else must match for a resume (vocabulary, ...).
    """
    here = distributed.world()
    checkpoint = checkpoint_for(probe, models, options, work, plan or {})
    chunk_of_row = pd.factorize(work.rows[work.key])[0] // CHUNK_TEXTS
    chunks = [work.rows[chunk_of_row == c] for c in range(chunk_of_row.max() + 1)]
    n_keys = work.rows[work.key].nunique()
    tables: list[pd.DataFrame] = []
    records: list[ModelRecord] = []
    for number, model in each_model(
        models,
        options,
        probe=probe,
        kinds=work.kinds,
        tokenizers=tokenizers,
        load_options=work.load_options,
        hints=work.hints,
    ):
        scored = [checkpoint.chunk(number, c) for c in range(len(chunks))]
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
                desc=f"scoring {model.name}",
                unit=work.unit,
                disable=not (options.progress and here.main),
            ) as bar:
                recorded = False  # the model's record, kept once before its first new chunk
                for c, chunk in enumerate(chunks):
                    if scored[c] is None:
                        scored[c] = new = score_chunk(work, scorer, chunk, bar)
                        if model.loaded and not recorded:  # a kill after the chunk keeps both
                            checkpoint.keep_record(number, model.record())
                            recorded = True
                        checkpoint.keep_chunk(number, c, new)
        table = pd.concat([s.table for s in scored if s is not None]).sort_index()
        counts = sum((Counter(s.counts) for s in scored if s is not None), Counter())
        extras: dict[str, Any] = {}
        if work.finish is not None:
            table, extras = work.finish(model, table)
        # a model that did not load this time (all resumed) keeps the record of when it did
        record = (None if model.loaded else checkpoint.record(number)) or model.record()
        checkpoint.keep_record(number, record)
        records.append(cast(ModelRecord, {**record, **dict(counts), **extras}))
        tables.append(table)
    return pd.concat(tables, ignore_index=True), records


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
        pd.concat([p.table for p in parts]).sort_index(),
        dict(sum((Counter(p.counts) for p in parts), Counter())),
    )


def run_manifest(
    probe: str, options: RunOptions, records: list[ModelRecord], started: str, **extra: Any
) -> Manifest:
    """The keys every probe's manifest has, then the probe's own (`extra`)."""
    devices = [r.get("device") for r in records if r.get("device")]
    manifest: dict[str, Any] = {
        "probe": probe,
        "command": command_line(),
        "software": software(),
        "models": records,
        "vocab_models": list(options.vocab_models),
        "device": devices[0] if devices else None,
        "dtype": options.dtype,
        "batch_size": options.batch_size,
        "compile": options.compile,
        "seed": options.seed,
        "resumed": options.resume,
        **({"model_args": dict(options.model_args)} if options.model_args else {}),
        **({"vocab_words": options.vocab_words} if options.vocab_words != "all" else {}),
        **({"processes": distributed.world().size} if distributed.world().distributed else {}),
        **({"launch_warning": problem} if (problem := distributed.launch_problem()) else {}),
        **extra,
        "started": started,
        "finished": now(),
    }
    return cast(Manifest, manifest)
