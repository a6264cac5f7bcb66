"""`probe plot` and tacit.plot: one figure of one or more runs of a probe, drawn by the probe
(Probe.figures), saved whole, into the run directory (or the folder holding the runs) under a
name per probe and figure kind, and never over a file unless asked; runs that scored different
things are drawn with a warning, printed and in the figure."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tacit.core.errors import TacitError, TacitWarning
from tacit.core.files import write_atomic
from tacit.core.option_names import option
from tacit.probes.report import report_of
from tacit.results.like_for_like import read_summary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = (".png", ".svg", ".pdf")


def save_figure(figure: Figure, out: Path, *, overwrite: bool = True) -> Path:
    """Save whole or not at all (tacit.core.files), with the permissions the umask gives; a
    file already there is refused in one line unless `overwrite`."""
    from tacit.probes.figures import figure_bytes

    if not overwrite and out.exists():
        raise TacitError(
            f"{out}: already exists: give {option('--overwrite')} to replace it, or "
            f"{option('--out')} another file"
        )
    data = figure_bytes(figure, out.suffix.lstrip(".").lower())
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(out, data)
    except OSError as err:
        raise TacitError(
            f"{option('--out')} {out}: cannot write the figure ({err.strerror})"
        ) from None


def figure_path(
    out: str | Path | None, runs: Sequence[str | Path | pd.DataFrame], name: str
) -> Path:
    """Where a figure goes: `out` (a file, or a folder to hold NAME), else the run directory,
    or for several runs the folder that holds them all."""
    if out is not None and Path(out).is_dir():
        return Path(out) / name
    if out is not None:
        if Path(out).suffix.lower() not in FORMATS:
            raise TacitError(
                f"{option('--out')} {out}: not a folder, and the extension must be one of "
                f"{', '.join(FORMATS)}"
            )
        return Path(out)
    folders = [Path(run) for run in runs if not isinstance(run, pd.DataFrame)]
    if len(folders) < len(runs):
        raise TacitError(f"a summary in memory has no run directory: give {option('--out')}")
    if len(folders) == 1:
        return folders[0] / name
    return Path(os.path.commonpath([folder.absolute() for folder in folders])) / name


def plot(
    runs: Sequence[str | Path | pd.DataFrame],
    out: str | Path | None = None,
    *,
    kind: str = "auto",
    mixed: bool = False,
    overwrite: bool = False,
) -> Path:
    """Plot one or more runs of one probe (directories, or retrieval summaries as DataFrames)
    into one figure (`kind`: retrieval's figure, `auto` from what the runs contain; `steps`:
    the primary metric by training step of the checkpoint runs under sweep folders), and
    return the file written. Runs that are not like for like (tacit.results.like_for_like) are
    refused, unless `mixed`: then they are drawn together, the difference said in the figure
    and warned about.

    The figure goes to `out` (a .png, .svg or .pdf file, or a folder), by default into the run
    directory (several runs: the folder that holds them), named PROBE-KIND.png
    (`retrieve-models.png`, `elicit-figure.png`; `steps.png` in the sweep folder). A file
    already there is refused unless `overwrite`.

    Examples:
        >>> tacit.plot(["results/run1", "results/run2"], "fig.png")  # doctest: +SKIP
    """
    from tacit.core.manifest import Manifest, read_manifest
    from tacit.probes import registry
    from tacit.results.like_for_like import differences, first_looks, run_paths

    if out is not None and not Path(out).is_dir():
        figure_path(out, runs, "")  # a wrong extension is said before anything is read
    if not runs:
        raise TacitError("no run directory given")
    if kind == "steps":  # the metric by training step of the checkpoints under folders
        from tacit.results.steps import by_step, steps_figure

        tables = [by_step(run) for run in runs if not isinstance(run, pd.DataFrame)]
        figure = steps_figure(pd.concat(tables, ignore_index=True))
        return save_figure(figure, figure_path(out, runs, "steps.png"), overwrite=overwrite)
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
    caption = "; ".join(
        filter(
            None, ["not like for like: " + "; ".join(notes) if notes else "", first_looks(shown)]
        )
    )
    figures = report_of(probe).figures(shown, kind=kind, caption=caption)
    if not figures:
        raise TacitError(f"{probe.name} runs have no figure to plot")
    if len(figures) > 1:
        listed = "; ".join(title for title, _ in figures)
        raise TacitError(f"these runs draw different figures ({listed}): plot them apart")
    target = figure_path(out, runs, f"{probe.name}-{report_of(probe).figure_kind(shown, kind)}.png")
    return save_figure(figures[0][1], target, overwrite=overwrite)
