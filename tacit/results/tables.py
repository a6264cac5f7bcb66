"""`probe table`: one table across runs of one probe, laid out by the probe (Probe.table:
elicitation's Table 1, retrieval's MRR at chosen numbers of properties)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.labels import short_labels
from tacit.results.plots import read_summary


def labelled(frames: list[pd.DataFrame], keys: Sequence[str]) -> pd.DataFrame:
    """The runs' rows with short model labels; where two runs hold the same row key (a run and
    its prefix ablation, the same model twice), the model's label carries the run's name."""
    table = pd.concat(frames, ignore_index=True)
    labels = short_labels(table["model"])
    table["model"] = table["model"].map(labels)
    keys = list(keys)
    clash = table.duplicated(keys, keep=False)
    table.loc[clash, "model"] = table.loc[clash, "model"] + " (" + table.loc[clash, "run"] + ")"
    if table.duplicated(keys).any():
        raise TacitError("two runs with the same directory name hold the same rows: rename one")
    return table


def runs_table(runs: Sequence[Path], **options: Any) -> str:
    """The table `probe table` prints (see its help); `options` are the probe's own (`n_props`
    for retrieval)."""
    from tacit.core.manifest import read_manifest
    from tacit.probes import registry

    if not runs:
        raise TacitError("no run directory given")
    probes = {registry.of_run(read_manifest(run), run).name: run for run in runs}
    if len(probes) > 1:
        listed = "; ".join(f"{name}: {run}" for name, run in probes.items())
        raise TacitError(f"these runs are of different probes ({listed}): one table takes one")
    probe = registry.get(next(iter(probes)))
    frames = [read_summary(run, required=set(probe.keys)) for run in runs]
    return probe.table(labelled(frames, probe.keys), **options)
