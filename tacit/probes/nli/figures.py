"""The figure of an NLI run: each breakdown of the summary as a panel of bars, per model, with
the spread over seeds and the paper's numbers beside them.

Drawn from summary.csv alone, so `probe nli` (nli.png), `probe report` and a reader's own script
draw the same figure. Percent metrics only (accuracies, shares); correlations stay in the table.
Breakdowns with more groups than a panel can show legibly (IMPPRES' hundreds of paradigms) are
left to the files, and the figure's caption says which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_BARS = 24  # groups x metrics in one panel, beyond which bars stop being readable


def percent_metric(metric: str) -> bool:
    """Accuracies and shares are drawn (in percent); correlations are not."""
    return not metric.startswith("spearman")


def nli_panels(summary: pd.DataFrame) -> tuple[list[tuple[str, pd.DataFrame]], list[str]]:
    """(title, rows) of each breakdown drawn, and the titles of those left out as too large."""
    drawn: list[tuple[str, pd.DataFrame]] = []
    left_out: list[tuple[str, pd.DataFrame]] = []
    for (section, breakdown), rows in summary.groupby(["section", "breakdown"], sort=False):
        rows = rows[rows["metric"].map(percent_metric)]
        if rows.empty:
            continue
        title = f"{section} [{breakdown}]"
        bars = rows.drop_duplicates(["group", "metric"])
        (drawn if len(bars) <= MAX_BARS else left_out).append((title, rows))
    return drawn, [title for title, _ in left_out]


def nli_figure(summary: pd.DataFrame, source: str = "") -> bytes:
    """nli.png: draw_nli's figure as PNG bytes."""
    from tacit.probes.figures import figure_bytes

    return figure_bytes(draw_nli(summary, source), "png")


def draw_nli(summary: pd.DataFrame, source: str = "") -> Figure:
    """One panel per breakdown, one bar per group (and metric) and model, the standard
    deviation over seeds as error bars, the paper's numbers as black ticks."""
    from matplotlib.figure import Figure

    panels, left_out = nli_panels(summary)
    if not panels:
        raise ValueError("the summary has no accuracy to draw")
    models = list(dict.fromkeys(summary["model"]))
    heights = [
        max(1.2, 0.28 * len(rows.drop_duplicates(["group", "metric"])) + 0.8) for _, rows in panels
    ]
    columns = 2 if len(panels) > 2 else 1
    per_column = _balanced(heights, columns)
    figure = Figure(
        figsize=(6.2 * columns, max(sum(h) for h in per_column) + 1.2), layout="constrained"
    )
    grid = figure.add_gridspec(1, columns)
    width = 0.8 / len(models)
    for column, indices in enumerate(_columns(heights, columns)):
        sub = grid[0, column].subgridspec(
            len(indices), 1, height_ratios=[heights[i] for i in indices]
        )
        for slot, index in enumerate(indices):
            title, rows = panels[index]
            axis = figure.add_subplot(sub[slot, 0])
            _draw_panel(axis, rows, models, width)
            axis.set_title(title, fontsize="medium", loc="left")
    legend: dict[str, Any] = {}
    for axis in figure.axes:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    handles, labels = list(legend.values()), list(legend)
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=min(4, len(labels)),
        fontsize="small",
        frameon=False,
    )
    caption = "Accuracy (%) by breakdown; error bars: sd over seeds"
    if left_out:
        caption += f"; in summary.csv only (too many groups): {', '.join(left_out)}"
    figure.suptitle(caption + (f"\n{source}" if source else ""), fontsize="small", wrap=True)
    return figure


def _draw_panel(axis, rows: pd.DataFrame, models: list[str], width: float) -> None:
    """Horizontal bars, first group on top; x from 0 to 100."""
    from tacit.core.labels import model_label

    bars = rows.drop_duplicates(["group", "metric"])[["group", "metric"]]
    several_metrics = bars["metric"].nunique() > 1
    labels = [
        f"{g} ({m.removeprefix('accuracy_')})" if several_metrics else g
        for g, m in bars.itertuples(index=False)
    ]
    positions = np.arange(len(bars))[::-1].astype(float)
    keyed = rows.set_index(["model", "group", "metric"])
    for n, model in enumerate(models):
        keys = [(model, g, m) for g, m in bars.itertuples(index=False)]
        value = np.array([keyed["value"].get(k, np.nan) for k in keys], dtype=float) * 100
        spread = np.array([keyed["sd"].get(k, np.nan) for k in keys], dtype=float) * 100
        offset = (n - (len(models) - 1) / 2) * width
        axis.barh(
            positions + offset,
            value,
            width,
            xerr=np.nan_to_num(spread),
            label=model_label(model),
            error_kw={"elinewidth": 0.8},
        )
    if "paper_value" in rows and rows["paper_value"].notna().any():
        paper = rows.drop_duplicates(["group", "metric"]).set_index(["group", "metric"])
        values = [
            100 * paper["paper_value"].get(tuple(k), np.nan) for k in bars.itertuples(index=False)
        ]
        axis.scatter(
            values,
            positions,
            marker="D",
            s=22,
            facecolor="white",
            edgecolor="black",
            zorder=3,
            label="paper",
        )
    axis.set_yticks(positions, labels, fontsize="small")
    axis.set_xlim(0, 100)


def _columns(heights: list[float], columns: int) -> list[list[int]]:
    """Panels split in order into `columns` runs of about equal total height."""
    if columns == 1:
        return [list(range(len(heights)))]
    total, running, split = sum(heights), 0.0, len(heights)
    for index, height in enumerate(heights):
        if running + height / 2 > total / 2:
            split = max(1, index)
            break
        running += height
    return [list(range(split)), list(range(split, len(heights)))]


def _balanced(heights: list[float], columns: int) -> list[list[float]]:
    return [[heights[i] for i in column] for column in _columns(heights, columns)]
