"""What elicitation by generation reports (the norming task's metrics: tacit.probes.elicit.
generated computes them), and how to tell a run of it from its manifest; declared apart from
the metrics' code so that the probe's declaration loads no numpy or pandas (the docs build
imports it without them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tacit.probes.base import Metric

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest

# what a run by generation reports, as the probe's declared metrics (Probe.as_run)
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
    Metric("precision", "precision", True, "precision_ci_low", "precision_ci_high"),
    Metric(
        "spearman_mean",
        "Spearman",
        True,
        "spearman_mean_ci_low",
        "spearman_mean_ci_high",
        row="spearman",
        chance="spearman_chance",
    ),
)


def by_generation(manifest: Manifest | Mapping[str, Any] | None) -> bool:
    """Was the run asked in words (its manifest's options say `by: generation`)?"""
    options = dict(manifest or {}).get("options") or {}
    return isinstance(options, Mapping) and options.get("by") == "generation"
