"""Figures of retrieval runs: MRR and mean target probability against number of properties.

Which figure is drawn follows from what the runs contain: several categories -> one line per
category (the paper's Figure 3a); several selection x order conditions -> one line per
condition with the random baseline dashed (Figure 3b); otherwise one line per model
(Figure 2). With several models, the first two get one panel per model (a row each, MRR
beside the mean target probability). Bands are the bootstrap intervals of summary.csv.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.labels import model_label
from tacit.core.option_names import option

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KINDS = ("auto", "models", "category", "ordering")
_PANELS = [
    ("mrr", "mrr_ci_low", "mrr_ci_high", "MRR"),
    ("mean_target_prob", "target_prob_ci_low", "target_prob_ci_high", "mean target probability"),
]
_CATEGORY_ORDER = ["all", "visual", "functional", "encyclopaedic"]
_ORDERING = [
    ("top", "decreasing"),
    ("top", "increasing"),
    ("bottom", "decreasing"),
    ("bottom", "increasing"),
    ("random", "random"),
]


def _ordering_rank(condition: tuple[str, str]) -> int:
    return _ORDERING.index(condition) if condition in _ORDERING else len(_ORDERING)


def figure_kind(summary: pd.DataFrame) -> str:
    """`category`, `ordering` or `models`, from the conditions the summary holds."""
    if summary["category"].nunique() > 1:
        return "category"
    if summary[["selection", "order"]].drop_duplicates().shape[0] > 1:
        return "ordering"
    return "models"


def _condition_label(selection: str, order: str) -> str:
    if selection == "random" and order == "random":
        return "random baseline"
    return f"{selection} PF, {order}"


def _lines(summary: pd.DataFrame, kind: str) -> list[tuple[str, str, pd.DataFrame]]:
    """(panel title, line label, rows) for every line to draw."""
    several_runs = summary.groupby("model")["run"].nunique().max() > 1
    lines = []
    for (model, run), rows in summary.groupby(["model", "run"], sort=False):
        name = model_label(model) + (f" ({run})" if several_runs else "")
        if kind == "models":
            conditions = rows.groupby(["selection", "order", "category"], sort=False)
            for (selection, order, category), cond in conditions:
                label = name
                if conditions.ngroups > 1:
                    label += f": {_condition_label(selection, order)}, {category}"
                lines.append(("", label, cond))
        elif kind == "category":
            for category in sorted(rows["category"].unique(), key=_category_rank):
                lines.append((name, category, rows[rows["category"] == category]))
        else:
            conditions = rows.groupby(["selection", "order"], sort=False)
            for (sel, order), cond in sorted(conditions, key=lambda c: _ordering_rank(c[0])):
                lines.append((name, _condition_label(sel, order), cond))
    return lines


def _category_rank(category: str) -> int:
    return _CATEGORY_ORDER.index(category) if category in _CATEGORY_ORDER else len(_CATEGORY_ORDER)


FIGURE_WIDTH = 10.0  # inches: 1,500 px at 150 dpi, text readable when a page shows it at 1,000


def retrieval_figure(summary: pd.DataFrame, *, kind: str = "auto", caption: str = "") -> Figure:
    """The figure of a retrieval summary (one or more runs, a `run` column telling them
    apart): Figure 2, 3a or 3b of the paper, chosen from what the summary holds. One row per
    panel (a model, or a model of a run), MRR beside the mean target probability, each row
    with its own legend listing every line; a panel with nothing to draw says why."""
    if kind not in KINDS:
        raise TacitError(f"{option('--kind')} {kind!r}: expected one of {', '.join(KINDS)}")
    if "run" not in summary.columns:
        summary = summary.assign(run="")
    from matplotlib.figure import Figure

    from tacit.probes.figures import say_under

    kind = figure_kind(summary) if kind == "auto" else kind
    lines = _lines(summary.sort_values("n_props"), kind)
    panels = list(dict.fromkeys(title for title, _, _ in lines))
    figure = Figure(figsize=(FIGURE_WIDTH, 2.9 * len(panels) + 1.0), layout="constrained")
    axes = figure.subplots(len(panels), 2, squeeze=False)
    for row, panel in enumerate(panels):
        for title, label, rows in lines:
            if title == panel:
                _draw_line(axes[row], label, rows)
        for column, (value, _, _, ylabel) in enumerate(_PANELS):
            ax = axes[row][column]
            ax.set_ylabel(ylabel)
            ax.set_xlabel("number of properties in the prompt")
            ax.xaxis.get_major_locator().set_params(integer=True)
            ax.grid(alpha=0.3)
            if panel:
                ax.set_title(panel, fontsize="medium")
            if not any(rows[value].notna().any() for t, _, rows in lines if t == panel):
                why = _why_empty(value, [rows for t, _, rows in lines if t == panel])
                ax.text(
                    0.5,
                    0.5,
                    f"no {ylabel} to draw{why}",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    color="0.35",
                )
        axes[row][1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    headings = {
        "models": "Concept retrieval by model",
        "category": "Concept retrieval by property category",
        "ordering": "Concept retrieval by property selection and order",
    }
    figure.suptitle(
        headings[kind] + " (bands: 95% bootstrap interval over concepts)", fontsize="large"
    )
    say_under(figure, caption)
    return figure


def _why_empty(value: str, panel: list[pd.DataFrame]) -> str:
    """Why a panel has nothing to draw: for the target probability, the reasons the runs'
    manifests give (summary.why_no_probability, in a `why_no_probability` column), else that
    the scores are no probabilities of the concept alone."""
    from tacit.probes.retrieve.summary import WHY_NO_PROBABILITY

    if value != "mean_target_prob":
        return ""
    given = [rows[WHY_NO_PROBABILITY] for rows in panel if WHY_NO_PROBABILITY in rows]
    reasons = list(dict.fromkeys(str(w) for c in given for w in c.dropna()))
    said = "\n".join(reasons) or "no probabilities of the concept alone"
    return f":\nthe scores are not probabilities\n({said})"


def _draw_line(axes: object, label: str, rows: pd.DataFrame) -> None:
    """One line (and its band) in each of a row's two panels."""
    baseline = label == "random baseline"
    style = {"linestyle": "--", "color": "0.35"} if baseline else {}
    for ax, (value, low, high, _) in zip(axes, _PANELS):  # type: ignore[call-overload]
        ax.plot(rows["n_props"], rows[value], marker="o", markersize=3, label=label, **style)
        if low in rows and rows[low].notna().any():
            ax.fill_between(
                rows["n_props"], rows[low], rows[high], alpha=0.2, color=ax.lines[-1].get_color()
            )
