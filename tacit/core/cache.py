"""The one home for what tacit keeps on disk to save work between runs (each tokenizer's
single-token words, PragmEval's frozen features): an entry is named by a fingerprint of all
its value depends on (a change is a new name, never a stale answer), written whole or not at
all, and one that cannot be read counts as missing (computed again, no error). A cache that
cannot be written is a warning, once, and `unwritten` says where and why for the run's record.
The run's checkpoint is not a cache (tacit.engine.checkpoint).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from tacit.core.errors import TacitError
from tacit.core.files import read_input, write_atomic

T = TypeVar("T")


def fingerprint(*parts: object) -> str:
    """Hex sha256 identifying the parts: text and bytes as they are, anything else as sorted
    JSON (with str() for what JSON cannot hold)."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, bytes):
            data = part
        elif isinstance(part, str):
            data = part.encode("utf-8")
        else:
            data = json.dumps(part, sort_keys=True, default=str).encode("utf-8")
        digest.update(data + b"\0")
    return digest.hexdigest()


class DiskCache(Generic[T]):
    """Entries of one kind under one directory (see the module docstring).

    Args:
        directory: where the entries go (created on the first write).
        suffix: each entry's file extension (`.json`, `.npy`).
        dump: a value -> the entry's bytes.
        load: an entry's bytes -> the value, or None when they cannot be one.
        what: what is cached, for the warning (`features`, `single-token words`).
        advice: how to give the cache a place it can write (the option or variable).
    """

    def __init__(
        self,
        directory: Path,
        suffix: str,
        dump: Callable[[T], bytes],
        load: Callable[[bytes], T | None],
        *,
        what: str,
        advice: str,
    ) -> None:
        self.directory, self.suffix, self.dump, self.load = directory, suffix, dump, load
        self.what, self.advice = what, advice
        self.hits = self.misses = 0
        self.unwritten: str | None = None

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{self.suffix}"

    def read(self, key: str, valid: Callable[[T], bool] | None = None) -> T | None:
        """The entry's value, or None when it is missing or unusable (`valid`: what else the
        value must be, e.g. of the shape the caller needs)."""
        try:
            data = read_input(self.path(key))  # a regular file of a size tacit reads, only
        except TacitError:  # missing, unreadable, a FIFO: not a value
            return None
        try:
            value = self.load(data)
        except Exception:  # any reader's failure means the entry is not a value: recompute
            return None
        return value if value is not None and (valid is None or valid(value)) else None

    def get(
        self, key: str, compute: Callable[[], T], valid: Callable[[T], bool] | None = None
    ) -> T:
        """The entry's value, or `compute()`'s, written for next time."""
        value = self.read(key, valid)
        if value is not None:
            self.hits += 1
            return value
        self.misses += 1
        value = compute()
        self.write(key, value)
        return value

    def write(self, key: str, value: T) -> None:
        """Keep `value` under `key`; a directory that cannot be written warns once."""
        if self.unwritten is not None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path(key), self.dump(value))
        except OSError as err:
            self.unwritten = f"{self.directory}: {err.strerror}"
            warnings.warn(
                f"{self.directory}: cannot cache {self.what} there ({err.strerror}); the run "
                f"goes on without caching (free some space, or {self.advice})",
                stacklevel=3,
            )
