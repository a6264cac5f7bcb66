"""Whether runs can stand side by side in one figure or table: the same kind of figure, and,
where they differ in what was scored (vocabulary or candidates, norms, concepts), a warning."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from tacit.core.errors import TacitError


def check_kinds(frames: Sequence[pd.DataFrame], kind_of: Callable[[pd.DataFrame], str]) -> None:
    """Refuse runs whose figures differ in kind (an ordering ablation beside a category run
    drew one garbled panel): one figure shows one kind."""
    kinds = {kind_of(frame): str(frame["run"].iloc[0]) for frame in frames}
    special = {k: r for k, r in kinds.items() if k != "models"}
    if len(special) > 1 or (special and len(kinds) > 1):
        listed = "; ".join(f"{kind}: {run}" for kind, run in kinds.items())
        raise TacitError(f"these runs draw different figures ({listed}): plot them apart")


def _fingerprint(run: Path) -> dict[str, str]:
    """What a run scored, from its manifest (empty where there is none)."""
    try:
        manifest = json.loads((Path(run) / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}
    vocabulary = manifest.get("vocabulary") or {}
    candidates = manifest.get("candidates") or {}
    norms = manifest.get("norms") or {}
    options = manifest.get("options") or {}
    return {
        "vocabulary": f"{vocabulary.get('size')} words ({str(vocabulary.get('sha256'))[:8]})"
        if vocabulary else "",
        "candidates": ", ".join(f"{c.get('size')} {c.get('source')} ({str(c.get('sha256'))[:8]})"
                                for c in candidates.values()),
        "norms": f"{Path(str(norms.get('path'))).name} ({str(norms.get('sha256'))[:8]})"
        if norms else "",
        "concepts": ",".join(options.get("concepts") or []) or "all",
    }  # fmt: skip


def differences(runs: Sequence[str | Path]) -> list[str]:
    """One line per way the runs differ in what they scored (vocabulary or candidate set,
    norms, concepts), naming each run's value; empty when they are like for like."""
    prints = {Path(r).name: _fingerprint(Path(r)) for r in runs}
    prints = {name: p for name, p in prints.items() if p}
    notes = []
    for what in ("vocabulary", "candidates", "norms", "concepts"):
        values = {name: p[what] for name, p in prints.items()}
        if len(set(values.values())) > 1:
            shown = "; ".join(f"{name}: {value or 'none'}" for name, value in values.items())
            notes.append(f"the runs differ in {what} ({shown})")
    return notes
