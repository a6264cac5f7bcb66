"""Scored chunks of a run kept on disk, so that an interrupted run can resume where it stopped.

While scoring, a run directory holds `.partial/`: `plan.json` (what the run is), `run.json`
(when and how it started and resumed: `probe runs` reads it), an `.npz` per model and chunk
and a `.json` record per model, in formats that execute nothing (tacit.engine.chunkfile). A
resumed run must have the same plan; it reuses the chunks it finds. A damaged or foreign
chunk is scored again (a warning), such a record refused in one line, as is an old pickled
checkpoint. `.partial/` goes when the run is saved; chunks round-trip exactly.
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from tacit.ask.base import Scored
from tacit.core import faults
from tacit.core.errors import TacitError, TacitWarning, shorten
from tacit.core.files import RECORD_LIMIT, read_input, write_atomic
from tacit.core.manifest import ModelRecord
from tacit.core.option_names import option
from tacit.engine import chunkfile
from tacit.engine.chunkfile import Unusable

# what a plan's hashes stand for, in a message
HASHED = {
    "rows_sha256": "the prompts (the probe's options, norms or concepts)",
    "vocabulary_sha256": "the vocabulary",
    "candidates_sha256": "the candidates",
    "items_sha256": "the items",
}


class ResumeRefused(TacitError):
    """A checkpoint that `--resume` cannot go on from; the message says what to do instead (so
    the usual "the same command with --resume" hint must not be added to it)."""


def kept_chunks(directory: Path) -> int:
    """How many scored chunks a checkpoint holds (what a resumed run need not score again)."""
    if not directory.is_dir():
        return 0
    return sum(
        not path.stem.endswith("-model") for path in directory.glob(f"*{chunkfile.CHUNK_SUFFIX}")
    )


RUN_FILE = "run.json"  # the run's story so far: its first start and command, each resume


class Checkpoint:
    """Chunk store of one run; with `directory=None`, a no-op (nothing kept).

    `run` describes this start (`started`, `command`, and what the probe knew of its manifest
    before scoring, such as the norms): kept in run.json beside the plan, never compared for a
    resume. A resume keeps the first start's and adds its own `started` and `command` to
    `resumed`; `history` is the record a finished run's manifest takes them from."""

    def __init__(
        self,
        directory: Path | None,
        plan: dict[str, Any],
        *,
        resume: bool,
        run: Mapping[str, Any] | None = None,
    ) -> None:
        self.directory = directory
        self.key = ""
        self.history: dict[str, Any] = {**(run or {}), "resumed": []}
        if directory is None:  # RunOptions refuses --resume without one
            return
        text = json.dumps(plan, indent=2, sort_keys=True, default=str) + "\n"
        self.key = chunkfile.plan_key(text)
        if resume and _resumable(directory, plan, text):
            kept = _json(directory / RUN_FILE)
            if kept.get("started") and isinstance(kept.get("resumed"), list):
                this = {k: (run or {}).get(k) for k in ("started", "command")}
                self.history = {**kept, "resumed": [*kept["resumed"], this]}
            with suppress(OSError):  # the manifest still says it; a later resume, less
                self._keep_history()
            return
        shutil.rmtree(directory, ignore_errors=True)
        try:
            directory.mkdir(parents=True)
            write_atomic(directory / "plan.json", text)
            self._keep_history()
        except OSError as err:
            raise TacitError(
                f"{directory}: cannot keep the run's checkpoint there ({err.strerror}); free "
                f"some space, or give {option('--out')} a writable place with room"
            ) from None

    def _path(self, key: str, suffix: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{key}{suffix}"

    def _read(self, key: str, suffix: str) -> bytes | None:
        """A kept file's bytes; None when there is none (or no checkpoint)."""
        if self.directory is None:
            return None
        path = self._path(key, suffix)
        if not path.exists() and not path.is_symlink():
            return None
        try:
            return read_input(path)  # a regular file of a size tacit reads, only
        except TacitError as err:  # a damaged disk, a FIFO: what cannot be read is not taken
            raise Unusable(f"cannot be read ({str(err).removeprefix(f'{path}: ')})") from None

    def chunk(self, model: int, chunk: int) -> Scored | None:
        """The chunk kept for `model`, or None: none kept, or one that is damaged or not this
        run's (then said in a warning: it is scored again)."""
        key = f"{model}-{chunk}"
        try:
            data = self._read(key, chunkfile.CHUNK_SUFFIX)
            if data is None:
                return None
            table, counts = chunkfile.read_chunk(data, plan=self.key, key=key)
        except Unusable as why:
            path = self._path(key, chunkfile.CHUNK_SUFFIX)
            warnings.warn(f"{path}: {why}; scored again", TacitWarning, stacklevel=2)
            return None
        return Scored(table, counts)

    def keep_chunk(self, model: int, chunk: int, scored: Scored) -> None:
        """Keep a scored chunk (written whole: temporary name, then rename)."""
        key = f"{model}-{chunk}"
        self._write(
            key,
            chunkfile.CHUNK_SUFFIX,
            lambda: chunkfile.chunk_bytes(scored.table, scored.counts, plan=self.key, key=key),
        )

    def record(self, model: int) -> ModelRecord | None:
        """The record kept for `model` when it was loaded, or None: none kept.

        Raises:
            ResumeRefused: the record is damaged or not this run's: the model cannot be
                recorded truthfully without it.
        """
        key = f"{model}-model"
        try:
            data = self._read(key, chunkfile.RECORD_SUFFIX)
            if data is None:
                return None
            return chunkfile.read_record(data, plan=self.key, key=key)  # type: ignore[return-value]
        except Unusable as why:
            path = self._path(key, chunkfile.RECORD_SUFFIX)
            raise ResumeRefused(
                f"{option('--resume')}: {path}: {why}; the run's record of that model cannot "
                f"be trusted: {option('--overwrite')} scores the run again from the start"
            ) from None

    def answers_path(self, model: int) -> Path | None:
        """Where the model's generation answers are kept as they come
        (tacit.models.answered); None without a checkpoint."""
        if self.directory is None:
            return None
        from tacit.models.answered import journal_path

        return journal_path(self.directory, model)

    def keep_record(self, model: int, record: ModelRecord) -> None:
        """Keep a model's record (what the manifest says of it once it is loaded)."""
        key = f"{model}-model"
        self._write(
            key,
            chunkfile.RECORD_SUFFIX,
            lambda: chunkfile.record_bytes(record, plan=self.key, key=key),
        )

    def _write(self, key: str, suffix: str, data: Callable[[], bytes]) -> None:
        """Write what `data` makes under `key` (nothing without a checkpoint)."""
        if self.directory is None:
            return
        try:
            write_atomic(self._path(key, suffix), data())
        except OSError as err:
            raise TacitError(
                f"{self.directory}: cannot keep the run's scored chunks there ({err.strerror}); "
                f"free some space (what was kept stays: {option('--resume')} goes on from it), "
                f"or give {option('--out')} a place with room"
            ) from None
        faults.point("checkpoint:saved")

    def _keep_history(self) -> None:
        assert self.directory is not None
        write_atomic(self.directory / RUN_FILE, json.dumps(self.history, indent=2, default=str))

    def finish(self) -> None:
        """The run's files are written: drop the chunks."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def _resumable(directory: Path, plan: Mapping[str, Any], text: str) -> bool:
    """Can a run with this plan go on from `directory`? False when nothing was kept (the run
    starts afresh); a checkpoint it cannot use, or a finished run, is refused in one line that
    says what the directory holds and what to do."""
    run, probe = directory.parent, plan.get("probe")
    pickled = sorted(directory.glob("*.pkl"))
    if pickled:
        raise ResumeRefused(
            f"{option('--resume')}: {directory} holds a checkpoint of an earlier version of "
            f"tacit ({pickled[0].name}: pickles, never loaded now, since loading one can run "
            f"code); {option('--overwrite')} scores the run again from the start"
        )
    plan_file = directory / "plan.json"
    if not plan_file.is_file():
        if (run / "manifest.json").is_file():
            raise ResumeRefused(_finished(run, plan))
        return False  # killed before it kept anything: nothing to reuse, start afresh
    kept = _json(plan_file)
    if _text(plan_file) == text:
        return True
    theirs = kept.get("probe", "?")
    out = f"give this command another {option('--out')}"
    if theirs != probe:
        raise ResumeRefused(
            f"{option('--resume')}: {run} holds an unfinished {theirs} run, not a {probe} run: "
            f"{out}, or go on with that run by the {theirs} command it was started with"
        )
    differ = _differences(kept, plan) or "its plan.json cannot be read"
    raise ResumeRefused(
        f"{option('--resume')}: the unfinished {probe} run in {run} was started with other "
        f"options ({differ}): {out}, or go on with that run by the options it was started with"
    )


def _finished(run: Path, plan: Mapping[str, Any]) -> str:
    """What to say to `--resume` on a finished run: what it holds, and what to do instead."""
    manifest = _json(run / "manifest.json")
    theirs, probe = manifest.get("probe", "?"), plan.get("probe")
    out = f"give this command another {option('--out')} (that run stays as it is)"
    if theirs != probe:
        return (
            f"{option('--resume')}: {run} holds a finished {theirs} run, not a {probe} run: {out}"
        )
    models = manifest.get("models")
    comparable = {
        "models": [m.get("name") for m in models if isinstance(m, dict)]
        if isinstance(models, list)
        else None,
        **{k: manifest.get(k) for k in ("dtype", "batch_size", "seed", "compile", "vocab_models")},
    }
    vocabulary = manifest.get("vocabulary")
    if isinstance(vocabulary, dict):
        comparable["vocabulary_sha256"] = vocabulary.get("sha256")
    known = {k: v for k, v in comparable.items() if k in plan and v is not None}
    differ = _differences(known, {k: plan[k] for k in known})
    if differ:
        return (
            f"{option('--resume')}: {run} holds a finished {probe} run of other options "
            f"({differ}), nothing to resume: {out}"
        )
    return (
        f"{option('--resume')}: the run in {run} is complete, nothing to resume: "
        f"{option('--overwrite')} runs it again (replacing it), or another {option('--out')} "
        "keeps it"
    )


def _text(path: Path) -> str:
    """A small file of the checkpoint as text; empty where it is none tacit reads (a FIFO, a
    device, a file beyond RECORD_LIMIT)."""
    try:
        return read_input(path, limit=RECORD_LIMIT).decode("utf-8", "replace")
    except TacitError:
        return ""


def _json(path: Path) -> dict[str, Any]:
    """A JSON object from a file; empty when it cannot be read as one."""
    try:
        value = json.loads(_text(path))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _differences(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> str:
    """The options that set what differs between a kept plan and this run's, with the kept
    run's values: `--batch-size 64 (here 32), the vocabulary`."""
    ours = json.loads(json.dumps(ours, default=str))  # as plan.json holds it
    said = []
    for key in dict.fromkeys([*ours, *theirs]):
        was, now = theirs.get(key), ours.get(key)
        if key == "probe" or was == now:
            continue
        if key in HASHED:
            said.append(HASHED[key])
        elif key == "tacit":
            said.append(f"tacit {was} (here {now})")
        else:
            flag = option("--model" if key == "models" else "--" + key.replace("_", "-"))
            kept, here = _differing(was, now)
            said.append(f"{flag} {kept} (here {here})")
    return ", ".join(said)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def _differing(was: Any, now: Any, width: int = 40) -> tuple[str, str]:
    """Two values as a message shows them: where they are long, the part where they differ
    (a list's first differing entries; a text from a little before its first differing
    character), so that a long model text's difference is seen, not cut off.

    Examples:
        >>> _differing(["m,base_url=http://h/v1,timeout=5"], ["m,base_url=http://h/v1,timeout=9"],
        ...            20)
        ('...timeout=5', '...timeout=9')
    """
    if isinstance(was, list) and isinstance(now, list) and len(was) == len(now):
        pairs = [(a, b) for a, b in zip(was, now) if a != b]
        if len(pairs) == 1:
            was, now = pairs[0]
    kept, here = _value(was), _value(now)
    if len(kept) <= width and len(here) <= width:
        return kept, here
    same = next(
        (n for n, (a, b) in enumerate(zip(kept, here)) if a != b), min(len(kept), len(here))
    )
    option_start = kept.rfind(",", 0, same) + 1  # the option it differs in, from its start
    start = option_start if same - option_start < width // 2 else max(0, same - 10)
    lead = "..." if start else ""
    return (
        lead + shorten(kept[start:], width - len(lead)),
        lead + shorten(here[start:], width - len(lead)),
    )
