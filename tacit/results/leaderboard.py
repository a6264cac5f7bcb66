"""`probe leaderboard` and tacit.leaderboard: one table of the runs under a folder (a sweep's,
or any), a row per model and a column per probe and setting, each value the probe's primary
metric at its main condition (Probe.main_rows), model by model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.labels import model_label


def leaderboard(folder: str | Path, *, n_props: int | None = None) -> pd.DataFrame:
    """One row per model, one column per probe and run settings (the run's directory name
    without its probe and model); retrieval's MRR at `n_props` (default the largest in the
    run), elicitation's mAP with the prefix averaged over relations."""
    from tacit.core.manifest import read_manifest
    from tacit.probes import registry

    folder = Path(folder)
    if not folder.is_dir():
        raise TacitError(f"{folder}: no such directory")
    entries: list[dict[str, Any]] = []
    for manifest_file in sorted(folder.rglob("manifest.json")):
        run = manifest_file.parent
        manifest = read_manifest(run)
        probe = registry.of_run(manifest, run)
        summary = pd.read_csv(run / "summary.csv")
        if n_props is not None and "n_props" in summary:
            summary = summary[summary["n_props"] <= n_props]
        rows = probe.main_rows(summary, manifest)
        label = f"{probe.name} {probe.primary.label}"
        if "n_props" in rows and len(rows):
            label += f"@{int(rows['n_props'].max())}"
        for model, value in probe.headline(summary, manifest).items():
            settings = run.name.replace(f"{probe.name}-{model_label(model)}", "", 1)
            column = label + (f" [{settings.strip('-')}]" if settings.strip("-") else "")
            entries.append({"model": model_label(model), "cell": column, "value": value})
    if not entries:
        raise TacitError(f"{folder}: no complete run in it")
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
