"""A sweep file read into its cells: the grid's axes, the training checkpoints, and each cell's
short, stable name (the file's format: tacit.sweep)."""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from tacit.core.errors import TacitError
from tacit.core.files import RECORD_LIMIT, read_input, regular_file
from tacit.core.labels import model_label
from tacit.core.options import RunOptions
from tacit.probes import registry
from tacit.probes.base import Probe

AXIS = "axis"  # `key = { axis = [...] }`: the one way to write an axis for any option
SHOWN_AT_MOST = 24  # a value longer than this (as text) is named by its hash in a cell's name
SET_BY_THE_SWEEP = ("checkpoint", "resume")  # run options each cell gets from its directory
STEP_IN_NAME = re.compile(r"(?:step|checkpoint|ckpt|iter)[-_]?(\d+)", re.IGNORECASE)


def takes_norms(probe: str) -> bool:
    """Does the probe read norms (then the sweep's `norms` are an axis of its cells)?"""
    return any(param.name == "norms" for param in registry.get(probe).params)


@dataclass(frozen=True)
class ModelCheckpoint:
    """A model at one point of its training: a revision of a hub model (a checkpoint branch,
    `step1000`) or a local checkpoint directory. `series` is the model it is a checkpoint of
    (one line in the by-step figure)."""

    series: str
    step: int
    revision: str | None = None

    def label(self, model: str) -> str:
        """`pythia-70m@step1000`, `tiny@checkpoint-500`: the model part of a cell's name."""
        return f"{self.series}@{self.revision or Path(model).name}"


@dataclass(frozen=True)
class Cell:
    """One run of the grid: a probe, a model (or a checkpoint of one), a norm set (or none)
    and the probe's options."""

    probe: str
    model: str
    norms: str | None
    options: dict[str, Any] = field(default_factory=dict)
    checkpoint: ModelCheckpoint | None = None

    @property
    def settings(self) -> str:
        """What sets the cell apart from the probe's other cells of the same model: the norms,
        then each option (`key=value`; a long value by its hash, the full value in the
        manifest's `sweep` record)."""
        parts = [Path(self.norms).stem] if self.norms is not None else []
        parts += [f"{key}={shown(value)}" for key, value in sorted(self.options.items())]
        return "-".join(safe(part) for part in parts)

    @property
    def label(self) -> str:
        """The model as the cell's name and the leaderboard show it (a checkpoint's with its
        revision or directory: `pythia-70m@step1000`)."""
        return self.checkpoint.label(self.model) if self.checkpoint else model_label(self.model)

    @property
    def name(self) -> str:
        """The cell's directory name: probe, model, then the settings; short and stable."""
        return "-".join(filter(None, [self.probe, safe(self.label), self.settings]))

    def given(self) -> dict[str, Any]:
        """The probe's options as the API takes them (the norms among them)."""
        return {"norms": self.norms, **self.options} if self.norms is not None else self.options

    def record(self, index: int, file: Path) -> dict[str, Any]:
        """The manifest's `sweep` record: where the cell comes from and every value in full."""
        checkpoint = self.checkpoint
        return {
            "file": str(file),
            "index": index,
            "cell": self.name,
            "label": self.label,
            "settings": self.settings,
            "model": self.model,
            "norms": self.norms,
            "options": self.options,
            "series": checkpoint.series if checkpoint else None,
            "step": checkpoint.step if checkpoint else None,
            "revision": checkpoint.revision if checkpoint else None,
        }


def safe(text: str) -> str:
    """Text fit for a directory name (anything else becomes `_`)."""
    return re.sub(r"[^\w.=+@-]+", "_", text)


def shown(value: Any) -> str:
    """An option's value in a cell's name: a list joined with `+`, a path by its stem, and a
    value longer than SHOWN_AT_MOST characters by the first 8 hex digits of its sha256."""
    text = "+".join(map(str, value)) if isinstance(value, list) else str(value)
    if "/" in text and not isinstance(value, list | dict):
        text = Path(text).stem
    if len(text) > SHOWN_AT_MOST:
        canonical = json.dumps(value, sort_keys=True, default=str).encode("utf-8")
        return hashlib.sha256(canonical).hexdigest()[:8]
    return text


@dataclass(frozen=True)
class Sweep:
    path: Path
    cells: list[Cell]
    run: dict[str, Any]


def option_values(probe: Probe, key: str, value: Any, where: str) -> list[Any]:
    """The values an option takes across the grid: an axis `{ axis = [...] }`; a list for an
    option that takes one value (short for an axis); otherwise the one value, a list
    included for an option that takes a list (`concepts = ["bear", "cat"]`)."""
    param = next((p for p in probe.params if p.name == key), None)
    if param is None:  # one line naming the options there are
        probe.validate({key: value}, context="sweep", where=where)
    assert param is not None
    if isinstance(value, dict) and AXIS in value:
        axis = value[AXIS]
        if len(value) != 1 or not isinstance(axis, list) or not axis:
            raise TacitError(
                f"{where}{key}: write an axis as `{key} = {{ axis = [value, ...] }}` "
                "with at least one value"
            )
        return axis
    if not isinstance(value, list):
        return [value]
    if not value:
        raise TacitError(f"{where}{key} = []: give a value, or an axis of at least one")
    if param.kind != "list":
        return value
    if any(isinstance(item, list) for item in value):
        raise TacitError(
            f"{where}{key} takes a list: {value!r} is a list of lists; for an axis of lists "
            f"write `{key} = {{ axis = [[...], [...]] }}`"
        )
    return [value]


def _axes(probe: Probe, options: Mapping[str, Any], where: str) -> Iterator[dict[str, Any]]:
    """Every combination of an options table's values."""
    keys = sorted(options)
    values = [option_values(probe, key, options[key], where) for key in keys]
    for combination in itertools.product(*values):
        yield dict(zip(keys, combination))


def _strings(value: Any, what: str, path: Path, *, one: bool = False) -> list[str]:
    """A list of names or paths (`one`: or a single one)."""
    if one and isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise TacitError(f"{path}: {what} must be a list of names or paths")
    return list(value)


def step_of(name: str) -> int | None:
    """The training step a checkpoint's name says: the number after step/checkpoint/ckpt/iter
    (`step1000`, `checkpoint-500`), else the name's last number."""
    match = STEP_IN_NAME.search(name) or re.search(r"(\d+)(?!.*\d)", name)
    return int(match.group(1)) if match else None


def directory_step(directory: str) -> int | None:
    """A local checkpoint's step: its trainer_state.json's global_step (Hugging Face's
    Trainer), else what its name says."""
    try:
        state = json.loads(read_input(Path(directory) / "trainer_state.json", limit=RECORD_LIMIT))
        if isinstance(state.get("global_step"), int):
            return int(state["global_step"])
    except (OSError, ValueError, AttributeError, TacitError):
        pass
    return step_of(Path(directory).name)


def _checkpoints(spec: dict[str, Any], models: list[str], path: Path) -> list[tuple[str, Any]]:
    """(model, checkpoint or None) for every model of the grid: each model at each of
    `revisions`, then each `[checkpoints]` series' directories, in step order."""
    revisions = spec.pop("revisions", None)
    entries: list[tuple[str, ModelCheckpoint | None]] = []
    if revisions is None:
        entries += [(model, None) for model in models]
    else:
        for model in models:
            for revision in _strings(revisions, "`revisions`", path):
                step = step_of(revision)
                if step is None:
                    raise TacitError(
                        f"{path}: revisions: {revision!r} names no training step (e.g. step1000)"
                    )
                entries.append((model, ModelCheckpoint(model_label(model), step, revision)))
    table = spec.pop("checkpoints", {})
    if not isinstance(table, dict):
        raise TacitError(f"{path}: [checkpoints] must be a table: model name = [directories]")
    for series, given in table.items():
        directories: list[str] = []
        for item in _strings(given, f"[checkpoints] {series}", path, one=True):
            matched = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
            if not matched:
                raise TacitError(f"{path}: [checkpoints] {series}: {item!r} matches nothing")
            directories += matched
        steps = [(directory_step(d), d) for d in directories]
        for step, directory in steps:
            if step is None:
                raise TacitError(
                    f"{path}: [checkpoints] {series}: cannot tell the training step of "
                    f"{directory} (name it with its step, checkpoint-500, or keep its "
                    "trainer_state.json)"
                )
        for step, directory in sorted(steps, key=lambda s: (s[0], s[1])):
            entries.append((directory, ModelCheckpoint(series, step)))  # type: ignore[arg-type]
    return entries


def _run_options(run: Any, path: Path, revisions: bool) -> dict[str, Any]:
    if not isinstance(run, dict):
        raise TacitError(f"{path}: [run] must be a table of run options")
    fixed = [key for key in SET_BY_THE_SWEEP if key in run]
    if revisions and "revision" in run:
        fixed.append("revision (the `revisions` axis sets it)")
    if fixed:
        raise TacitError(f"{path}: [run]: {', '.join(fixed)}: set by the sweep for each cell")
    RunOptions.validate(run, context="sweep", where=f"{path}: [run] ", owner="the run options")
    return run


def toml_reader() -> ModuleType:
    """The TOML reader: the standard library's tomllib (Python 3.11 on), or on 3.10 tomli, the
    same module before it joined the standard library (a dependency of tacit there)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise TacitError(
                "sweep files need a TOML reader: on Python 3.10, `pip install tomli`"
            ) from None
    return tomllib


def read_sweep(path: str | Path) -> Sweep:
    """The cells of a sweep file, in a stable order (probes, options, norms, models, each in
    file order); every cell's options are checked before any cell runs, and one-line errors
    name the file and the key."""
    tomllib = toml_reader()
    path = Path(path)
    try:
        regular_file(path, missing_ok=True)
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TacitError(f"{path}: no such sweep file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise TacitError(f"{path}: not a readable TOML file ({err})") from None
    models = spec.pop("models", None)
    if models is None and not spec.get("checkpoints"):
        raise TacitError(f"{path}: `models` must be a list of model names or paths")
    models = _strings(models, "`models`", path) if models is not None else []
    run = _run_options(spec.pop("run", {}), path, "revisions" in spec)
    entries = _checkpoints(spec, models, path)
    norms = spec.pop("norms", [None])
    norms = norms if isinstance(norms, list) else [norms]
    probes = registry.names()
    unknown = [key for key in spec if key not in probes]
    if unknown or not spec:
        raise TacitError(
            f"{path}: expected probe tables among {', '.join(probes)}, "
            f"got {', '.join(unknown) or 'none'}"
        )
    cells = [
        Cell(probe, model, norm_set if takes_norms(probe) else None, options, checkpoint)
        for probe, table in spec.items()
        for options in _axes(registry.get(probe), table, f"{path}: [{probe}] ")
        for norm_set in (norms if takes_norms(probe) else [None])
        for model, checkpoint in entries
    ]
    for cell in cells:  # every cell's options checked before any cell runs
        registry.get(cell.probe).validate(
            cell.options, context="sweep", where=f"{path}: [{cell.probe}] "
        )
    unique: dict[str, Cell] = {}
    for cell in cells:  # a cell given twice runs once; two cells must not share a directory
        if unique.setdefault(cell.name, cell) != cell:
            raise TacitError(
                f"{path}: two different cells would share the directory {cell.name} "
                "(e.g. two norms files or option files of the same name): rename "
                "one"
            )
    return Sweep(path, list(unique.values()), run)
