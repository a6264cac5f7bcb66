"""The primary metric against the training step: for a sweep over training checkpoints (hub
revisions or local checkpoint directories, tacit.sweep), a line per model.

Each value is the leaderboard's (tacit.results.leaderboard: the probe's primary metric at its
main condition); the step and the model a checkpoint belongs to come from the run's manifest
(its `sweep` record), so the table and the figure need nothing but the sweep's folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tacit.core.errors import TacitError

if TYPE_CHECKING:
    from matplotlib.figure import Figure


STEP_COLUMNS = ["model", "step", "cell", "value"]


def has_steps(folder: str | Path) -> bool:
    """Does the folder hold runs of training checkpoints (a sweep cell's record with a step)?"""
    from tacit.core.manifest import read_manifest

    for found in sorted(Path(folder).rglob("manifest.json")):
        try:
            if (read_manifest(found).get("sweep") or {}).get("step") is not None:
                return True
        except TacitError:  # a damaged run: the leaderboard leaves it out, saying so
            continue
    return False


def by_step(
    folder: str | Path, *, n_props: int | None = None, board: pd.DataFrame | None = None
) -> pd.DataFrame:
    """STEP_COLUMNS, a row per model, training step and cell of the sweep (its probe, metric,
    condition and settings), in step order; runs that are no checkpoint are left out. Each
    value is the leaderboard's for that run (tacit.results.leaderboard; `board`: the folder's
    leaderboard where the caller has it already)."""
    from tacit.core.manifest import read_manifest
    from tacit.results.leaderboard import leaderboard

    folder = Path(folder)
    if not folder.is_dir() or not has_steps(folder):
        raise TacitError(
            f"{folder}: no run of a training checkpoint in it (a sweep's "
            "`revisions` or [checkpoints])"
        )
    rows = []
    if board is None:
        board = leaderboard(folder, n_props=n_props)
    for entry in board.itertuples(index=False):
        run = folder / str(entry.run)  # the folder itself where it is the one run
        record = read_manifest(run if run.is_dir() else folder).get("sweep") or {}
        step = record.get("step")
        if step is None:
            continue
        condition = f", {entry.condition}" if entry.condition else ""
        settings = f" [{record['settings']}]" if record.get("settings") else ""
        rows.append(
            {
                "model": str(record.get("series")),
                "step": int(step),
                "cell": f"{entry.probe} {entry.metric}{condition}{settings}",
                "value": float(entry.value),
            }
        )
    table = pd.DataFrame(rows, columns=STEP_COLUMNS)
    return table.sort_values(["cell", "model", "step"], kind="stable").reset_index(drop=True)


def steps_figure(table: pd.DataFrame, caption: str = "") -> Figure:
    """A panel per leaderboard column, the metric against the step, a line per model; a log
    step axis where the steps span two orders of magnitude or more (Pythia's do)."""
    from matplotlib.figure import Figure

    cells = list(dict.fromkeys(table["cell"]))
    figure = Figure(
        figsize=(5.2 * min(len(cells), 3), 3.8 * -(-len(cells) // 3)), layout="constrained"
    )
    axes = figure.subplots(-(-len(cells) // 3), min(len(cells), 3), squeeze=False).ravel()
    positive = table.loc[table["step"] > 0, "step"]
    wide = len(positive) and positive.max() >= 100 * positive.min()
    for axis, cell in zip(axes, cells):
        rows = table[table["cell"] == cell]
        for model, line in rows.groupby("model", sort=False):
            axis.plot(line["step"], line["value"], marker="o", label=str(model))
        metric, _, settings = cell.partition(" [")
        axis.set_title(f"{metric}\n{settings.rstrip(']')}" if settings else metric, fontsize=9)
        axis.set_xlabel("training step")
        axis.set_ylabel(metric.split(" ", 1)[-1])
        if wide:
            axis.set_xscale("symlog", linthresh=max(1, int(positive.min())))
        axis.legend(fontsize=8)
    for axis in axes[len(cells) :]:
        axis.set_visible(False)
    if caption:
        figure.suptitle(caption, fontsize=8)
    return figure
