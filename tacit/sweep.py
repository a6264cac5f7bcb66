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
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.options import RunOptions
from tacit.results.labels import model_label
from tacit.results.rundir import PARTIAL

PROBES = ("retrieve", "elicit", "prince", "nli", "pragmeval")


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
    unknown = [key for key in spec if key not in PROBES]
    if unknown or not spec:
        raise TacitError(f"{path}: expected probe tables among {', '.join(PROBES)}, "
                         f"got {', '.join(unknown) or 'none'}")  # fmt: skip
    cells = [
        Cell(probe, model, norm_set if probe in ("retrieve", "elicit") else None, options)
        for probe, table in spec.items()
        for options in _axes(table)
        for norm_set in (norms if probe in ("retrieve", "elicit") else [None])
        for model in models
    ]
    unique = {cell.name: cell for cell in cells}  # a cell named twice runs once
    return Sweep(path, list(unique.values()), run)


def cell_state(directory: Path) -> str:
    if (directory / "manifest.json").is_file():
        return "complete"
    return "interrupted" if (directory / PARTIAL).is_dir() else "to run"


def run_cell(cell: Cell, directory: Path, run: dict[str, Any]) -> None:
    """Run one cell into its directory, resuming its checkpoint if it was interrupted."""
    import tacit

    resume = (directory / PARTIAL / "plan.json").is_file()
    options = RunOptions(**run, checkpoint=directory / PARTIAL, resume=resume)
    probe = getattr(tacit, cell.probe)
    extra = {"norms": cell.norms} if cell.norms is not None else {}
    try:
        result = probe([cell.model], **extra, **cell.options, options=options)
    except TypeError as err:
        raise TacitError(f"[{cell.probe}]: {err}") from None
    result.save(directory, overwrite=True)


def estimated_prompts(cell: Cell, norms_cache: dict[str, Any]) -> int | None:
    """At most how many prompts the cell scores (before the vocabulary's eligibility rules):
    retrieval, each concept's properties up to max_props; elicitation, each concept with an
    answer to a relation, per prefix. None where the sweep cannot tell without the models."""
    if cell.probe not in ("retrieve", "elicit") or cell.options.get("ablation"):
        return None
    from tacit.norms import load_norms

    key = str(cell.norms)
    if key not in norms_cache:
        norms_cache[key] = load_norms(cell.norms).table
    table = norms_cache[key]
    if cell.probe == "retrieve":
        per_concept = table.drop_duplicates(["concept", "phrase"]).groupby("concept").size()
        return int(per_concept.clip(upper=int(cell.options.get("max_props", 10))).sum())
    relations = cell.options.get("relations", ["is", "is a", "has", "has a", "made of"])
    relations = relations if isinstance(relations, list) else [relations]
    pairs = table[table["relation"].isin(relations)].drop_duplicates(["concept", "relation"])
    return len(pairs) * (2 if cell.options.get("prefix") == "both" else 1)


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
        cache: dict[str, Any] = {}
        table["prompts_at_most"] = [estimated_prompts(cell, cache) for cell in sweep.cells]
        return table
    for cell, row in zip(sweep.cells, rows):
        if row["state"] != "complete":
            run_cell(cell, out / cell.name, sweep.run)
    return table


def leaderboard(folder: str | Path, *, n_props: int | None = None) -> pd.DataFrame:
    """One row per model, one column per cell's probe and options: retrieval's MRR at
    `n_props` (default the largest in the run), elicitation's mAP over the vocabulary (or the
    candidates) averaged over relations with the prefix, Prince's and the NLI suites' headline
    numbers are left to their own reports."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TacitError(f"{folder}: no such directory")
    entries = []
    for manifest_file in sorted(folder.glob("*/manifest.json")):
        cell = manifest_file.parent
        manifest = json.loads(manifest_file.read_text())
        summary = pd.read_csv(cell / "summary.csv")
        probe, model = manifest.get("probe"), model_label(manifest["models"][0]["name"])
        settings = cell.name.replace(f"{probe}-{model}", "", 1).strip("-")
        if probe == "retrieve":
            at = n_props or int(summary["n_props"].max())
            rows, column = summary[summary["n_props"] == at], "mrr"
            metric = f"retrieve MRR@{at}"
        elif probe == "elicit":
            prefixed = summary["prefix"].astype(str) == "True"
            rows, column = (summary[prefixed] if prefixed.any() else summary), "map_vocab"
            metric = "elicit mAP"
        else:
            continue
        label = metric + (f" [{settings}]" if settings else "")
        entries.append({"model": model, "cell": label, "value": float(rows[column].mean())})
    if not entries:
        raise TacitError(f"{folder}: no complete retrieve or elicit run in it")
    table = pd.DataFrame(entries).pivot_table(index="model", columns="cell", values="value")
    return table.reset_index()


def markdown(table: pd.DataFrame) -> str:
    """A pipe table (numbers to 4 decimals) for a README or a paper's notes."""
    header = [str(c) for c in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in table.itertuples(index=False):
        cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
