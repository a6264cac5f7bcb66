"""How surprisal runs are shown: a table of every text together, one row per model (and each
text, for a run of a few)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from tacit.probes.report import Report

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.display import Table
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome
    from tacit.probes.surprisal.options import SurprisalManifest, SurprisalModelRecord


class SurprisalReport(Report):
    rows_file = "surprisal.csv"
    sample_columns = ("text", None)

    def table(
        self, summary: pd.DataFrame, manifest: Manifest | None = None, **_: Any
    ) -> list[Table]:
        from tacit.probes.surprisal.scoring import surprisal_tables

        return surprisal_tables(summary)

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        """The table, how many texts and how rows are cut, and notes on blank lines skipped
        and tokens scored as the tokenizer's unknown token."""
        from tacit.ask.spans import masked_ran
        from tacit.core.display import render
        from tacit.core.numbers import counted
        from tacit.probes.run_notes import run_notes
        from tacit.probes.surprisal.scoring import surprisal_tables

        run = cast("SurprisalManifest", manifest)
        texts = run["texts"]
        text = render(surprisal_tables(outcome.summary)).rstrip()
        text += f"\n{counted(texts['n_texts'], 'text', 'texts')}, rows by {run['by']}"
        if masked_ran(manifest):
            text += f"; masked models: pseudo-log-likelihood {run['pll']}"
        notes = run_notes(manifest)
        if texts["blank_lines_skipped"]:
            skipped = counted(texts["blank_lines_skipped"], "blank line", "blank lines")
            notes.append(f"note: {skipped} of the file skipped")
        notes += [
            f"note: {r['name']}: {counted(n, 'unknown token', 'unknown tokens')} scored as its "
            "tokenizer's unknown token"
            for r in cast("list[SurprisalModelRecord]", manifest["models"])
            if (n := r.get("unknown_tokens", 0))
        ]
        return text, notes

    def brief(self, manifest: Manifest) -> list[tuple[str, str]]:
        texts = cast("SurprisalManifest", manifest).get("texts") or {}
        return [
            ("texts", f"{texts.get('name') or texts.get('given')} ({texts.get('n_texts')})"),
            ("rows", f"by {manifest.get('by')}, masked models' PLL {manifest.get('pll')}"),
        ]
