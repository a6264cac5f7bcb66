"""`probe compare` and tacit.compare: do two models differ on the same items? For every pair of
models in like-for-like runs (one run of several models, or several runs that scored the same
things: tacit.results.like_for_like), the difference of the probe's primary metric at its main
condition, a paired permutation test over concepts (the unit the intervals of summary.csv
resample) with the interval it implies, and Holm's correction over the comparisons of a table
(tacit.core.stats). The per-prompt scores come from the runs' prompts.csv (Probe.main_scores),
as saved (a result in memory is read as its file would be, so both give the same numbers), and
are checked to give the value summary.csv holds. A primary metric computed over the whole (RSA:
Metric.aggregation `corpus`) is no mean to sum: the probe pairs two models itself
(Probe.whole, Probe.compare_wholes), by a paired bootstrap over concepts.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from tacit.core.display import Table
from tacit.core.errors import TacitError
from tacit.core.files import SAVED_DIGITS
from tacit.core.labels import model_label, short_labels
from tacit.core.stats import fewest_units
from tacit.probes.base import PAIRED_BOOTSTRAP

if TYPE_CHECKING:
    from tacit.probes.base import Whole
    from tacit.results.like_for_like import RunInfo
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
    "units",
    "units_left_out",
    "test",
    "patterns",
    "seed",
    "computed_a",
    "computed_b",
]
# totals of values saved to SAVED_DIGITS significant digits that differ by less than this share
# of their size may be equal but for the rounding: the test counts them as ties
ROUNDING = 10.0 ** (1 - SAVED_DIGITS)


@dataclass
class Scores:
    """One model of one run: its per-unit sums, sums of sizes (|value|) and counts of the
    primary metric's prompts."""

    run: RunInfo
    model: str
    label: str
    sums: pd.Series
    sizes: pd.Series
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
        sizes = mine["value"].abs().groupby(mine["unit"], sort=True).sum()
        entry = Scores(run, model, model, grouped.sum(), sizes, grouped.count())
        want = main.loc[main["model"] == model, column]
        if len(want) != 1 or not np.isclose(entry.value, float(want.iloc[0]), rtol=1e-5, atol=1e-6):
            raise TacitError(
                f"{run.name}: {model}'s prompts do not give the {column} summary.csv has at its "
                f"main condition ({label}): a run written by an earlier tacit? run it again"
            )
        scores.append(entry)
    return label, scores


@dataclass
class Held:
    """One model of a run whose primary metric is computed over the whole (Probe.whole)."""

    run: RunInfo
    model: str
    label: str
    whole: Whole


def _wholes(run: RunInfo, options: dict[str, Any]) -> tuple[str, list[Held]]:
    """The run's main condition and its models as the probe pairs them, each checked to give
    the value summary.csv holds; a model with nothing to compare is left out, said so."""
    import warnings

    from tacit.core.errors import TacitWarning

    label, main = run.probe.conditions(run.summary, run.manifest, **options)[0]
    column = run.probe.primary.column
    held = []
    with run.directory() as directory:
        for model in run.models:
            whole = run.probe.whole(directory, run.manifest, model)
            if whole is None:
                warnings.warn(
                    f"{run.path or run.name}: {model_label(model)} has no {column} to compare: "
                    "left out",
                    TacitWarning,
                    stacklevel=3,
                )
                continue
            want = main.loc[main["model"] == model, column]
            if len(want) != 1 or not np.isclose(whole.value, float(want.iloc[0]), atol=1e-6):
                raise TacitError(
                    f"{run.name}: {model}'s saved files do not give the {column} summary.csv "
                    "has: a run written by an earlier tacit? run it again"
                )
            held.append(Held(run, model, model, whole))
    return label, held


def computed_by(run: RunInfo, model: str) -> str:
    """How a run computed a model's numbers, in words: the engine and the precision (a
    server's engine; in process, the dtype, and a GGUF file's quantisation dequantised to it,
    or a quantisation of transformers'). The same weights computed another way give other
    greedy answers, so `probe compare` says where a pair's differ."""
    records = cast("list[dict[str, Any]]", run.manifest.get("models", []))
    record = next((r for r in records if r.get("name") == model), {})
    server = record.get("server")
    if server is not None:
        return f"a server ({server.get('engine') or 'engine unknown'})"
    load = record.get("load") or {}
    dtype = load.get("dtype") or "dtype unknown"
    gguf = record.get("gguf")
    if gguf:
        kind = " ".join(filter(None, ["GGUF", gguf.get("quantization")]))
        return f"in process, {kind} dequantized to {dtype}"
    quantization = load.get("quantization")
    return f"in process, {dtype}" + (f", {quantization}" if quantization else "")


def _pair(a: Scores, b: Scores, seed: int, n_resamples: int, confidence: float) -> dict[str, Any]:
    """The paired comparison of two models over the units both have, with equal counts. The
    random sign patterns (past EXACT_LIMIT units) are seeded by `seed` and the two models,
    not by the runs' names, which differ between a result in memory and its directory."""
    from tacit.core.stats import paired_permutation

    units = a.sums.index.intersection(b.sums.index)
    units = units[(a.counts[units] == b.counts[units]).to_numpy()]
    left_out = len(a.sums.index.union(b.sums.index)) - len(units)
    if len(units) == 0:
        raise TacitError(
            f"{a.label} and {b.label} share no {a.run.probe.units[:-1]} scored the same way"
        )
    differences = (a.sums[units] - b.sums[units]).to_numpy()
    counts = a.counts[units].to_numpy()
    key = zlib.crc32(f"{a.model}|{b.model}".encode())
    test = paired_permutation(
        differences,
        counts,
        rng=np.random.default_rng([seed, key]),
        n_resamples=n_resamples,
        confidence=confidence,
        tolerance=ROUNDING * float(a.sizes[units].sum() + b.sizes[units].sum()),
    )
    return {
        **_named(a, b),
        "value_a": float(a.sums[units].sum() / counts.sum()),
        "value_b": float(b.sums[units].sum() / counts.sum()),
        "difference": float(differences.sum() / counts.sum()),
        "ci_low": test.ci_low,
        "ci_high": test.ci_high,
        "p_value": test.p_value,
        "n_units": len(units),
        "units": a.run.probe.units,
        "units_left_out": left_out,
        "test": "exact" if test.exact else "monte carlo",
        "patterns": test.patterns,
        "seed": seed,
    }


def _pair_wholes(
    a: Held, b: Held, seed: int, n_resamples: int, confidence: float
) -> dict[str, Any]:
    """Two models whose primary metric is computed over the whole, compared by their probe
    (Probe.compare_wholes) over the units both have, its draws seeded by `seed`."""
    found = a.run.probe.compare_wholes(
        a.whole, b.whole, seed=seed, n_resamples=n_resamples, confidence=confidence
    )
    return {**_named(a, b), **found, "units": a.run.probe.units, "seed": seed}


def _named(a: Scores | Held, b: Scores | Held) -> dict[str, str]:
    """A pair's models, runs, and how each computed its numbers."""
    return {
        "model_a": a.label,
        "run_a": a.run.name,
        "model_b": b.label,
        "run_b": b.run.name,
        "computed_a": computed_by(a.run, a.model),
        "computed_b": computed_by(b.run, b.model),
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
    `units_left_out` those one has and the other lacks), `p_value` the two-sided paired
    permutation test over concepts, `ci_low`/`ci_high` the differences that test does not
    reject at 1 - `confidence` (so the interval leaves out 0 exactly when p_value <= 0.05 at
    95%), `p_holm` the p-value adjusted by Holm over the comparisons of its group. `test` says
    how p was counted: `exact` over every one of the 2**n_units sign patterns (up to
    tacit.core.stats.EXACT_LIMIT concepts), else `monte carlo` over `n_resamples` random
    patterns seeded by `seed` and the pair's models; `patterns` is how many were counted.
    A metric computed over the whole (structure's RSA) is compared by its probe
    (Probe.compare_wholes): `paired bootstrap`, `n_resamples` draws of the shared concepts
    seeded by `seed`, the percentile interval of the draws' differences d and p = min(1,
    2 min(#{d <= 0}, #{d >= 0}) / #draws).
    Runs that are not like for like, or show another main condition, are in groups of their
    own and never compared. `options` are the probe's own (`n_props` for retrieval). Models
    are named as in `probe table`.

    Examples:
        >>> tacit.compare(["results/retrieve/run1"])  # doctest: +SKIP
    """
    import warnings

    from tacit.core.errors import TacitWarning
    from tacit.core.stats import holm
    from tacit.results.like_for_like import like_for_like, read_runs

    if n_resamples < 1:
        raise TacitError(f"--resamples {n_resamples}: must be at least 1")
    groups, _ = like_for_like(read_runs(runs))
    found, skipped = [], []
    for group in groups:
        by_condition: dict[str, list[Any]] = {}
        for run in group.runs:
            whole = run.probe.primary.aggregation == "corpus"
            scored = _wholes(run, options) if whole else _scores(run, options)
            if scored is None:
                skipped.append(run.probe.name)
                warnings.warn(
                    f"{run.path or run.name}: {run.probe.name} runs have no per-concept scores "
                    "to compare: left out",
                    TacitWarning,
                    stacklevel=2,
                )
                continue
            by_condition.setdefault(scored[0], []).extend(scored[1])
        for condition, scores in by_condition.items():
            if len(scores) < 2:
                _alone(scores, condition)
                continue
            _label(scores)
            paired = _pair_wholes if isinstance(scores[0], Held) else _pair
            pairs = [
                paired(a, b, seed, n_resamples, confidence)
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


def _alone(scores: list[Any], condition: str) -> None:
    """Say that a run is left out for want of another model to compare its own with: one
    model, and no run like for like with it (the same things scored, the same condition)."""
    import warnings

    from tacit.core.errors import TacitWarning

    at = f" at {condition}" if condition else ""
    for score in scores:
        where = score.run.path or score.run.name
        warnings.warn(
            f"{where}: one model ({model_label(score.model)}){at}, and no other "
            "run like for like with it to compare it with: left out (`probe table` shows it)",
            TacitWarning,
            stacklevel=3,
        )


def _label(scores: list[Any]) -> None:
    """Short model labels; a model in several runs named with its run (as `probe table` does),
    one asked in words with `by generation`."""
    from tacit.results.like_for_like import asked_in_words

    labels = short_labels(s.model for s in scores)
    runs_of: dict[str, set[str]] = {}
    for s in scores:
        runs_of.setdefault(labels[s.model], set()).add(s.run.name)
    for s in scores:
        label = labels[s.model]
        named = [s.run.name] if len(runs_of[label]) > 1 else []
        said = ", ".join([*named, *filter(None, [asked_in_words(s.run.manifest)])])
        s.label = f"{label} ({said})" if said else label


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
        units = str(first["units"])
        level = f"{int(confidence * 100)}%"
        if (rows["test"] == PAIRED_BOOTSTRAP).all():
            note = (
                f"paired over {units}: p of the two-sided paired bootstrap ({_counted(rows)}; "
                f"p = 2 x the smaller share of draws with A - B <= 0 or >= 0), Holm-adjusted "
                f"over this table (p Holm); {level} interval: the percentile interval of the "
                "draws' differences"
            )
        else:
            note = (
                f"paired over {units}: p of the two-sided permutation test ({_counted(rows)}), "
                f"Holm-adjusted over this table (p Holm); {level} interval: the differences the "
                f"test does not reject at {1 - confidence:.2g}, so it leaves out 0 exactly when "
                f"p <= {1 - confidence:.2g}"
            )
        if np.isinf(rows[["ci_low", "ci_high"]].to_numpy()).any():
            fewest = fewest_units(1 - confidence)
            note += (
                f"; no interval: {_few(rows)} {units} are too few at {level} (the test can "
                f"reject no difference with fewer than {fewest}: n {units} give p >= 2/2^n)"
            )
        if left_out:
            note += f"; {left_out} {units} one model of a pair lacks left out of that pair"
        note += _computed_apart(rows)
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
                    "n_units": units,
                },
                note=note,
            )
        )
    return shown


def _computed_apart(rows: pd.DataFrame) -> str:
    """A note on the pairs whose two models were computed by other engines or precisions."""
    apart = rows[rows["computed_a"] != rows["computed_b"]]
    if apart.empty:
        return ""
    said = "; ".join(
        f"{row.model_a}: {row.computed_a}, {row.model_b}: {row.computed_b}"
        for row in apart.itertuples()
    )
    return (
        f"; computed apart ({said}): the same weights through another engine or at another "
        "precision give other numbers and other greedy answers (a GGUF file's llama.cpp server "
        "and its float32 copy in process agreed on 0 of 12 greedy answers of SmolLM2-135M), so "
        "part of such a difference may be how it was computed (docs/comparing.md)"
    )


def _few(rows: pd.DataFrame) -> str:
    """The unit counts of the rows without an interval, in words ("3", "3 or 4")."""
    counts = sorted(set(rows.loc[np.isinf(rows["ci_low"]), "n_units"].astype(int)))
    return " or ".join(map(str, counts))


def units_of(rows: pd.DataFrame) -> str:
    """What the table's rows pair over, in the plural (`concepts`)."""
    return str(rows["units"].iloc[0])


def _counted(rows: pd.DataFrame) -> str:
    """How the table's p-values were counted, in words."""
    said = []
    for (test, patterns, seed), _ in rows.groupby(["test", "patterns", "seed"], sort=False):
        if test == PAIRED_BOOTSTRAP:
            said.append(f"{int(patterns):,} draws of the {units_of(rows)}, seed {seed}")
        elif test == "exact":
            said.append(f"exact over all {int(patterns):,} sign patterns")
        else:
            said.append(f"monte carlo over {int(patterns):,} random sign patterns, seed {seed}")
    return "; ".join(said)
