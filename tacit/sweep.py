"""Sweeps: a grid of runs (models x probes x norm sets x options) into one folder, one run
directory per cell, and a leaderboard across the cells.

A sweep file (TOML):

    models = ["roberta-base", "gpt2"]          # every cell runs one model
    norms = ["cslb", "path/to/mcrae.csv"]      # optional: norm sets (installed names or paths)

    [run]                                      # optional: run options for every cell
    batch_size = 64
    seed = 0

    [retrieve]                                 # a probe, with its options
    max_props = 10
    candidates = ["vocab", "concepts"]         # a list is an axis of the grid

    [elicit]
    relations = [["has"], ["is", "is a"]]      # an option that takes a list: a list of lists

Cells already complete (their manifest.json written) are skipped, so a sweep that was stopped
goes on where it stopped when run again; an interrupted cell resumes from its checkpoint.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.labels import model_label
from tacit.core.options import RunOptions
from tacit.probes import registry
from tacit.results.rundir import PARTIAL


def takes_norms(probe: str) -> bool:
    """Does the probe read norms (then the sweep's `norms` are an axis of its cells)?"""
    return any(param.name == "norms" for param in registry.get(probe).params)


@dataclass(frozen=True)
class Cell:
    """One run of the grid: a probe, a model, a norm set (or none) and the probe's options."""

    probe: str
    model: str
    norms: str | None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """A stable, readable directory name: probe, model, norms, then the options."""
        parts = [self.probe, model_label(self.model)]
        if self.norms is not None:
            parts.append(Path(self.norms).stem)
        for key, value in sorted(self.options.items()):
            shown = "+".join(map(str, value)) if isinstance(value, list) else str(value)
            parts.append(f"{key}={Path(shown).stem if '/' in shown else shown}")
        return re.sub(r"[^\w.=+-]+", "_", "-".join(parts))


@dataclass(frozen=True)
class Sweep:
    path: Path
    cells: list[Cell]
    run: dict[str, Any]


def _axes(options: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every combination of an options table's values (a list is an axis)."""
    keys = sorted(options)
    values = [v if isinstance(v, list) else [v] for v in (options[k] for k in keys)]
    for combination in itertools.product(*values):
        yield dict(zip(keys, combination))


def read_sweep(path: str | Path) -> Sweep:
    """The cells of a sweep file, in file order; one-line errors name the file and the key."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        raise TacitError("sweep files need Python 3.11 or newer (tomllib)") from None
    path = Path(path)
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TacitError(f"{path}: no such sweep file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise TacitError(f"{path}: not a readable TOML file ({err})") from None
    models = spec.pop("models", None)
    if not isinstance(models, list) or not models:
        raise TacitError(f"{path}: `models` must be a list of model names or paths")
    norms = spec.pop("norms", [None])
    norms = norms if isinstance(norms, list) else [norms]
    run = spec.pop("run", {})
    try:
        RunOptions(**run)
    except TypeError as err:
        raise TacitError(f"{path}: [run]: {err}") from None
    probes = registry.names()
    unknown = [key for key in spec if key not in probes]
    if unknown or not spec:
        raise TacitError(f"{path}: expected probe tables among {', '.join(probes)}, "
                         f"got {', '.join(unknown) or 'none'}")  # fmt: skip
    cells = [
        Cell(probe, model, norm_set if takes_norms(probe) else None, options)
        for probe, table in spec.items()
        for options in _axes(table)
        for norm_set in (norms if takes_norms(probe) else [None])
        for model in models
    ]
    for cell in cells:  # every cell's options checked before any cell runs
        registry.get(cell.probe).validate(cell.options, context="sweep",
                                          where=f"{path}: [{cell.probe}] ")  # fmt: skip
    unique = {cell.name: cell for cell in cells}  # a cell named twice runs once
    return Sweep(path, list(unique.values()), run)


def cell_state(directory: Path) -> str:
    if (directory / "manifest.json").is_file():
        return "complete"
    return "interrupted" if (directory / PARTIAL).is_dir() else "to run"


def run_cell(cell: Cell, directory: Path, run: dict[str, Any]) -> None:
    """Run one cell into its directory, resuming its checkpoint if it was interrupted."""
    from tacit.api import run_probe

    resume = (directory / PARTIAL / "plan.json").is_file()
    options = RunOptions(**run, checkpoint=directory / PARTIAL, resume=resume)
    given = {"norms": cell.norms, **cell.options} if cell.norms is not None else cell.options
    result = run_probe(cell.probe, [cell.model], given, options, context="sweep")
    result.save(directory, overwrite=True)


def estimated_prompts(cell: Cell) -> int | None:
    """At most how many prompts the cell scores, as its probe estimates from its inputs alone
    (None where that needs the models)."""
    probe = registry.get(cell.probe)
    given = {"norms": cell.norms, **cell.options} if cell.norms is not None else cell.options
    return probe.estimate(probe.validate(given, context="sweep"))


def run_sweep(path: str | Path, out: str | Path, *, dry_run: bool = False) -> pd.DataFrame:
    """Run every cell not yet complete (see the module docstring); a table of the cells with
    their directory and state before this call."""
    sweep = read_sweep(path)
    out = Path(out)
    rows = [{"cell": cell.name, "probe": cell.probe, "model": cell.model,
             "norms": cell.norms or "", "state": cell_state(out / cell.name)}
            for cell in sweep.cells]  # fmt: skip
    table = pd.DataFrame(rows)
    if dry_run:
        table["prompts_at_most"] = [estimated_prompts(cell) for cell in sweep.cells]
        return table
    try:
        for cell, row in zip(sweep.cells, rows):
            if row["state"] != "complete":
                run_cell(cell, out / cell.name, sweep.run)
    except KeyboardInterrupt as stop:  # say what the sweep kept, in the interruption's line
        done = sum(cell_state(out / cell.name) == "complete" for cell in sweep.cells)
        stop.detail = (f"{done} of {len(sweep.cells)} cell(s) complete in {out}; the same "  # type: ignore[attr-defined]
                       "command goes on (complete cells are skipped, an interrupted one "
                       "resumes)")  # fmt: skip
        raise
    return table
