"""Whether runs can stand side by side in one figure, table, report or leaderboard: each probe
says what must match for two of its runs to be like for like (Probe.comparable: the vocabulary
or candidates, norms, concepts, span scoring, ...); here the runs' values are compared."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tacit.core.errors import TacitError


def differences(runs: Sequence[str | Path]) -> list[str]:
    """One line per way the runs differ in what they scored, naming each run's value; empty
    when they are like for like (or have no manifest to tell)."""
    from tacit.core.manifest import read_manifest
    from tacit.probes import registry

    prints: dict[str, dict[str, str]] = {}
    for run in runs:
        try:
            manifest = read_manifest(run)
            limit = manifest.get("limit")
            prints[Path(run).name] = {
                **registry.of_run(manifest, run).comparable(manifest),
                "limit": f"the first {limit['first']} {limit['of']}" if limit else "",
            }
        except TacitError:
            continue  # a summary without a manifest: nothing to compare
    notes = []
    whats = list(dict.fromkeys(what for p in prints.values() for what in p))
    for what in whats:
        values = {name: p.get(what, "") for name, p in prints.items()}
        if len(set(values.values())) > 1:
            shown = "; ".join(f"{name}: {value or 'none'}" for name, value in values.items())
            notes.append(f"the runs differ in {what} ({shown})")
    return notes
