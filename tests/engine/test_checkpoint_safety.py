"""A run directory's checkpoint is data, never code (issue 42): a pickle planted where a chunk
was runs nothing on `--resume`; a damaged or foreign chunk is scored again, a damaged or foreign
model record refused in one line (it used to give a manifest whose model fields were all null);
an old pickled checkpoint is refused in one line naming `--overwrite`."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitWarning

runner = CliRunner()


class Planted:
    """A pickle whose loading makes a directory: the proof that loading it ran code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def retrieve(models: list[str], norms: Path, out: Path, *extra: str) -> list[str]:
    model_args = [a for m in models for a in ("-m", m)]
    return ["retrieve", *model_args, "--norms", str(norms), "--max-props", "3", "-q"] + [
        "--out",
        str(out),
        *extra,
    ]


def files_of(out: Path) -> dict[str, bytes]:
    """The run's tables (the manifest differs in times and `resumed`)."""
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.csv")) + [out / "vocab.txt"]}


@pytest.fixture
def kept(tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch):
    """(an uninterrupted run's tables, a run stopped at its final save: every chunk and model
    record kept in .partial, 3 chunks per model)."""
    import tacit.engine.runner
    import tacit.results.result

    monkeypatch.setattr(tacit.engine.runner, "CHUNK_TEXTS", 5)
    models = [tiny_bert, tiny_roberta]
    whole = tmp_path / "whole"
    assert runner.invoke(app, retrieve(models, toy_norms_path, whole)).exit_code == 0
    out = tmp_path / "run"

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(tacit.results.result.ProbeResult, "save", stopped)
        assert runner.invoke(app, retrieve(models, toy_norms_path, out)).exit_code == 130
    return files_of(whole), out, retrieve(models, toy_norms_path, out, "--resume")


def kept_files(out: Path, stem: str) -> list[Path]:
    """The checkpoint's files named `stem` (whatever their format's suffix)."""
    found = sorted((out / ".partial").glob(f"{stem}.*"))
    assert found, sorted(p.name for p in (out / ".partial").iterdir())
    return found


@pytest.mark.slow
def test_a_pickle_planted_where_the_chunks_were_runs_nothing(kept, tmp_path):
    # before: every chunk was pickle.load-ed: the planted object ran its code on --resume
    whole, out, resume = kept
    marker = tmp_path / "ran"
    for path in (out / ".partial").iterdir():
        if path.name != "plan.json":
            path.write_bytes(pickle.dumps(Planted(marker)))
    with pytest.warns(TacitWarning, match="a pickle, not a chunk: never loaded") as said:
        result = runner.invoke(app, resume)
    assert not marker.exists()
    assert result.exit_code == 0, result.output
    assert files_of(out) == whole  # every chunk scored again
    assert len(said) == 6  # one warning per chunk, each scored again


def test_an_old_pickled_checkpoint_is_refused_naming_overwrite(kept, tmp_path):
    # before: the .pkl chunks of earlier versions were loaded (running whatever they held)
    _, out, resume = kept
    marker = tmp_path / "ran"
    for path in (out / ".partial").iterdir():
        if path.name != "plan.json":
            path.unlink()
    (out / ".partial" / "0-0.pkl").write_bytes(pickle.dumps(Planted(marker)))
    result = runner.invoke(app, resume)
    assert not marker.exists()
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert "pickle" in line and "--overwrite" in line and str(out) in line
    assert "the same command with --resume" not in line


DAMAGES = {
    "cut in half": lambda path, other: path.write_bytes(
        path.read_bytes()[: path.stat().st_size // 2]
    ),
    "garbage": lambda path, other: path.write_bytes(os.urandom(500)),
    "another file of the run in its place": lambda path, other: shutil.copyfile(other, path),
}


def damaged(out: Path, stem: str, other: str, damage: str) -> Path:
    """The checkpoint's file `stem`, damaged (`other`: the file put in its place)."""
    (path,) = kept_files(out, stem)
    (replacement,) = kept_files(out, other)
    DAMAGES[damage](path, replacement)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_or_foreign_model_record_is_refused_in_one_line(kept, damage):
    # before: `0-model.pkl` cut in half: exit 0, the manifest's model record all null; another
    # model's record: taken as this model's
    _, out, resume = kept
    record = damaged(out, "0-model", "1-model", damage)
    result = runner.invoke(app, resume)
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: --resume: ") and record.name in line, line
    assert "--overwrite" in line and "the same command with --resume" not in line
    assert not (out / "manifest.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_or_foreign_chunk_is_scored_again(kept, damage):
    # before: another chunk's pickle in its place was taken: rows of other prompts
    whole, out, resume = kept
    chunk = damaged(out, "1-0", "1-2", damage)
    with pytest.warns(TacitWarning) as said:
        result = runner.invoke(app, resume)
    assert result.exit_code == 0, result.output
    assert files_of(out) == whole
    (line,) = [str(w.message) for w in said]
    assert line.startswith(f"{chunk}: ") and line.endswith("; scored again"), line
    manifest = json.loads((out / "manifest.json").read_text())
    assert all(m["class"] and m["device"] for m in manifest["models"])


@pytest.mark.slow
def test_a_chunk_of_another_run_is_scored_again(
    kept, tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    # the same chunk name in a run of other options (its plan's key differs)
    import tacit.results.result

    whole, out, resume = kept
    other = tmp_path / "other"
    args = retrieve([tiny_bert], toy_norms_path, other, "--seed", "1", "--concepts", "bear,cat")

    def stopped(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(tacit.results.result.ProbeResult, "save", stopped)
        assert runner.invoke(app, args).exit_code == 130
    (chunk,) = kept_files(out, "0-0")
    (foreign,) = kept_files(other, "0-0")
    shutil.copyfile(foreign, chunk)
    with pytest.warns(TacitWarning, match="not this run's"):
        result = runner.invoke(app, resume)
    assert result.exit_code == 0, result.output
    assert files_of(out) == whole
