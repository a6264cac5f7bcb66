"""Fault injection, caches (issue 28, part of item 4): a damaged cache entry (cut short by a
crash or a full disk, garbled, of another shape) is rebuilt with no error, where it used to fail
every later run until deleted by hand; a cache that cannot be written (read-only, full disk) is
a warning and the run goes on without it."""

from __future__ import annotations

import errno
import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import tacit.core.cache
from tacit.cli import app
from tacit.core.paths import cache_dir
from tacit.probes.pragmeval.frozen import read_features


def pragmeval(data: Path, model: str, cache: Path, out: Path):
    args = [
        "pragmeval",
        "--data",
        data,
        "-m",
        model,
        "--task",
        "Sarcasm",
        "--cache-dir",
        cache,
        "--out",
        out,
        "-q",
    ]
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return json.loads((out / "manifest.json").read_text())["models"][0]["feature_cache"]


def disk_full(*args, **kwargs):
    """tacit.core.files.write_atomic on a full disk (it removes its temporary file)."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


DAMAGES = {
    "cut short": lambda data: data[: len(data) * 2 // 3],
    "cut in the header": lambda data: data[:40],
    "empty": lambda data: b"",
    "garbled": lambda data: data[:10] + b"\xff" * (len(data) - 10),
    "other rows": lambda data: npy(np.ones((2, 8), dtype=np.float32)),
    "not a matrix": lambda data: npy(np.ones(5, dtype=np.float32)),
    "integers": lambda data: npy(np.ones((4, 8), dtype=np.int64)),
    "pickled objects": lambda data: npy(np.array([{"a": 1}], dtype=object)),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_feature_cache_entries_are_rebuilt(pragmeval_data, mlm, tmp_path, damage):
    # before: `ValueError: cannot reshape array ...` (or EOF, or pickles refused) on every
    # later run, until the entry was deleted by hand
    cache = tmp_path / "cache"
    assert pragmeval(pragmeval_data, mlm, cache, tmp_path / "first")["misses"] == 3
    entries = sorted((cache / "features").glob("*.npy"))
    good = {p: p.read_bytes() for p in entries}
    for path in entries:
        path.write_bytes(DAMAGES[damage](good[path]))
    record = pragmeval(pragmeval_data, mlm, cache, tmp_path / "again")
    assert (record["hits"], record["misses"]) == (0, 3)  # every damaged entry computed again
    for path in entries:
        assert read_features(path, len(np.load(path))) is not None  # and replaced whole
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "first" / "configs.csv"),
        pd.read_csv(tmp_path / "again" / "configs.csv"),
    )
    assert pragmeval(pragmeval_data, mlm, cache, tmp_path / "third")["hits"] == 3


@pytest.mark.slow
def test_a_feature_cache_on_a_full_disk(pragmeval_data, mlm, tmp_path, monkeypatch):
    # before: `OSError: [Errno 28] No space left on device`, a traceback, no result
    monkeypatch.setattr(tacit.core.cache, "write_atomic", disk_full)
    cache = tmp_path / "cache"
    with pytest.warns(UserWarning, match="cannot cache features there .No space left on device"):
        record = pragmeval(pragmeval_data, mlm, cache, tmp_path / "run")
    assert record["misses"] == 3
    assert list((cache / "features").iterdir()) == []  # nothing half-written


def test_a_read_only_feature_cache(pragmeval_data, mlm, tmp_path):
    # before: `OSError: [Errno 30] Read-only file system` (here: a directory we may not write)
    cache = tmp_path / "cache"
    (cache / "features").mkdir(parents=True)
    (cache / "features").chmod(0o555)
    try:
        if os.access(cache / "features", os.W_OK):
            pytest.skip("running as root: a read-only directory can still be written")
        with pytest.warns(UserWarning, match="cannot cache features there .Permission denied"):
            pragmeval(pragmeval_data, mlm, cache, tmp_path / "run")
    finally:
        (cache / "features").chmod(0o755)


@pytest.mark.slow
def test_a_read_only_cache_that_holds_the_features_is_still_read(pragmeval_data, mlm, tmp_path):
    cache = tmp_path / "cache"
    pragmeval(pragmeval_data, mlm, cache, tmp_path / "first")
    (cache / "features").chmod(0o555)
    try:
        assert pragmeval(pragmeval_data, mlm, cache, tmp_path / "again")["hits"] == 3
    finally:
        (cache / "features").chmod(0o755)


def vocab_run(model: str, out: Path) -> list[str]:
    result = CliRunner().invoke(app, ["vocab", "-m", model, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return out.read_text().split()


@pytest.mark.parametrize(
    "damage", ["", '{"bear": 5', "[1, 2]", '{"bear": -1}', '{"bear": true}', "\xff\xfe"]
)
def test_damaged_words_cache_entries_are_rebuilt(tiny_bert, tmp_path, damage):
    first = vocab_run(tiny_bert, tmp_path / "first.txt")
    (entry,) = (cache_dir() / "single-token-words").glob("*.json")
    good = entry.read_bytes()
    entry.write_bytes(damage.encode("utf-8", "surrogateescape"))
    assert vocab_run(tiny_bert, tmp_path / "again.txt") == first
    assert entry.read_bytes() == good  # rebuilt whole


def test_a_words_cache_on_a_full_disk(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setattr(tacit.core.cache, "write_atomic", disk_full)
    with pytest.warns(UserWarning, match="cannot cache single-token words there .No space"):
        vocab_run(tiny_bert, tmp_path / "words.txt")
    assert list((cache_dir() / "single-token-words").iterdir()) == []
