"""Retrieval's metrics, declared once (tacit.probes.base.Metric): what each averages and its
chance level, for the probe's declaration and its summary (tacit.probes.retrieve.summary).
Light: the functions import their arrays' library when a summary calls them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tacit.probes.base import Metric

if TYPE_CHECKING:
    import pandas as pd


def _among(rows: pd.DataFrame, context: Mapping[str, Any]) -> Any:
    """Each prompt's number of candidates: its own (candidate spans), else the shared
    vocabulary's size (`n_candidates`); NaN where neither says (asked in words)."""
    import pandas as pd

    if "n_candidates" in rows:
        return rows["n_candidates"].astype(float)
    n = context.get("n_candidates")
    return pd.Series(float("nan") if n is None else float(n), index=rows.index)


def _hits(k: int) -> Any:
    def of(rows: pd.DataFrame, _: Any) -> Any:
        from tacit.core.metrics import hits_at_k

        return hits_at_k(rows["rank"], k)

    return of


def _chance_hits(k: int) -> Any:
    def of(rows: pd.DataFrame, context: Mapping[str, Any]) -> Any:
        from tacit.core.metrics import chance_hits_at_k

        return chance_hits_at_k(_among(rows, context), k)

    return of


def _chance_rr(rows: pd.DataFrame, context: Mapping[str, Any]) -> Any:
    from tacit.core.metrics import chance_reciprocal_rank

    return chance_reciprocal_rank(_among(rows, context))


HITS_K = 10  # hits@k: the target among the first k
# the summary's metrics, each with its chance level: what a uniformly random ranking of a
# prompt's N candidates scores, H_N / N, 1 / N and min(k, N) / N
MRR = Metric(
    "mrr",
    "MRR",
    True,
    "mrr_ci_low",
    "mrr_ci_high",
    "n_concepts",
    row="reciprocal_rank",
    chance="mrr_chance",
    chance_of=_chance_rr,
)
P_AT_1 = Metric(
    "p_at_1",
    "P@1",
    True,
    "p_at_1_ci_low",
    "p_at_1_ci_high",
    "n_concepts",
    of=_hits(1),
    chance="p_at_1_chance",
    chance_of=_chance_hits(1),
)
HITS_AT_10 = Metric(
    f"hits_at_{HITS_K}",
    f"hits@{HITS_K}",
    True,
    f"hits_at_{HITS_K}_ci_low",
    f"hits_at_{HITS_K}_ci_high",
    of=_hits(HITS_K),
    chance=f"hits_at_{HITS_K}_chance",
    chance_of=_chance_hits(HITS_K),
)
TARGET_PROB = Metric(
    "mean_target_prob",
    "mean target probability",
    True,
    "target_prob_ci_low",
    "target_prob_ci_high",
    row="target_prob",
)
TARGET_PROB_SHARED = Metric(
    "mean_target_prob_shared", "over the shared vocabulary", row="target_prob_shared"
)
