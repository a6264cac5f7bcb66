"""How a probe's runs are shown: the presentation half of a probe, apart from its core
(tacit.probes.base.Probe: plan, finish, metric, comparability). Each probe names its Report in
`report_class` ("module:Class", imported when a run is shown: report_of); the defaults suit a
probe with one summary row per model, its rows in prompts.csv and no figures. The results layer
(files, tables, plots, reports, notebooks, exports) asks the report, and nothing else, how a
run looks.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.core.errors import TacitError

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.display import Table
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome, Probe

# (run name, summary, manifest): a run as the figures and tables take it
ShownRun = tuple[str, "pd.DataFrame", "Manifest"]
CHANCE = "chance"  # the model column of a printed table's chance rows


def with_chance(
    rows: pd.DataFrame, chance: Mapping[str, str], by: Sequence[str] = ()
) -> pd.DataFrame:
    """A printed table's rows, then a row per distinct chance level (per `by`: a relation's
    own), `chance` in the model column and each metric's chance level in the metric's own
    column (`chance`: metric column -> its chance column in summary.csv), the other columns
    blank: what a uniformly random ranking of the candidates scores, read where its metric is,
    without widening the table. The chance columns are not shown themselves; a summary saved
    before they existed gets no chance row."""
    import pandas as pd

    present = {metric: column for metric, column in chance.items() if column in rows}
    if not present:
        return rows
    levels = (
        rows[[*by, *present.values()]]
        .drop_duplicates()
        .dropna(how="all", subset=[*present.values()])
    )
    added = pd.DataFrame(
        {
            "model": CHANCE,
            **{key: levels[key].to_numpy() for key in by},
            **{metric: levels[column].to_numpy() for metric, column in present.items()},
        },
        columns=rows.columns,
    )
    shown = pd.concat([rows, added], ignore_index=True) if len(added) else rows
    return shown.drop(columns=list(present.values())).infer_objects()  # counts stay numbers


class Report:
    """A probe's presentation (see the module docstring)."""

    rows_file: ClassVar[str] = "prompts.csv"  # the run's rows: one per prompt (and model)
    # the rows file's columns holding a prompt's text and its expected answer (an export's
    # sample arguments and target, tacit.results.lm_eval); None where the rows have none
    sample_columns: ClassVar[tuple[str | None, str | None]] = ("prompt", "target")
    extra_tables: ClassVar[dict[str, str]] = {}  # further tables of a run, file -> what it holds
    figure_kinds: ClassVar[tuple[str, ...]] = ("auto",)  # the figures `probe plot --kind` draws

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        """What a run prints (and its ProbeResult's `text`, `notes`): its summary in tables
        and words, and its notes, one line each (what was cut, left out, or is read with
        care), from what `finish` made and the run's whole manifest. The default: the summary
        as one table, and the notes every probe shares (tacit.probes.run_notes)."""
        from tacit.core.display import Table, render
        from tacit.probes.run_notes import run_notes

        return render(Table(outcome.summary)).rstrip(), run_notes(manifest)

    def verbose(self, summary: pd.DataFrame, manifest: Manifest) -> str | None:
        """The full breakdown a compact printed summary leaves to summary.csv (`--verbose`);
        None where the printed summary is all of it."""
        return None

    def table(
        self, summary: pd.DataFrame, manifest: Manifest | None = None, **options: Any
    ) -> list[Table]:
        """The tables of the summaries of like-for-like runs of this probe (`probe table`, and
        a run's printed summary): `summary` holds their rows, models labelled so that two
        runs' rows do not clash, in the order of --model; `manifest` is one of theirs (they
        are like for like)."""
        raise TacitError(f"{self.probe.name} runs have no table across runs: see their summary.csv")

    def figures(
        self, runs: Sequence[ShownRun], *, kind: str = "auto", caption: str = ""
    ) -> list[tuple[str, Any]]:
        """(caption, matplotlib Figure) for one or more runs of this probe side by side: what
        `probe report` and `probe plot` draw; `kind` picks one of the probe's figures,
        `caption` is said under it."""
        return []

    def figure_kind(self, runs: Sequence[ShownRun], kind: str) -> str:
        """The figure `kind` draws of these runs, `auto` resolved where the probe picks it
        from what they hold: `probe plot` names its file PROBE-KIND.png after it."""
        return "figure" if kind == "auto" else kind

    def brief(self, manifest: Manifest) -> list[tuple[str, str]]:
        """The run's inputs in brief, for a report's summary of its manifest: (what, value),
        beside what the run shares with like-for-like runs (Probe.comparable)."""
        return []

    def left_out(self, manifest: Manifest) -> list[str]:
        """What the run left out, one line each, from its manifest's counts."""
        return []


@cache
def report_of(probe: Probe) -> Report:
    """How a probe's runs are shown: its Report (`report_class`), imported and made once."""
    module, _, name = probe.report_class.partition(":")
    report: Report = getattr(importlib.import_module(module), name)(probe)
    return report
