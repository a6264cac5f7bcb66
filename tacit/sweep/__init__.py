"""Sweeps: a grid of runs (models x probes x norm sets x options x training checkpoints) into
one folder, one run directory per cell, and a leaderboard across the cells.

A sweep file (TOML) names the models (and their revisions or checkpoint globs), norm sets, run
options, and each probe's options, any of them an axis (`{ axis = [...] }`, or a list where
one value goes): docs/scaling.md ("Sweeps") has the format. Each cell has a stable index, so
cells run as separate jobs (`--cell I`, a Slurm array) or through a launcher
(tacit.sweep.launch); the folder is their only shared state (tacit.sweep.cells). Complete
cells are skipped and an interrupted cell resumes from its checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tacit.core.errors import TacitError
from tacit.sweep.cells import (
    Say,
    cells_table,
    default_folder,
    estimated_prompts,
    failure,
    run_cells,
    select,
)
from tacit.sweep.launch import Launch, launch
from tacit.sweep.spec import Cell, ModelCheckpoint, Sweep, read_sweep

__all__ = [
    "Cell",
    "ModelCheckpoint",
    "Launch",
    "Sweep",
    "default_folder",
    "failures",
    "read_sweep",
    "run_sweep",
    "sweep_cells",
]


def _say(line: str) -> None:
    print(line, file=sys.stdout, flush=True)


def sweep_cells(
    sweep: Sweep, out: Path, cells: Sequence[str] | str | None = None, *, estimate: bool = False
) -> pd.DataFrame:
    """The cells (those `cells` names: `3`, `0-9`, `0,2`), their index, name and state;
    with `estimate`, at most how many prompts each scores (`prompts_at_most`)."""
    indices = select(sweep, cells)
    table = cells_table(sweep, out, indices)
    if estimate:
        table["prompts_at_most"] = [_estimate(sweep, i) for i in indices]
    return table


def _estimate(sweep: Sweep, index: int) -> int | None:
    try:
        return estimated_prompts(sweep.cells[index])
    except TacitError as err:
        raise TacitError(f"{sweep.path}: cell {index} {sweep.cells[index].name}: {err}") from None


def failures(sweep: Sweep, out: Path, table: pd.DataFrame) -> list[str]:
    """`cell I NAME: error (log: PATH)` for each failed cell of the table."""
    lines = []
    for index in table.loc[table["state"] == "failed", "index"]:
        cell = sweep.cells[int(index)]
        record = failure(out, cell) or {}
        log = f" (log: {record['log']})" if record.get("log") else ""
        lines.append(f"cell {index} {cell.name}: {record.get('error', 'failed')}{log}")
    return lines


def run_sweep(
    path: str | Path | Sweep,
    out: str | Path | None = None,
    *,
    cells: Sequence[str] | str | None = None,
    dry_run: bool = False,
    launch_with: Launch | None = None,
    say: Say = _say,
) -> pd.DataFrame:
    """Run the cells of a sweep (a file, or what read_sweep read) that `cells` names (default
    every one) and are not complete, into `out` (default results/<the file's stem>): one
    after another in this process, or as jobs (`launch_with`). A line per cell as it starts
    and ends; a cell that fails is recorded and the others go on. Returns the cells' table
    (index, cell, state, ...) after the run; with `dry_run`, before, with each cell's
    estimated prompts, and nothing runs.

    Examples:
        >>> table = tacit.run_sweep("grid.toml", "results/grid")  # doctest: +SKIP
        >>> table[table["state"] == "failed"]  # doctest: +SKIP
    """
    sweep = path if isinstance(path, Sweep) else read_sweep(path)
    out = Path(out) if out is not None else default_folder(sweep.path)
    if dry_run:
        return sweep_cells(sweep, out, cells, estimate=True)
    before = sweep_cells(sweep, out, cells)
    pending = [
        int(i)
        for i, state in zip(before["index"], before["state"])
        if state != "complete" and not state.startswith("running")
    ]
    if launch_with is not None:
        launch(sweep, out, pending, launch_with, say)
    else:
        try:
            run_cells(sweep, out, pending, say)
        except KeyboardInterrupt as stop:  # say what the sweep kept, in the interruption's line
            states = sweep_cells(sweep, out, cells)["state"]
            stop.detail = (  # type: ignore[attr-defined]
                f"{int((states == 'complete').sum())} of {len(states)} cell(s) "
                f"complete in {out}; the same command goes on (complete cells are "
                "skipped, an interrupted one resumes)"
            )
            raise
    return sweep_cells(sweep, out, cells)
