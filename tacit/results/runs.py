"""Past runs at a glance: every run directory under a folder, with what it is and its state.

A directory is a run when it holds manifest.json (complete) or a checkpoint without one
(.partial/plan.json: interrupted, resumable with --resume; its start, norms and command in
.partial/run.json). Anything else is not listed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.files import RECORD_LIMIT, regular_file
from tacit.core.labels import short_labels
from tacit.engine.checkpoint import RUN_FILE
from tacit.results.rundir import PARTIAL

RUN_COLUMNS = ["run", "probe", "models", "norms", "started", "size", "state"]


def _size(path: Path) -> str:
    total = float(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()))
    for unit in ("B", "KB", "MB", "GB"):
        if total < 1024 or unit == "GB":
            return f"{total:.0f} {unit}" if unit == "B" else f"{total:.1f} {unit}"
        total /= 1024
    return ""


def _installed_names() -> dict[str, str]:
    """sha256 -> the name a norm set is installed under (`probe norms install`), so that a run
    shows `cslb` rather than `norms.dat`; empty where none is installed or the registry cannot
    be read."""
    from tacit.core.errors import TacitError
    from tacit.norms.store import installed_norms

    try:
        return {entry.sha256: entry.name for entry in installed_norms()}
    except (TacitError, OSError):
        return {}


def _norms_name(norms: object, installed: dict[str, str]) -> str:
    if not isinstance(norms, dict) or not norms.get("path"):
        return ""
    return installed.get(str(norms.get("sha256")), Path(norms["path"]).name)


def _describe(path: Path, root: Path, installed: dict[str, str]) -> dict[str, str] | None:
    manifest_file, plan_file = path / "manifest.json", path / PARTIAL / "plan.json"
    if manifest_file.is_file():
        sources, state = [manifest_file], "complete"
    elif plan_file.is_file():  # the plan, and the run's start (norms, time: run.json)
        sources, state = [plan_file, path / PARTIAL / RUN_FILE], "interrupted (--resume)"
    else:
        return None
    record: dict[str, Any] = {}
    for source in sources:
        try:
            regular_file(source, limit=RECORD_LIMIT, missing_ok=True)
            record.update(json.loads(source.read_text()))
        except (OSError, ValueError):
            state = f"{state}, unreadable {source.name}"
    models = record.get("models", [])
    names = [m.get("name", "?") if isinstance(m, dict) else str(m) for m in models]
    labels = short_labels(names)
    norms = record.get("norms")
    return {
        "run": str(path.relative_to(root)) if path != root else path.name,
        "probe": record.get("probe", ""),
        "models": ", ".join(labels[n] for n in names),
        "norms": _norms_name(norms, installed),
        "started": str(record.get("started", ""))[:16].replace("T", " "),
        "size": _size(path),
        "state": state,
    }


def list_runs(root: str | Path = "results") -> pd.DataFrame:
    """The runs under `root` (itself included), oldest first: RUN_COLUMNS; norms by the name
    they are installed under where they are installed."""
    root = Path(root)
    if not root.is_dir():
        raise TacitError(f"{root}: no such directory (runs go to results/ by default)")
    installed = _installed_names()
    found = [
        _describe(path, root, installed)
        for path in [root, *sorted(root.rglob("*"))]
        if path.is_dir() and path.name != PARTIAL
    ]
    runs = pd.DataFrame([f for f in found if f is not None], columns=RUN_COLUMNS)
    return runs.sort_values(["started", "run"], kind="stable").reset_index(drop=True)
