"""`probe compare` and tacit.compare: do two models differ on the same items? For every pair of
models in like-for-like runs (one run of several models, or several runs that scored the same
things: tacit.results.compare), the difference of the probe's primary metric at its main
condition, a paired bootstrap interval and a paired permutation test, both over concepts (the
unit the intervals of summary.csv resample), and Holm's correction over the comparisons of a
table (tacit.core.stats). The per-prompt scores come from the runs' prompts.csv
(Probe.main_scores), and are checked to give the value summary.csv holds.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.display import Table
from tacit.core.errors import TacitError
from tacit.core.labels import short_labels

if TYPE_CHECKING:
    from tacit.results.compare import RunInfo
    from tacit.results.result import ProbeResult

COLUMNS = [
    "group",
    "probe",
    "metric",
    "condition",
    "model_a",
    "run_a",
    "model_b",
    "run_b",
    "value_a",
    "value_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "n_units",
    "units_left_out",
]


@dataclass
class Scores:
    """One model of one run: its per-unit sums and counts of the primary metric's prompts."""

    run: RunInfo
    model: str
    label: str
    sums: pd.Series
    counts: pd.Series

    @property
    def value(self) -> float:
        return float(self.sums.sum() / self.counts.sum())


def _scores(run: RunInfo, options: dict[str, Any]) -> tuple[str, list[Scores]] | None:
    """The run's main condition and its models' per-unit scores (None: a probe without)."""
    found = run.probe.main_scores(run.rows, run.manifest, **options)
    if found is None:
        return None
    label, main = run.probe.conditions(run.summary, run.manifest, **options)[0]
    column = run.probe.primary.column
    scores = []
    for model in run.models:
        mine = found[found["model"] == model]
        if mine.empty:
            continue
        grouped = mine.groupby("unit", sort=True)["value"]
        entry = Scores(run, model, model, grouped.sum(), grouped.count())
        want = main.loc[main["model"] == model, column]
        if len(want) != 1 or not np.isclose(entry.value, float(want.iloc[0]), rtol=1e-5, atol=1e-6):
            raise TacitError(
                f"{run.name}: {model}'s prompts do not give the {column} summary.csv has at its "
                f"main condition ({label}): a run written by an earlier tacit? run it again"
            )
        scores.append(entry)
    return label, scores


def _pair(a: Scores, b: Scores, seed: int, n_resamples: int, confidence: float) -> dict[str, Any]:
    """The paired comparison of two models over the units both have, with equal counts."""
    from tacit.core.stats import bootstrap_ratio_ci, paired_permutation_test

    units = a.sums.index.intersection(b.sums.index)
    units = units[(a.counts[units] == b.counts[units]).to_numpy()]
    left_out = len(a.sums.index.union(b.sums.index)) - len(units)
    if len(units) == 0:
        raise TacitError(f"{a.label} and {b.label} share no concept scored the same way")
    differences = (a.sums[units] - b.sums[units]).to_numpy()
    counts = a.counts[units].to_numpy()
    key = zlib.crc32(f"{a.run.name}/{a.model}|{b.run.name}/{b.model}".encode())
    low, high = bootstrap_ratio_ci(
        differences,
        counts,
        rng=np.random.default_rng([seed, key, 0]),
        n_resamples=n_resamples,
        confidence=confidence,
    )
    p = paired_permutation_test(
        differences, rng=np.random.default_rng([seed, key, 1]), n_resamples=n_resamples
    )
    return {
        "model_a": a.label,
        "run_a": a.run.name,
        "model_b": b.label,
        "run_b": b.run.name,
        "value_a": float(a.sums[units].sum() / counts.sum()),
        "value_b": float(b.sums[units].sum() / counts.sum()),
        "difference": float(differences.sum() / counts.sum()),
        "ci_low": float(low[0]),
        "ci_high": float(high[0]),
        "p_value": p,
        "n_units": len(units),
        "units_left_out": left_out,
    }


def compare(
    runs: Sequence[str | Path | ProbeResult],
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    **options: Any,
) -> pd.DataFrame:
    """Every pair of models on the same items: COLUMNS. `difference` is value_a - value_b
    (the primary metric at the main condition, over the concepts both have: `n_units`;
    `units_left_out` those one has and the other lacks), `ci_low`/`ci_high` its paired bootstrap
    interval (`confidence`, `n_resamples` resamples of concepts), `p_value` the two-sided paired
    permutation test (exact when 2**n_units <= n_resamples), `p_holm` it adjusted by Holm over
    the comparisons of its group. Runs that are not like for like, or show another main
    condition, are in groups of their own and never compared. `options` are the probe's own
    (`n_props` for retrieval). Models are named as in `probe table`.

    Examples:
        >>> tacit.compare(["results/retrieve/run1"])  # doctest: +SKIP
    """
    from tacit.core.stats import holm
    from tacit.results.compare import like_for_like, read_runs

    if n_resamples < 1:
        raise TacitError(f"--resamples {n_resamples}: must be at least 1")
    groups, _ = like_for_like(read_runs(runs))
    found, skipped = [], []
    for group in groups:
        by_condition: dict[str, list[Scores]] = {}
        for run in group.runs:
            scored = _scores(run, options)
            if scored is None:
                skipped.append(run.probe.name)
                continue
            by_condition.setdefault(scored[0], []).extend(scored[1])
        for condition, scores in by_condition.items():
            _label(scores)
            pairs = [
                _pair(a, b, seed, n_resamples, confidence)
                for a, b in itertools.combinations(scores, 2)
            ]
            adjusted = holm([pair["p_value"] for pair in pairs])
            probe = group.runs[0].probe
            found += [
                {
                    "group": 0,
                    "probe": probe.name,
                    "metric": probe.primary.label,
                    "condition": condition,
                    **pair,
                    "p_holm": float(p),
                    "_key": (id(group), condition),
                }
                for pair, p in zip(pairs, adjusted)
            ]
    if not found:
        why = (
            f" ({', '.join(sorted(set(skipped)))} runs have no per-concept scores)"
            if skipped
            else ""
        )
        raise TacitError(f"no two models scored the same items to compare{why}")
    table = pd.DataFrame(found)
    keys = list(dict.fromkeys(table["_key"]))
    table["group"] = table["_key"].map(lambda k: keys.index(k) + 1)
    return table[COLUMNS].reset_index(drop=True)


def _label(scores: list[Scores]) -> None:
    """Short model labels; a model in several runs named with its run (as `probe table` does)."""
    labels = short_labels(s.model for s in scores)
    runs_of: dict[str, set[str]] = {}
    for s in scores:
        runs_of.setdefault(labels[s.model], set()).add(s.run.name)
    for s in scores:
        label = labels[s.model]
        s.label = f"{label} ({s.run.name})" if len(runs_of[label]) > 1 else label


def comparison_tables(table: pd.DataFrame, confidence: float = 0.95) -> list[Table]:
    """The comparisons as tables to print, one per group."""
    shown = []
    for _, rows in table.groupby("group", sort=False):
        first = rows.iloc[0]
        title = (
            f"{first['group']}. {first['probe']}: {first['metric']} of A - B, {first['condition']}"
        ).rstrip(", ")
        frame = rows[
            [
                "model_a",
                "model_b",
                "value_a",
                "value_b",
                "difference",
                "ci_low",
                "ci_high",
                "p_value",
                "p_holm",
                "n_units",
            ]
        ].reset_index(drop=True)
        left_out = int(rows["units_left_out"].sum())
        note = (
            f"paired over concepts: {int(confidence * 100)}% bootstrap interval, two-sided "
            "permutation test (p), Holm-adjusted over this table (p Holm)"
        )
        if left_out:
            note += f"; {left_out} concept(s) one model of a pair lacks left out of that pair"
        shown.append(
            Table(
                frame,
                title,
                intervals={"difference": ("ci_low", "ci_high")},
                signed=["difference"],
                headers={
                    "model_a": "A",
                    "model_b": "B",
                    "value_a": "A value",
                    "value_b": "B value",
                    "difference": f"A - B [{int(confidence * 100)}% CI]",
                    "p_value": "p",
                    "p_holm": "p Holm",
                    "n_units": "concepts",
                },
                note=note,
            )
        )
    return shown
