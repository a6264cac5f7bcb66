"""The manifest: its shape (Manifest, a TypedDict: the contract between the layers that write
a run and those that read it), reading one back, and what every manifest records about the
software, the time and the command line of a run."""

from __future__ import annotations

import json
import platform
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypedDict, cast

from tacit.core.errors import TacitError, first_line
from tacit.core.files import RECORD_LIMIT, read_input
from tacit.core.secrets import redact

# tacit's name on the package index (`pip install tacit-probe`; `tacit` there is another
# project): where its installed version is read
DISTRIBUTION = "tacit-probe"


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def software() -> dict[str, str | None]:
    """Versions of tacit and of the libraries whose behaviour shapes the scores."""
    return {
        "tacit": _version(DISTRIBUTION),
        "python": platform.python_version(),
        **{
            name: _version(name)
            for name in ("torch", "transformers", "tokenizers", "numpy", "pandas")
        },
    }


def now() -> str:
    """An ISO 8601 timestamp with the time zone."""
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def command_line() -> str:
    """The command line as typed (as far as Python can tell), less any secret in it."""
    return redact(" ".join(sys.argv))


# The manifest's shape: the contract between the layers that write a run and those that read
# it (runs, tables, plots, reports, leaderboards). JSON as written; every key optional, as
# manifests of older runs and of other probes lack some. Only the keys every run may have are
# typed here; what a model family records of its models and what a probe records of its run
# are declared by that family (Family.record_keys) and that probe (Probe.manifest_keys,
# Probe.model_keys), as TypedDicts that extend these.
# A model's entry in `models`: the keys the engine writes of every model (a model a run resumed
# without loading is named and nothing else), whatever runs it. (The functional form: `class`
# is a Python keyword.)
ModelRecord = TypedDict(
    "ModelRecord",
    {
        # as given to --model: a name or path, with its loading options if any, less any
        # secret (tacit.core.secrets); its `label=` where it has one
        "name": str,
        # the whole text as given, redacted, where `name` is not it (a label, a secret)
        "text": str,
        "source": str,  # the name or path alone, where the options make `name` longer
        "kind": str,  # masked, causal, seq2seq, classifier, server
        "class": str,  # the Python class that scored it
        "revision": "str | None",
        "device": "str | None",
        "batch_size_used": "int | None",
        # --control random-weights: the model it controls (`of`), its seed, how it was drawn
        "control": "dict[str, Any]",
        # --cache: the directory, the model's fingerprint, entries found and scored
        "cache": "dict[str, Any]",
        # seconds: load_seconds, scoring_seconds (this run's chunks), the sentences they held,
        # and estimate_seconds, what the first chunk's pace said the scoring would take (from
        # estimated_from_sentences in estimated_from_seconds): compare the two; and
        # tie_seconds, what the tie rule's settling took (tacit.ranking.ties)
        "timing": "dict[str, Any]",
    },
    total=False,
)


class VocabularyRecord(TypedDict, total=False):
    size: int
    sha256: str
    warnings: list[str]


class NormsRecord(TypedDict, total=False):
    name: str | None  # the installed name it was read by; None for a file given by path
    path: str
    format: str
    columns: dict[str, str] | None
    feature_types: bool
    sha256: str
    source: str  # a file read from a Hub dataset: its hf:// URL (tacit.hub.dataset_files)
    commit: str | None  # ... and the dataset's commit it was read at
    rows: int
    concepts: int
    merged_duplicates: list[dict[str, Any]]


class CandidatesRecord(TypedDict, total=False):
    source: str
    size: int
    sha256: str


class SweepRecord(TypedDict, total=False):
    """A sweep cell's record (tacit.sweep): where it comes from and its values in full."""

    file: str
    index: int
    cell: str  # the run directory's name
    label: str  # the model as the leaderboard shows it (a checkpoint's: `pythia-70m@step1000`)
    settings: str  # the name's part after the probe and model (a leaderboard column)
    model: str
    norms: str | None
    options: dict[str, Any]
    series: str | None  # for a training checkpoint: the model it is a checkpoint of
    step: int | None  # and its training step
    revision: str | None


class Manifest(TypedDict, total=False):
    """manifest.json (see docs/run-directory.md): the keys of every run, from the engine
    (tacit.engine.runner.run_manifest) and the run options, and those of the data several
    probes read (norms, vocabulary, candidates, templates). A probe's own keys are its
    `manifest_keys`, a TypedDict that extends this one."""

    probe: str
    command: str
    software: dict[str, str | None]
    models: list[ModelRecord]
    vocab_models: list[str]
    device: str | None
    dtype: str
    batch_size: int | str  # or "auto"
    compile: bool
    seed: int
    threads: int | None  # the CPU threads torch used (None: torch not loaded)
    resumed: list[dict[str, Any]]  # each resume: its started and command
    model_args: dict[str, Any]  # --model-args: loading options of every model
    vocab_words: str  # --vocab-words, where not `all`
    control: str  # --control: `random-weights` (each model's control is among `models`)
    limit: dict[str, Any]  # --limit: {"first": N, "of": "concepts"}
    training: dict[str, Any]  # a run during training (ProbeCallback): global_step, epoch
    processes: int
    launch_warning: str
    started: str
    finished: str
    options: dict[str, Any]  # the probe's options, as it records them
    counts: dict[str, Any]  # what the probe counted (prompts, items, what was dropped)
    norms: NormsRecord
    vocabulary: VocabularyRecord
    candidates: dict[str, CandidatesRecord]
    templates: dict[str, Any]
    sweep: SweepRecord


def declared_keys(*declarations: type) -> frozenset[str]:
    """Every key the TypedDicts `declarations` (and those they extend) may hold."""
    return frozenset(key for d in declarations for key in d.__annotations__)


def read_manifest(path: str | Path) -> Manifest:
    """A run directory's manifest.json (or the file itself); an unreadable one is a one-line
    error naming it."""
    path = Path(path)
    if path.is_dir():
        path = path / "manifest.json"
    if not path.exists() and not path.is_symlink():
        raise TacitError(f"{path.parent}: not a finished run directory (no manifest.json)")
    data = read_input(path, limit=RECORD_LIMIT)  # a FIFO, /dev/zero: refused at once
    try:
        loaded = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise TacitError(f"{path}: not readable JSON ({first_line(err)})") from None
    if not isinstance(loaded, dict):
        raise TacitError(f"{path}: not a run's manifest (a JSON object)")
    return cast(Manifest, loaded)


def with_keys(manifest: Manifest, added: dict[str, Any]) -> Manifest:
    """The manifest with a probe's own keys added (a new dict; the original is left as is)."""
    return cast(Manifest, {**manifest, **added})
