"""`probe plot` and tacit.plot: one figure of one or more runs of a probe, drawn by the probe
(Probe.figures), saved whole; runs that scored different things are drawn with a warning,
printed and in the figure."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tacit.core.errors import TacitError, TacitWarning
from tacit.core.files import write_atomic
from tacit.core.interface import option
from tacit.results.compare import read_summary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = (".png", ".svg", ".pdf")


def save_figure(figure: Figure, out: Path) -> Path:
    """Save whole or not at all (tacit.core.files), with the permissions the umask gives."""
    from tacit.probes.figures import figure_bytes

    data = figure_bytes(figure, out.suffix.lstrip(".").lower())
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(out, data)
    except OSError as err:
        raise TacitError(
            f"{option('--out')} {out}: cannot write the figure ({err.strerror})"
        ) from None


def plot(
    runs: Sequence[str | Path | pd.DataFrame],
    out: str | Path,
    *,
    kind: str = "auto",
    mixed: bool = False,
) -> Path:
    """Plot one or more runs of one probe (directories, or retrieval summaries as DataFrames)
    into one figure (`kind`: retrieval's figure, `auto` from what the runs contain; `steps`:
    the primary metric by training step of the checkpoint runs under sweep folders). Runs that
    are not like for like (tacit.results.compare) are refused, unless `mixed`: then they are
    drawn together, the difference said in the figure and warned about.

    Examples:
        >>> tacit.plot(["results/run1", "results/run2"], "fig.png")  # doctest: +SKIP
    """
    from tacit.core.manifest import Manifest, read_manifest
    from tacit.probes import registry
    from tacit.results.compare import differences, run_paths

    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise TacitError(
            f"{option('--out')} {out}: the extension must be one of {', '.join(FORMATS)}"
        )
    if not runs:
        raise TacitError("no run directory given")
    if kind == "steps":  # the metric by training step of the checkpoints under folders
        from tacit.results.steps import by_step, steps_figure

        tables = [by_step(run) for run in runs if not isinstance(run, pd.DataFrame)]
        return save_figure(steps_figure(pd.concat(tables, ignore_index=True)), out)
    runs = run_paths(runs)
    shown: list[tuple[str, pd.DataFrame, Manifest]] = []
    for index, run in enumerate(runs):
        if isinstance(run, pd.DataFrame):
            name = str(run["run"].iloc[0]) if "run" in run else f"run{index + 1}"
            summary = run.assign(run=name)
        else:
            name, summary = Path(run).name, read_summary(run)
        if not isinstance(run, pd.DataFrame) and (Path(run) / "manifest.json").is_file():
            manifest = read_manifest(run)
        else:  # a summary alone: the probe whose row keys it has
            fits = [
                p
                for p in map(registry.get, registry.names())
                if {*p.keys, p.primary.column} <= set(summary)
            ]
            if not fits:
                raise TacitError(f"{name}: not the summary of any probe")
            manifest = {"probe": fits[0].name}
        shown.append((name, summary, manifest))
    probes = {manifest.get("probe", "?") for _, _, manifest in shown}
    if len(probes) > 1:
        raise TacitError(
            f"these runs are of different probes ({', '.join(sorted(probes))}): "
            "one figure shows one probe"
        )
    probe = registry.get(probes.pop())
    notes = differences([r for r in runs if not isinstance(r, pd.DataFrame)])
    if notes and not mixed:
        raise TacitError(
            "not like for like: " + "; ".join(notes) + ": plot each kind apart "
            "(or --mixed to draw them together, the difference said in the figure)"
        )
    for note in notes:
        warnings.warn(note, TacitWarning, stacklevel=2)
    caption = "not like for like: " + "; ".join(notes) if notes else ""
    figures = probe.figures(shown, kind=kind, caption=caption)
    if not figures:
        raise TacitError(f"{probe.name} runs have no figure to plot")
    if len(figures) > 1:
        listed = "; ".join(title for title, _ in figures)
        raise TacitError(f"these runs draw different figures ({listed}): plot them apart")
    return save_figure(figures[0][1], out)
