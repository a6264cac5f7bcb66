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
from tacit.core.labels import model_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tacit.core.manifest import Manifest

STEP_COLUMNS = ["model", "step", "cell", "value"]


def cell_labels(run: Path, manifest: Manifest, probe: str, model: str) -> tuple[str, str]:
    """(row label, settings) of a run's model in the leaderboard: a sweep cell's as the cell
    records them (`pythia-70m@step1000`; its norms and options), else the model's label and
    the run directory's name after the probe and the model."""
    record = manifest.get("sweep") or {}
    if record.get("label") is not None:
        return str(record["label"]), str(record.get("settings", ""))
    settings = run.name.replace(f"{probe}-{model_label(model)}", "", 1).strip("-")
    return model_label(model), settings


def _checkpoints(folder: Path) -> dict[str, tuple[str, int]]:
    """Leaderboard row label -> (model, step) of every run of a training checkpoint."""
    from tacit.core.manifest import read_manifest

    found: dict[str, tuple[str, int]] = {}
    for manifest_file in sorted(folder.rglob("manifest.json")):
        record = read_manifest(manifest_file).get("sweep") or {}
        step, label = record.get("step"), record.get("label")
        if step is not None and label is not None:
            found[str(label)] = (str(record.get("series")), int(step))
    return found


def has_steps(folder: str | Path) -> bool:
    """Does the folder hold runs of training checkpoints?"""
    return bool(_checkpoints(Path(folder)))


def by_step(folder: str | Path, *, n_props: int | None = None) -> pd.DataFrame:
    """STEP_COLUMNS, a row per model, training step and leaderboard column (probe, metric and
    cell settings), in step order; runs that are no checkpoint are left out."""
    from tacit.results.leaderboard import leaderboard

    folder = Path(folder)
    checkpoints = _checkpoints(folder) if folder.is_dir() else {}
    if not checkpoints:
        raise TacitError(f"{folder}: no run of a training checkpoint in it (a sweep's "
                         "`revisions` or [checkpoints])")  # fmt: skip
    board = leaderboard(folder, n_props=n_props)
    long = board.melt(id_vars="model", var_name="cell", value_name="value").dropna()
    long = long[long["model"].isin(list(checkpoints))]
    series = long["model"].map(lambda label: checkpoints[label][0])
    steps = long["model"].map(lambda label: checkpoints[label][1])
    table = long.assign(model=series, step=steps)[STEP_COLUMNS]
    return table.sort_values(["cell", "model", "step"], kind="stable").reset_index(drop=True)


def steps_figure(table: pd.DataFrame, caption: str = "") -> Figure:
    """A panel per leaderboard column, the metric against the step, a line per model; a log
    step axis where the steps span two orders of magnitude or more (Pythia's do)."""
    from matplotlib.figure import Figure

    cells = list(dict.fromkeys(table["cell"]))
    figure = Figure(figsize=(5.2 * min(len(cells), 3), 3.8 * -(-len(cells) // 3)),
                    layout="constrained")  # fmt: skip
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
