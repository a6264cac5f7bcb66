"""A figure per analysis, drawn from its table (matplotlib's Figure, no pyplot state, so the
Agg canvas draws it anywhere; matplotlib is imported when a figure is drawn, never before)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CHANCE = "0.8"  # chance's band, grey


def figure_png(figure: Figure) -> bytes:
    """The figure as a .png file's bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=150, format="png")
    return buffer.getvalue()


def _legend(axis: Axes, **options: Any) -> None:
    """The legend, where something is drawn; else the axes say there is nothing to show
    (matplotlib would warn of an empty legend, and the figure would look broken)."""
    handles, _ = axis.get_legend_handles_labels()
    if handles:
        axis.legend(**options)
    else:
        said = "no values to show (see the tables)"
        axis.text(0.5, 0.5, said, transform=axis.transAxes, ha="center", va="center")


def _intervals(
    axis: Axes,
    table: pd.DataFrame,
    labels: Sequence[str],
    *,
    offset: float = 0.0,
    label: str = "",
    color: str | None = None,
) -> None:
    """Points with their intervals (one a row, top to bottom) and chance's band behind."""
    y = np.arange(len(table))[::-1] + offset
    value = table["value"].to_numpy(dtype=float)
    low, high = table["ci_low"].to_numpy(dtype=float), table["ci_high"].to_numpy(dtype=float)
    for yi, lo, hi in zip(
        y, table["chance_low"].to_numpy(dtype=float), table["chance_high"].to_numpy(dtype=float)
    ):
        if np.isfinite(lo) and np.isfinite(hi):
            axis.fill_betweenx([yi - 0.3, yi + 0.3], lo, hi, color=CHANCE, linewidth=0)
    axis.errorbar(
        value,
        y,
        xerr=[value - low, high - value],
        fmt="o",
        capsize=3,
        label=label or None,
        color=color,
    )
    axis.set_yticks(np.arange(len(table))[::-1], labels)


def rsa_figure(table: pd.DataFrame, ceiling: pd.DataFrame | None = None, title: str = "") -> Figure:
    """RSA with its interval per scope (all, each domain, each category), chance (grey) and
    the people's split-half ceiling as a band (where there is one)."""
    from matplotlib.figure import Figure

    shown = table[table["value"].notna()]
    figure = Figure(figsize=(7, 1.2 + 0.28 * len(shown)), layout="constrained")
    axis = figure.subplots()
    labels = [
        g if s == "all" else f"{g} ({n})"
        for s, g, n in zip(shown["scope"], shown["group"], shown["n_concepts"])
    ]
    _intervals(axis, shown, labels)
    if ceiling is not None and np.isfinite(float(ceiling["reliability"].iloc[0])):
        row = ceiling.iloc[0]
        axis.axvspan(
            row["ci_low"],
            row["ci_high"],
            color="tab:green",
            alpha=0.3,
            label="people's ceiling (split-half, all concepts)",
        )
        axis.axvline(row["reliability"], color="tab:green")
    axis.axvline(0, color="black", linewidth=0.5)
    axis.set_xlabel("Spearman's rho of the similarity structures (grey: chance)")
    axis.set_title(title or "Representational similarity")
    if ceiling is not None:
        _legend(axis, loc="lower left", fontsize="small")
    return figure


def verification_figure(table: pd.DataFrame, title: str = "") -> Figure:
    """AUC, F1 and F1 selectivity by kind of negative, with intervals and chance (grey)."""
    from matplotlib.figure import Figure

    shown = table[table["metric"].isin(["auc", "f1", "f1_selectivity", "brier", "ece"])]
    figure = Figure(figsize=(7, 1.2 + 0.3 * len(shown)), layout="constrained")
    axis = figure.subplots()
    _intervals(axis, shown, [f"{m} ({k})" for k, m in zip(shown["negatives"], shown["metric"])])
    axis.set_xlabel("value (grey: chance, the concepts' scores permuted)")
    axis.set_title(title or "Feature verification")
    return figure


def reliability_figure(bins: pd.DataFrame, title: str = "") -> Figure:
    """The reliability diagram: share of positives against mean probability, bin by bin, per
    kind of negative; the diagonal is perfect calibration."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5, 5), layout="constrained")
    axis = figure.subplots()
    axis.plot([0, 1], [0, 1], color="black", linewidth=0.5)
    for kind, rows in bins.groupby("negatives", sort=False):
        kept = rows[rows["n_items"] > 0]
        axis.plot(kept["confidence"], kept["accuracy"], marker="o", label=str(kind))
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("mean probability in the bin")
    axis.set_ylabel("share listed by people")
    axis.set_title(title or "Reliability diagram")
    _legend(axis, title="negatives", fontsize="small")
    return figure


def category_figure(tables: dict[str, pd.DataFrame], title: str = "") -> Figure:
    """Neighbours, purity and adjusted Rand index, a row of points per matrix (name ->
    category_structure table), with intervals and chance (grey)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3), layout="constrained")
    axis = figure.subplots()
    for number, (name, table) in enumerate(tables.items()):
        _intervals(axis, table, list(table["metric"]), offset=0.15 * number, label=name)
    axis.set_xlabel("value (grey: chance, the categories permuted)")
    axis.set_title(title or "Category structure")
    _legend(axis, fontsize="small")
    return figure


def map_figure(maps: dict[str, pd.DataFrame], title: str = "") -> Figure:
    """The 2-D MDS maps side by side (name -> mds_map table), concepts coloured by group."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5 * len(maps), 5.5), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(maps)))
    groups = sorted({str(g) for m in maps.values() for g in m["group"] if g is not None})
    palette = colormaps["tab20"](np.arange(20))
    # a colour and a marker per group: 20 colours, then the next marker
    style = {g: (palette[i % 20], "os^D"[i // 20 % 4]) for i, g in enumerate(groups)}
    for axis, (name, table) in zip(axes, maps.items()):
        grouped = table["group"].map(lambda g: None if g is None else str(g))
        loose = grouped.isna()
        axis.scatter(table.loc[loose, "x"], table.loc[loose, "y"], color="0.6", s=8)
        for g in groups:
            mine = grouped == g
            color, marker = style[g]
            axis.scatter(
                table.loc[mine, "x"],
                table.loc[mine, "y"],
                color=color,
                marker=marker,
                s=12,
                label=g,
            )
        axis.set_title(name)
        axis.set_xticks([])
        axis.set_yticks([])
    if groups:
        handles, labels = axes[0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside right center", fontsize="x-small")
    figure.suptitle(title or "Concepts by classical MDS")
    return figure


def prior_figure(per_concept: pd.DataFrame, summary: pd.DataFrame, title: str = "") -> Figure:
    """Each concept's rho with the answer-space prior, as a histogram, with the mean and
    chance (grey)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 4), layout="constrained")
    axis = figure.subplots()
    rho = per_concept["rho"].dropna()
    axis.hist(rho, bins=30, color="tab:blue")
    row = summary.iloc[0]
    axis.axvspan(row["chance_low"], row["chance_high"], color=CHANCE)
    axis.axvline(row["value"], color="black", label=f"mean {row['value']:.3f}")
    axis.set_xlabel("Spearman's rho of a concept's feature scores and the prior")
    axis.set_ylabel("concepts")
    axis.set_title(title or "Answer-space prior")
    axis.legend(fontsize="small")
    return figure
