"""The figure of elicitation runs: mAP over the vocabulary (or the candidates) by relation, a
bar per model, prefix and run, with its 95% bootstrap interval; for runs by generation, the
recall of the people's features weighted by pf."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.labels import short_labels
from tacit.probes.elicit.options import ALL

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tacit.probes.base import Metric


def elicitation_figure(
    runs: Sequence[tuple[str, pd.DataFrame, Any]], caption: str = "", metric: Metric | None = None
) -> Figure:
    """Bars of mAP (or `metric`: a run by generation's recall) by relation for (run name,
    summary, manifest) of one or more runs; the legend, beside the bars, names every bar; the
    y-axis says what the runs ranked over (from their manifests); `caption` is said under it
    all. Each bar's chance level (where the metric has one) is a dashed line across it; a
    random-weight control's bars are hatched, and a bar too low to be seen has its value
    written on it, so that a control at 0 is read as 0, not as missing."""
    from matplotlib.figure import Figure

    from tacit.core.modelspec import RANDOM_WEIGHTS
    from tacit.core.numbers import format_number
    from tacit.probes.elicit.metrics import MAP_VOCAB
    from tacit.probes.figures import say_under

    spans = {"candidates" in (manifest or {}) for _, _, manifest in runs}
    over = {
        frozenset({True}): "the candidates",
        frozenset({False}): "the shared vocabulary",
    }.get(frozenset(spans), "the vocabulary (or, runs\nover spans, the candidates)")

    shown = metric or MAP_VOCAB
    column, low_column, high_column = shown.column, str(shown.low), str(shown.high)
    summary = pd.concat([table.assign(run=name) for name, table, _ in runs], ignore_index=True)
    summary["model"] = summary["model"].map(short_labels(summary["model"]))
    relations = list(dict.fromkeys(summary["relation"]))
    series = list(dict.fromkeys(zip(summary["run"], summary["model"], summary["prefix"])))
    figure = Figure(figsize=(10, max(4.2, 1.0 + 0.22 * len(series))), layout="constrained")
    axis = figure.subplots()
    width = 0.8 / len(series)
    top = float(np.nanmax(summary[high_column if high_column in summary else column]))
    chance_drawn = False
    for number, (run, model, prefix) in enumerate(series):
        rows = (
            summary[
                (summary["run"] == run)
                & (summary["model"] == model)
                & (summary["prefix"] == prefix)
            ]
            .set_index("relation")
            .reindex(relations)
        )
        label = f"{model}, {'with' if str(prefix) == 'True' else 'without'} prefix"
        label += f" ({run})" if len(runs) > 1 else ""
        spread = None
        if low_column in rows:
            low = (rows[column] - rows[low_column]).to_numpy(float)
            high = (rows[high_column] - rows[column]).to_numpy(float)
            spread = np.vstack([low, high])
        where = np.arange(len(relations)) - 0.4 + width * (number + 0.5)
        values = rows[column].to_numpy(float)
        control = RANDOM_WEIGHTS.search(str(model)) is not None
        bars = axis.bar(
            where,
            values,
            width,
            yerr=spread,
            capsize=2,
            label=label,
            hatch="//" if control else None,
            alpha=0.6 if control else None,
        )
        color = bars.patches[0].get_facecolor()[:3] if bars.patches else None
        for x, value in zip(where, values):
            if np.isfinite(value) and value < 0.02 * top:  # too low to be seen: say it
                axis.annotate(
                    format_number(value),
                    (x, value),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize="x-small",
                    color=color,
                )
        if shown.chance and shown.chance in rows:
            chance = rows[shown.chance].to_numpy(float)
            kept = np.isfinite(chance)
            axis.hlines(
                chance[kept],
                where[kept] - width / 2,
                where[kept] + width / 2,
                colors="black",
                linestyles="dashed",
                linewidth=1.2,
                label="_chance" if chance_drawn else "chance",  # "_": not in the legend
                gid="chance",
            )
            chance_drawn = chance_drawn or bool(kept.any())
    axis.set_xticks(np.arange(len(relations)), relations)
    pooled = " (all: every relation's prompts)" if ALL in relations else ""
    axis.set_xlabel(f"relation{pooled}")
    axis.set_ylabel(f"mAP over {over}" if metric is None else f"{metric.label}, by generation")
    axis.grid(axis="y", alpha=0.3)
    named = "mean average precision" if metric is None else metric.label
    # two short lines over the bars: one long line ran past them, under the legend
    axis.set_title(
        f"Elicitation: {named} by relation\n(bars: 95% bootstrap interval over concepts)",
        fontsize="medium",
    )
    # the legend beside the bars, so that a caption under it all (say_under) overlaps nothing
    figure.legend(loc="outside right upper", fontsize="small")
    say_under(figure, caption)
    return figure
