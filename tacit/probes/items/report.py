"""How an items run is shown: its rows are the items' candidates, each item's text and answer
the sample an export gives, and the candidates' tokens a further table."""

from __future__ import annotations

from tacit.probes.report import Report


class ItemsReport(Report):
    sample_columns = ("text", "answer")
    extra_tables = {"tokens.csv": "Each candidate's tokens and their log-probabilities"}
