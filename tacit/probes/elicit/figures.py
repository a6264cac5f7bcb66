"""The figure of elicitation runs: mAP over the vocabulary (or the candidates) by relation, a
bar per model, prefix and run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.core.labels import model_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def elicitation_figure(runs: Sequence[tuple[str, pd.DataFrame, Any]]) -> Figure:
    """Bars of mAP by relation for (run name, summary, manifest) of one or more runs."""
    from matplotlib.figure import Figure

    summary = pd.concat([table.assign(run=name) for name, table, _ in runs])
    figure = Figure(figsize=(8, 3.6), layout="constrained")
    axis = figure.subplots()
    table = summary.pivot_table(index="relation", columns=["run", "model", "prefix"],
                                values="map_vocab", sort=False)  # fmt: skip
    table.columns = [f"{model_label(m)} ({r}, prefix {p})" if len(runs) > 1 else
                     f"{model_label(m)}, prefix {p}" for r, m, p in table.columns]  # fmt: skip
    table.plot.bar(ax=axis, rot=0)
    axis.set_ylabel("mAP over the shared vocabulary")
    axis.legend(fontsize="small")
    return figure
