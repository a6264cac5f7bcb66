"""Every answer to a generation request kept the moment it arrives, so that no request a run
has had answered (and, from a hosted API, paid for) is sent again, whatever stops the run.

One file per model in the run's checkpoint (`.partial/N-answers.jsonl`), appended to: a JSON
line per answered request, `{"key", "completions"}`, keyed as `--cache` keys its entries
(tacit.models.score_cache.generation_key: the model's identity, the request, the sampling),
written and flushed to the disk (fsync) before the next answer is read. A kill at any moment
loses at most the line being written, which is left out on reading (as is any line that is not
an answer). Scorer.generate reads it before the cache and the model, and keeps each new answer
in it and in the cache as the family hands it over; `--resume` reads it. The answers read back
count as this run's (they were generated for it), not as cached.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tacit.core.cache import fingerprint
from tacit.core.errors import TacitError
from tacit.core.files import RECORD_LIMIT, read_input
from tacit.core.option_names import option
from tacit.models.answers import Completion, GenerationRequest, Sampling
from tacit.models.score_cache import generation_key, identity

SUFFIX = "-answers.jsonl"
JOURNAL_LIMIT = 64 * RECORD_LIMIT  # bytes of a model's kept answers read back, at most


def journal_path(directory: Path, model: int) -> Path:
    """Where the run's checkpoint keeps model number `model`'s answers."""
    return directory / f"{model}{SUFFIX}"


def kept_answers(directory: Path) -> int:
    """How many answered requests a checkpoint keeps (what a resumed run need not send)."""
    if not directory.is_dir():
        return 0
    return sum(len(_lines(path)) for path in sorted(directory.glob(f"*{SUFFIX}")))


def _lines(path: Path) -> list[dict[str, Any]]:
    """The usable lines of a journal: an answer each (a line cut short, or not an answer, is
    left out)."""
    try:
        data = read_input(path, str(path), limit=JOURNAL_LIMIT)
    except TacitError:
        return []
    found = []
    for line in data.split(b"\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("key"), str)
            and isinstance(entry.get("completions"), list)
        ):
            found.append(entry)
    return found


class AnsweredRequests:
    """One model's answers in a run (see the module docstring): `find` what was answered,
    `keep` what is answered now."""

    def __init__(self, path: Path, record: Mapping[str, Any]) -> None:
        """`record`: the model's manifest record, whose identity names its answers."""
        self.path = path
        self.model = fingerprint(identity(record))
        self.found = self.kept = 0
        self._answers: dict[str, list[dict[str, Any]]] = {
            entry["key"]: entry["completions"] for entry in _lines(path)
        }
        self._descriptor: int | None = None

    def find(self, request: GenerationRequest, sampling: Sampling) -> list[Completion] | None:
        """The completions kept of this request, or None: none kept (or none usable)."""
        kept = self._answers.get(generation_key(self.model, request, sampling))
        if kept is None or len(kept) != sampling.n:
            return None
        try:
            completions = [Completion.from_record(c) for c in kept]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self.found += 1
        return completions

    def keep(
        self, request: GenerationRequest, sampling: Sampling, completions: Sequence[Completion]
    ) -> None:
        """Append an answer and put it on the disk before returning."""
        key = generation_key(self.model, request, sampling)
        records = [c.record() for c in completions]
        line = json.dumps({"key": key, "completions": records}, ensure_ascii=False) + "\n"
        try:
            descriptor = self._open()
            data = line.encode("utf-8")
            while data:
                data = data[os.write(descriptor, data) :]
            os.fsync(descriptor)
        except OSError as err:
            raise TacitError(
                f"{self.path}: cannot keep the model's answers there ({err.strerror}); free "
                f"some space (what was kept stays: {option('--resume')} goes on from it)"
            ) from None
        self._answers[key] = records
        self.kept += 1

    def _open(self) -> int:
        """The journal, open to append to; a last line cut short by a kill is ended first,
        so that it stays one unusable line and the next answer a line of its own."""
        if self._descriptor is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            descriptor = os.open(self.path, flags, 0o666)
            size = os.fstat(descriptor).st_size
            if size:
                with open(self.path, "rb") as handle:
                    handle.seek(size - 1)
                    if handle.read(1) != b"\n":
                        os.write(descriptor, b"\n")
            self._descriptor = descriptor
        return self._descriptor

    def close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def __del__(self) -> None:
        self.close()
