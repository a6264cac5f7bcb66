"""How surprisal runs are shown: a table of every text together, one row per model (and each
text, for a run of a few)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from tacit.probes.report import Report

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.display import Table
    from tacit.core.manifest import Manifest
    from tacit.probes.surprisal.options import SurprisalManifest


class SurprisalReport(Report):
    rows_file = "surprisal.csv"
    sample_columns = ("text", None)

    def table(
        self, summary: pd.DataFrame, manifest: Manifest | None = None, **_: Any
    ) -> list[Table]:
        from tacit.probes.surprisal.scoring import surprisal_tables

        return surprisal_tables(summary)

    def brief(self, manifest: Manifest) -> list[tuple[str, str]]:
        texts = cast("SurprisalManifest", manifest).get("texts") or {}
        return [
            ("texts", f"{texts.get('name') or texts.get('given')} ({texts.get('n_texts')})"),
            ("rows", f"by {manifest.get('by')}, masked models' PLL {manifest.get('pll')}"),
        ]
