"""Scored chunks of a run kept on disk, so that an interrupted run can resume where it stopped.

A run directory holds `.partial/` while it is being scored: `plan.json` (what the run is: its
prompts, vocabulary, models and options) and one pickle per model and chunk of prompts. A
resumed run must have the same plan; it reuses the chunks it finds and scores the rest. When
the run's files are written, `.partial/` goes. The pickles round-trip exactly, so a resumed run
writes the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from typing import Any

from tacit.core import faults
from tacit.core.errors import TacitError
from tacit.core.files import write_atomic


class Checkpoint:
    """Chunk store of one run; with `directory=None`, a no-op (nothing kept)."""

    def __init__(self, directory: Path | None, plan: dict[str, Any], *, resume: bool) -> None:
        self.directory = directory
        if directory is None:  # RunOptions refuses --resume without one
            return
        plan_file = directory / "plan.json"
        text = json.dumps(plan, indent=2, sort_keys=True, default=str) + "\n"
        if resume and not plan_file.is_file():
            if (directory.parent / "manifest.json").is_file():
                raise TacitError(
                    f"--resume: the run in {directory.parent} is complete, nothing to resume: "
                    "--overwrite runs it again"
                )
            resume = False  # killed before it kept anything: nothing to reuse, start afresh
        if resume:
            if plan_file.read_text() != text:
                raise TacitError(
                    f"--resume: the unfinished run in {directory.parent} was started with other "
                    "models, options, norms or vocabulary; rerun it without --resume"
                )
            return
        shutil.rmtree(directory, ignore_errors=True)
        try:
            directory.mkdir(parents=True)
            write_atomic(plan_file, text)
        except OSError as err:
            raise TacitError(
                f"{directory}: cannot keep the run's checkpoint there ({err.strerror}); free "
                "some space, or give --out a writable place with room"
            ) from None

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{key}.pkl"

    def load(self, key: str) -> Any | None:
        """What was saved under `key`, or None."""
        if self.directory is None or not self._path(key).is_file():
            return None
        try:
            with open(self._path(key), "rb") as handle:
                return pickle.load(handle)  # our own files, written by save() below
        except Exception:  # a chunk that cannot be read back (a damaged disk): scored again
            return None

    def save(self, key: str, value: Any) -> None:
        """Keep `value` under `key` (written whole: temporary name, then rename)."""
        if self.directory is None:
            return
        try:
            write_atomic(self._path(key), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError as err:
            raise TacitError(
                f"{self.directory}: cannot keep the run's scored chunks there ({err.strerror}); "
                "free some space (what was kept stays: --resume goes on from it), or give "
                "--out a place with room"
            ) from None
        faults.point("checkpoint:saved")

    def finish(self) -> None:
        """The run's files are written: drop the chunks."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
