"""`probe leaderboard` and tacit.leaderboard: the runs under a folder (found at any depth: a
sweep's cells, results/, any folder of runs), a row per model of each run, each with its
probe's primary metric at the run's main condition (Probe.conditions) and its interval, exactly
as summary.csv has them. Runs are grouped like for like (tacit.results.like_for_like) and by the
condition shown: a group is ranked within itself, and runs of different groups are never
averaged or put in one ranking.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.display import Table
from tacit.core.errors import TacitError, TacitWarning
from tacit.core.labels import short_labels

COLUMNS = [
    "group",
    "probe",
    "metric",
    "condition",
    "scored_over",
    "model",
    "run",
    "value",
    "ci_low",
    "ci_high",
    "chance",
    "n",
    "rank",
]


def _value(rows: pd.DataFrame, column: str | None) -> float:
    return float(rows[column].iloc[0]) if column and column in rows else float("nan")


def _entries(
    run: Path, folder: Path, n_props: int | None, conditions: bool
) -> list[dict[str, Any]]:
    """A run's rows: one per model, its main condition's primary metric (and the others')."""
    from tacit.core.manifest import read_manifest
    from tacit.probes import registry
    from tacit.results.like_for_like import asked_in_words, read_summary, scored_over

    manifest = read_manifest(run)
    probe = registry.of_run(manifest, run)
    summary = read_summary(run, required={*probe.keys, probe.primary.column})
    found = probe.conditions(summary, manifest, n_props=n_props)
    (label, main), others = found[0], found[1:]
    metric = probe.primary
    scored = scored_over(probe, manifest)
    # A sweep's cell of a training checkpoint names its model as the cell does
    # (pythia-70m@step1000): the checkpoints of one model are told apart by their step.
    record = manifest.get("sweep") or {}
    sweep_label = record.get("label") if record.get("step") is not None else None
    entries = []
    for model, rows in main.groupby("model", sort=False):
        if len(rows) != 1:
            raise TacitError(f"{run}: {len(rows)} rows of {model} in its main condition ({label})")
        entry = {
            "probe": probe.name,
            "metric": metric.label,
            "condition": label,
            "scored_over": "",  # the group's, once grouped
            "model": " ".join(filter(None, [str(sweep_label or model), asked_in_words(manifest)])),
            "run": str(run.relative_to(folder)) if run != folder else run.name,
            "value": _value(rows, metric.column),
            "ci_low": _value(rows, metric.low),
            "ci_high": _value(rows, metric.high),
            "chance": _value(rows, metric.chance),  # a uniformly random ranking's
            "n": _value(rows, metric.count),
            "_scored": scored,
            "_greater": metric.greater_is_better,
        }
        if conditions:
            for other, other_rows in others:
                mine = other_rows[other_rows["model"] == model]
                entry[other] = _value(mine, metric.column) if len(mine) == 1 else float("nan")
        entries.append(entry)
    return entries


def _grouped(entries: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    """Each entry's group (numbered from 1 in the order first met) and the group itself: runs
    like for like (tacit.results.like_for_like.Group.takes) that show the same condition."""
    from tacit.results.like_for_like import Group

    groups: list[tuple[str, Group]] = []
    found = []
    for entry in entries:
        for number, (label, group) in enumerate(groups, 1):
            if label == entry["condition"] and group.takes(entry["_scored"]):
                found.append((number, group))
                break
        else:
            groups.append((entry["condition"], Group([], dict(entry["_scored"]))))
            found.append((len(groups), groups[-1][1]))
    return found


def leaderboard(
    folder: str | Path, *, n_props: int | None = None, conditions: bool = False
) -> pd.DataFrame:
    """A row per model of every complete run under `folder` (at any depth): COLUMNS, then,
    with `conditions`, one column per other condition of a run (an ablation's other orderings,
    elicitation without the prefix, ...). `value` is the probe's primary metric at the run's
    main condition (retrieval: MRR at the largest number of properties, or the largest up to
    `n_props`; elicitation: mAP with the prefix over every relation), `ci_low`/`ci_high` its
    95% interval, `chance` what a uniformly random ranking scores on it (NaN for a probe or a
    run without) and `n` the units it averages (concepts), all as in the run's summary.csv.
    Runs that are like for like and show the same condition share a `group`, ranked by value
    (`rank`, 1 the best); groups are numbered in the order first met. A run that cannot be
    read is left out with a warning.

    Examples:
        >>> tacit.leaderboard("results")  # doctest: +SKIP
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise TacitError(f"{folder}: no such directory")
    entries: list[dict[str, Any]] = []
    for manifest_file in sorted(folder.rglob("manifest.json")):
        try:
            entries += _entries(manifest_file.parent, folder, n_props, conditions)
        except TacitError as err:
            warnings.warn(f"left out: {err}", TacitWarning, stacklevel=2)
    if not entries:
        raise TacitError(f"{folder}: no complete run in it (no manifest.json at any depth)")
    table = pd.DataFrame(entries)
    groups = _grouped(entries)
    table["group"] = [number for number, _ in groups]
    table["scored_over"] = [group.describe() for _, group in groups]
    table["model"] = table["model"].map(short_labels(table["model"]))
    ranks = []
    for _, rows in table.groupby("group", sort=False):
        ascending = not bool(rows["_greater"].iloc[0])
        ranks.append(rows["value"].rank(ascending=ascending, method="min"))
    table["rank"] = pd.concat(ranks).astype("Int64")
    table = table.sort_values(["group", "rank"], kind="stable")
    extra = [c for c in table.columns if c not in COLUMNS and not c.startswith("_")]
    return table[COLUMNS + extra].reset_index(drop=True)


def leaderboard_tables(table: pd.DataFrame) -> tuple[list[Table], list[str]]:
    """The leaderboard as tables to print, one per group, and the warning for groups of one
    probe that are not like for like (they are shown apart, never ranked together)."""
    tables = []
    for group, rows in table.groupby("group", sort=False):
        first = rows.iloc[0]
        extra = [c for c in rows.columns if c not in COLUMNS]
        shown = rows[["rank", "model", "run", "value", "ci_low", "ci_high", "chance", "n", *extra]]
        shown = shown.dropna(axis=1, how="all").reset_index(drop=True)
        title = f"{group}. {first['probe']}: {first['metric']}, {first['condition']}".rstrip(", ")
        interval = {"ci_low", "ci_high"} <= set(shown.columns)  # a metric with an interval
        tables.append(
            Table(
                shown,
                title,
                intervals={"value": ("ci_low", "ci_high")} if interval else {},
                headers={"value": f"{first['metric']}" + (" [95% CI]" if interval else "")},
                note=f"scored over: {first['scored_over']}" if first["scored_over"] else "",
            )
        )
    said = []
    per_probe = table.drop_duplicates("group").groupby("probe", sort=False)
    for probe, groups in per_probe:
        if groups["scored_over"].nunique() > 1:
            numbers = ", ".join(str(g) for g in groups["group"])
            said.append(
                f"warning: {probe} runs that are not like for like (groups {numbers}: "
                "see what each scored over) are ranked apart"
            )
    return tables, said
