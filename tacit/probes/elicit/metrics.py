"""Elicitation's metrics, declared once (tacit.probes.base.Metric): by scoring, mean average
precision over the candidates and over the relation's answers and Spearman's rho; asked in
words, the norming task's (tacit.probes.elicit.generated). Light: the chance levels' functions
import their arrays' library when a summary calls them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tacit.probes.base import Metric

if TYPE_CHECKING:
    import pandas as pd


def _chance_ap(among: str) -> Any:
    """The exact expected AP of a uniformly random ranking of a prompt's N candidates with its
    `n_gold` answers among them; N: its `n_candidates` (spans) or the shared vocabulary's
    size (`among` `candidates`), or the relation's answers (`sensible`); NaN where unknown."""

    def of(rows: pd.DataFrame, context: Mapping[str, Any]) -> Any:
        import numpy as np
        import pandas as pd

        from tacit.core.metrics import chance_average_precision

        if among == "sensible":
            n = rows["relation"].map(dict(context.get("n_sensible") or {})).astype(float)
        elif "n_candidates" in rows:
            n = rows["n_candidates"].astype(float)
        else:
            size = context.get("n_candidates")
            n = pd.Series(np.nan if size is None else float(size), index=rows.index)
        return chance_average_precision(rows["n_gold"], n)

    return of


MAP_VOCAB = Metric(
    "map_vocab",
    "mAP",
    True,
    "map_vocab_ci_low",
    "map_vocab_ci_high",
    "n_concepts",
    row="ap_vocab",
    chance="map_vocab_chance",
    chance_of=_chance_ap("candidates"),
)
MAP_SENS = Metric(
    "map_sens",
    "mAP (sensitive)",
    True,
    "map_sens_ci_low",
    "map_sens_ci_high",
    row="ap_sens",
    chance="map_sens_chance",
    chance_of=_chance_ap("sensible"),
)
SPEARMAN = Metric(
    "spearman_mean",
    "Spearman",
    True,
    "spearman_ci_low",
    "spearman_ci_high",
    row="spearman",
    chance="spearman_chance",
    chance_of=0.0,  # answers that ignore the norms are ranked alike whatever a feature's pf
)
# asked in words, the norming task's (recall and precision have no chance level: words are open)
LISTING_PRIMARY = Metric(
    "recall_pf",
    "recall (pf-weighted)",
    True,
    "recall_pf_ci_low",
    "recall_pf_ci_high",
    "n_concepts",
    row="recall_pf",
)
LISTING_METRICS = (
    Metric("recall", "recall", True, "recall_ci_low", "recall_ci_high", row="recall"),
    Metric("precision", "precision", True, "precision_ci_low", "precision_ci_high", of="precision"),
    Metric(
        "spearman_mean",
        "Spearman",
        True,
        "spearman_mean_ci_low",
        "spearman_mean_ci_high",
        row="spearman",
        chance="spearman_chance",
        chance_of=0.0,
    ),
)
