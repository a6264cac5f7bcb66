"""One summarise step for every probe that declares its summary (Summary): per condition, each
metric's mean with its percentile bootstrap interval over units (concepts, items) and its
chance level, the counts and totals beside them, and with several templates their spread and
consistency (tacit.ask.paraphrase). docs/architecture.md says why it is shaped so."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tacit.ask.paraphrase import TEMPLATE, paraphrase_columns, paraphrased
from tacit.ask.vocabulary import bounded_columns, bounded_sum
from tacit.core.stats import bootstrap_mean_ci, bootstrap_ratio_ci
from tacit.probes.base import Metric

# a condition's rows, and what the summary is told of the run (n_candidates, n_sensible, ...)
Of = Callable[[pd.DataFrame, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Stat:
    """A summary column that is no metric: a count, a total, a spread (`of`: a condition's
    rows and the run's context -> its value)."""

    column: str
    of: Of


def count(column: str, of: str | None = None) -> Stat:
    """How many rows (or distinct values of `of`) a condition has."""
    if of is None:
        return Stat(column, lambda rows, _: len(rows))
    return Stat(column, lambda rows, _: rows[of].nunique())


def total(column: str) -> Stat:
    """The sum of a rows' column over a condition (draws, answers, refusals)."""
    return Stat(column, lambda rows, _: int(rows[column].sum()))


def defined(column: str, of: str) -> Stat:
    """On how many of a condition's rows `of` is defined (not NaN)."""
    return Stat(column, lambda rows, _: int(rows[of].count()))


Column = Metric | Stat


@dataclass(frozen=True)
class Summary:
    """How a probe's rows become its summary, declared once.

    groups: the summary's keys, model first (`template` joins them with several templates).
    by: the rows' columns a condition is grouped by (the others come from `parts`).
    parts: (a group's rows, every row) -> (label, rows) of each condition in it (None: the
        group); `label` is `pooled`'s value (elicitation's relations, and `all`).
    stream: (the group's key, the part's label) -> the text that seeds the condition's
        resamples: never the model, so the resamples are paired across models.
    columns: after the counts, each Metric (its mean, interval and chance) or Stat.
    unit: what is resampled (a concept with all of its prompts; None: each row).
    means: `units` (the interval of the mean of the units' means) or `rows` (of the rows'
        mean, the units' sums over their counts: NaN rows left out).
    prepare: (rows, context) -> the rows summarised (an items run's, one row per item).
    order: (summary, rows) -> the summary in its order (None: as grouped).
    after: Stats after the metrics (how many rows each is defined on, totals).
    A key the rows do not have (a listing's `prefix`) is left out.
    """

    groups: tuple[str, ...]
    columns: tuple[Column, ...]
    counts: tuple[Stat, ...] = ()
    by: tuple[str, ...] | None = None
    parts: Callable[[pd.DataFrame, pd.DataFrame], Iterable[tuple[Any, pd.DataFrame]]] | None = None
    pooled: str | None = None
    stream: Callable[[tuple[Any, ...], Any], str] = lambda key, label: repr(key[1:])
    unit: str | None = "concept"
    means: str = "rows"
    prepare: Callable[[pd.DataFrame, Mapping[str, Any]], pd.DataFrame] | None = None
    order: Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame] | None = None
    after: tuple[Stat, ...] = field(default_factory=tuple)
    templates: bool = True  # with several templates, a row per template and their ensemble

    @property
    def metrics(self) -> list[Metric]:
        return [c for c in self.columns if isinstance(c, Metric)]


def values_of(metric: Metric, rows: pd.DataFrame, context: Mapping[str, Any]) -> pd.Series:
    """A metric's value on each row: its rows column, or what its function makes of them."""
    of = metric.of if metric.of is not None else metric.row
    assert of is not None, f"{metric.column}: no row column or function to average"
    if isinstance(of, str):
        return rows[of]
    return pd.Series(of(rows, context), index=rows.index)


def summarise(
    rows: pd.DataFrame,
    spec: Summary,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    context: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The summary of a run's rows as `spec` declares it: a row per condition (its keys, its
    counts, each metric's mean, interval and chance level, each Stat), seeded by `seed` and
    the condition (never the model), the resamples of one condition shared by every metric
    (a metric added leaves the others' intervals as they were, bit for bit)."""
    context = dict(context or {})
    if spec.prepare is not None:
        rows = spec.prepare(rows, context)
    by_template = spec.templates and paraphrased(rows)
    keys = [k for k in (spec.by or spec.groups) if k in rows]
    keys += [TEMPLATE] if by_template else []
    groups = [g for g in spec.groups if g in rows or g == spec.pooled]
    named = [*groups, *([TEMPLATE] if by_template else [])]
    found = []
    for key, group in rows.groupby(keys, sort=False):
        parts = spec.parts(group, rows) if spec.parts is not None else [(None, group)]
        for label, part in parts:
            rng = np.random.default_rng([seed, zlib.crc32(spec.stream(key, label).encode())])
            given = {**dict(zip(keys, key)), **({spec.pooled: label} if spec.pooled else {})}
            row = {k: given.get(k) for k in named}
            row.update({stat.column: stat.of(part, context) for stat in spec.counts})
            row.update(_columns(part, spec, rng, n_resamples, confidence, context))
            row.update({stat.column: stat.of(part, context) for stat in spec.after})
            found.append({**row, **bounded_sum(part)})
    columns = [*named, *summary_columns(spec)[len(spec.groups) :], *bounded_columns(rows)]
    summary = pd.DataFrame(found, columns=columns)
    if spec.order is not None:
        summary = spec.order(summary, rows)
    if by_template:
        summary = paraphrase_columns(summary, rows, groups, spec.metrics[0].column)
    return summary


def summary_columns(spec: Summary) -> list[str]:
    """The summary's columns, in order (a run of several templates adds `template` after the
    keys; one whose ranks --suffix-top bounded, their count at the end)."""
    names = [*spec.groups, *(stat.column for stat in spec.counts)]
    for column in spec.columns:
        if isinstance(column, Stat):
            names.append(column.column)
            continue
        names.append(column.column)
        names += [c for c in (column.low, column.high, column.chance) if c is not None]
    return names + [stat.column for stat in spec.after]


def _columns(
    part: pd.DataFrame,
    spec: Summary,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
    context: Mapping[str, Any],
) -> dict[str, Any]:
    """A condition's metrics (mean, interval, chance) and stats, in order."""
    values = {m.column: values_of(m, part, context) for m in spec.metrics}
    resampled = [m.column for m in spec.metrics if m.low is not None]
    low, high = _intervals(part, values, resampled, spec, rng, n_resamples, confidence)
    row: dict[str, Any] = {}
    for column in spec.columns:
        if isinstance(column, Stat):
            row[column.column] = column.of(part, context)
            continue
        row[column.column] = values[column.column].mean()
        if column.low is not None and column.high is not None:
            row[column.low], row[column.high] = low[column.column], high[column.column]
        if column.chance is not None:
            row[column.chance] = _chance(column, part, context)
    return row


def _chance(metric: Metric, part: pd.DataFrame, context: Mapping[str, Any]) -> Any:
    """What a uniformly random ranking scores on a metric, over a condition's rows."""
    chance = metric.chance_of
    if chance is None or isinstance(chance, int | float):
        return chance
    return pd.Series(chance(part, context), index=part.index).mean()


def _intervals(
    part: pd.DataFrame,
    values: Mapping[str, pd.Series],
    columns: Sequence[str],
    spec: Summary,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
) -> tuple[dict[str, float], dict[str, float]]:
    """Each resampled metric's percentile bootstrap interval over the condition's units (one
    draw of units for every metric)."""
    if not columns:
        return {}, {}
    table = pd.DataFrame({c: values[c] for c in columns}).astype(float)
    if spec.means == "units":
        assert spec.unit is not None
        per_unit = table.groupby(part[spec.unit], sort=True).mean()
        low, high = bootstrap_mean_ci(
            per_unit.to_numpy(), rng=rng, n_resamples=n_resamples, confidence=confidence
        )
    else:
        if spec.unit is None:
            sums, counts = table.fillna(0.0), table.notna()
        else:
            sums = table.fillna(0.0).groupby(part[spec.unit], sort=True).sum()
            counts = table.notna().groupby(part[spec.unit], sort=True).sum()
        low, high = bootstrap_ratio_ci(
            sums.to_numpy(),
            counts.to_numpy(),
            rng=rng,
            n_resamples=n_resamples,
            confidence=confidence,
        )
        if spec.unit is not None:
            ever = counts.sum().to_numpy() > 0
            low, high = np.where(ever, low, np.nan), np.where(ever, high, np.nan)
    return dict(zip(columns, low)), dict(zip(columns, high))


def pooled_parts(
    column: str, label: str
) -> Callable[[pd.DataFrame, pd.DataFrame], list[tuple[Hashable, pd.DataFrame]]]:
    """A group's conditions: each value of `column`, then all of them together (`label`)
    where the run has several (and none is `label` already: a free listing's)."""

    def parts(group: pd.DataFrame, rows: pd.DataFrame) -> list[tuple[Hashable, pd.DataFrame]]:
        found: list[tuple[Hashable, pd.DataFrame]] = list(group.groupby(column, sort=False))
        if rows[column].nunique() > 1 and label not in set(rows[column]):
            found.append((label, group))
        return found

    return parts
