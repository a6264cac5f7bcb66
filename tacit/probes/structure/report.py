"""How structure runs are shown: the summary, one row per matrix compared, and the notes."""

from __future__ import annotations

from typing import ClassVar

from tacit.probes.report import Report


class StructureReport(Report):
    extra_tables: ClassVar[dict[str, str]] = {
        "rsa.csv": "Spearman's rho of the similarity structures, over all concepts, each "
        "domain and category, with intervals, chance and the Mantel p-value",
        "ceiling.csv": "the people's split-half ceiling (Spearman-Brown)",
        "verification.csv": "feature verification: AUC, F1, F1 selectivity (Brier, ECE)",
        "categories.csv": "neighbours, purity and adjusted Rand index of each matrix",
        "prior.csv": "how much of the ranking is the same for every concept",
    }
    sample_columns: ClassVar[tuple[str | None, str | None]] = ("prompt", None)
