"""How an items run is shown: its rows are the items' candidates, each item's text and answer
the sample an export gives, and the candidates' tokens a further table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tacit.probes.report import Report

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome


class ItemsReport(Report):
    sample_columns = ("text", "answer")
    extra_tables = {
        "tokens.csv": "Each candidate's tokens and their log-probabilities",
        "answers.csv": "Each answer a model gave, read as a letter or an option's text",
        "letters.csv": "The letters answered against the right letters, per model",
    }

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        """Accuracy, MRR and P@k per group (items_report), then how many items and
        candidates, and how the spans were scored."""
        from tacit.ask.spans import span_scoring_said
        from tacit.probes.items.scoring import items_report
        from tacit.probes.run_notes import run_notes

        counts = manifest["counts"]
        if "generation" in manifest:  # multiple choice by generation
            from tacit.probes.items.choice import choice_report

            text = choice_report(outcome.summary, outcome.extra["letters"])
            text += f"\n{counts['items']} items, {counts['candidates']} options, shuffled per item"
            return text, run_notes(manifest)
        text = items_report(outcome.summary, manifest["options"]["k"])
        said = span_scoring_said(manifest)
        text += f"\n{counts['items']} items, {counts['candidates']} candidates; {said}"
        return text, run_notes(manifest)
