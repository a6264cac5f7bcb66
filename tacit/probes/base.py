"""The contract every probe keeps, and what it hands the engine and the results.

A probe is a package under tacit/probes/ with one Probe subclass, registered by name in
tacit.probes.registry. It declares once its options (tacit.core.params.Options), the Asks it
takes, `plan` (before any model loads) and `finish` (rows to an Outcome), its metrics
(`Metric`: data for the one summarise step), its keys and conditions, and what makes two runs
comparable. Nothing outside its package and the registry names a probe; probe modules that
build prompts import neither torch nor transformers. docs/extending.md walks through one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from tacit.ask.base import Work
from tacit.core.manifest import Manifest, ModelRecord
from tacit.core.options import RUN_OPTION_GROUPS
from tacit.core.params import Options, Param

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from tacit.ask.base import Ask, AskSpec
    from tacit.core.options import Planning
    from tacit.core.params import Context
    from tacit.models.base import RunModel
    from tacit.norms import NormSet
    from tacit.vocab.shared import Vocabulary


@dataclass
class Plan:
    """What a probe prepared before any model loads.

    work: what every model scores (None: nothing is scored by a model, e.g. released
        predictions, whose rows and records are `given`).
    values: the run's options, checked (Probe.validate): an instance of the probe's Options.
    ask: how the blanks are asked (tacit.ask.base.Ask: the shared vocabulary, candidate
        spans, answers in words); a resumed run must have asked the same way (its key joins
        `resume_key`).
    resume_key: what else a resumed run must match.
    manifest: the probe's manifest keys known before scoring.
    state: anything the probe keeps for `finish`.
    given: (rows, model records) where no model scores anything.
    usual: the usual way of doing the same work, for `--dry-run` to count and time beside the
        plan's: (what it is, the sentences it costs a model).
    """

    work: Work | None
    values: Any = None
    ask: Ask | None = None
    resume_key: Mapping[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    state: Any = None
    given: tuple[pd.DataFrame, list[ModelRecord]] | None = None
    usual: tuple[str, int] | None = None

    @property
    def asked(self) -> Ask:
        """The plan's Ask (a plan that asks its blanks one way)."""
        assert self.ask is not None, "this plan asks nothing of a model's blanks"
        return self.ask

    def __post_init__(self) -> None:
        """The Ask's resume key, wired in: a probe cannot forget it."""
        if self.ask is not None:
            self.resume_key = {**self.ask.resume_key(), **self.resume_key}


@dataclass
class Outcome:
    """What a run produced, for its ProbeResult and run directory: its rows and summary, its
    manifest keys, further tables (`extra`), files and figures, the vocabulary it ranked over.
    How it is printed is its probe's Report's (Report.printed)."""

    rows: pd.DataFrame
    summary: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)
    figures: dict[str, Callable[[], bytes]] = field(default_factory=dict)
    vocab: Vocabulary | None = None


@dataclass(frozen=True)
class Metric:
    """A probe's metric, declared once: its summary column and label, which way is better,
    its interval's columns, the column counting the units it is a mean over, the rows-file
    column holding its value per prompt (`row`: an export's per-sample score), the column
    naming each row's metric in a long-form summary (`named_by`: NLI's), and its chance
    level's column. For the summarise step (tacit.probes.summary): what is averaged (`of`: a
    rows column or (rows, context) -> values; default `row`), and its chance level
    (`chance_of`: a number, or (rows, context) -> each row's, averaged). `aggregation`: how
    its value comes from the units, as lm-eval's metric_list says it: `mean` over them, or
    `corpus`, computed over the whole (RSA over every pair of concepts)."""

    column: str
    label: str
    greater_is_better: bool = True
    low: str | None = None
    high: str | None = None
    count: str | None = None
    row: str | None = None
    named_by: str | None = None
    chance: str | None = None
    of: str | Callable[[pd.DataFrame, Mapping[str, Any]], Any] | None = None
    chance_of: float | Callable[[pd.DataFrame, Mapping[str, Any]], Any] | None = None
    aggregation: str = "mean"


# how compare_wholes tests a difference where it resamples the units with replacement, the
# same draws for both models (`probe compare` says so in its note)
PAIRED_BOOTSTRAP = "paired bootstrap"


@dataclass(frozen=True)
class Whole:
    """One model of a run, for comparing a primary metric computed over the whole (its
    `aggregation` is `corpus`: not a mean over units): its value over all of its units, as
    summary.csv holds it, and what the probe needs to compute it again on fewer (`data`)."""

    value: float
    data: Any


# a condition of a run (Probe.conditions): its label, and its summary rows (one per model)
Condition = tuple[str, "pd.DataFrame"]


OptionsT = TypeVar("OptionsT", bound=Options)


class Probe(ABC, Generic[OptionsT]):
    """A probe (see the module docstring). Subclasses are stateless: one instance serves
    every run."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line
    help: ClassVar[str] = ""  # what `probe NAME --help` says after the description
    options: type[OptionsT]  # its options, declared once (a frozen dataclass)
    primary: ClassVar[Metric]
    keys: ClassVar[tuple[str, ...]]  # summary columns that identify a row, model first
    # the groups of shared run options it takes (tacit.core.options.RUN_OPTION_GROUPS; `limit`
    # comes with `limit`, below)
    run_options: ClassVar[frozenset[str]] = frozenset(RUN_OPTION_GROUPS) - {"limit"}
    metrics: ClassVar[tuple[Metric, ...]] = ()  # the summary's further metrics (exports, logs)
    # the ways it asks its blanks (tacit.ask.options.ASKS), the one its options choose first
    asks: ClassVar[tuple[AskSpec, ...]] = ()
    # how its runs are shown (files, tables, figures, a report's brief): "module:Class", a
    # Report (tacit.probes.report.report_of)
    report_class: ClassVar[str] = "tacit.probes.report:Report"
    # what it records beyond every run's keys: of the run (a TypedDict extending Manifest)
    # and of each model (one extending ModelRecord: what its work counts, its own keys)
    manifest_keys: ClassVar[type[Manifest]] = Manifest
    model_keys: ClassVar[type] = ModelRecord
    # what `--limit N` takes the first N of (`concepts`, `items`, ...): the probe's plan
    # applies it (RunOptions.limit); None: the probe has nothing to limit, and refuses it
    limit: ClassVar[str | None] = None
    # what its intervals resample and `probe compare` pairs models over, in the plural
    units: ClassVar[str] = "concepts"
    models_required: ClassVar[bool] = True
    # `--model`'s help where the probe's own differs (None: tacit.models.families.model_help)
    models_help: ClassVar[str | None] = None

    def takes(self) -> frozenset[str]:
        """The groups of shared run options it takes (tacit.core.options.RUN_OPTION_GROUPS):
        its `run_options`, and `--limit` where it has something to limit."""
        return self.run_options | ({"limit"} if self.limit is not None else set())

    @property
    def params(self) -> tuple[Param, ...]:
        """The probe's options as declared, in order."""
        return self.options.params()

    def validate(
        self, given: Mapping[str, Any], *, context: Context = "api", where: str = ""
    ) -> OptionsT:
        """Every option's value, checked as declared (tacit.core.params.validate)."""
        return self.options.validate(given, context=context, where=where, owner=self.name)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    @abstractmethod
    def plan(self, models: Sequence[RunModel], values: OptionsT, run: Planning) -> Plan:
        """Everything that can be done before a model loads: read the inputs, build the
        prompts and candidates; bad input fails here, before the slow part."""

    @abstractmethod
    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        """The scored rows of every model -> summary, report, notes, figures and the
        manifest's own keys (`manifest` holds the shared keys and the plan's)."""

    def conditions(
        self, summary: pd.DataFrame, manifest: Manifest, **options: Any
    ) -> list[Condition]:
        """The run's conditions as (label, summary rows: one per model), the main one first
        (what a leaderboard shows; the others are its extra columns when asked). `options`
        are the probe's own (retrieval's `n_props`); a probe ignores those it does not take.
        By default one condition, every row (a probe with one row per model needs no more)."""
        return [("", summary)]

    def as_run(self, manifest: Manifest) -> Probe[OptionsT]:
        """The probe as the run of this manifest reports (its metrics may depend on how it
        ran: elicitation by generation reports recall, not average precision)."""
        return self

    def main_rows(self, summary: pd.DataFrame, manifest: Manifest, **options: Any) -> pd.DataFrame:
        """The summary rows of the main condition: one per model."""
        return self.conditions(summary, manifest, **options)[0][1]

    def main_scores(
        self, rows: pd.DataFrame, manifest: Manifest, **options: Any
    ) -> pd.DataFrame | None:
        """The primary metric per prompt of the main condition, from the run's rows file:
        columns `model`, `unit` (what is resampled: the concept) and `value`; their mean per
        model is the main condition's value in summary.csv. What model comparisons test
        (tacit.results.comparisons); None where the probe has no such scores."""
        return None

    def whole(self, directory: Path, manifest: Manifest, model: str) -> Whole | None:
        """For a primary metric computed over the whole (`aggregation` corpus): one model of
        the run in `directory`, as compare_wholes pairs it (None: it has nothing to compare,
        or the probe has no such metric)."""
        return None

    def compare_wholes(
        self, a: Whole, b: Whole, *, seed: int, n_resamples: int, confidence: float
    ) -> dict[str, Any]:
        """Two models' primary metric (each a `whole`) compared on the units both have, for
        `probe compare`: value_a, value_b, difference (a - b), ci_low, ci_high, p_value,
        n_units, units_left_out, test (how it was tested, in words) and patterns (the draws
        counted)."""
        raise NotImplementedError(f"{self.name}: no comparison of whole-run metrics")

    def headline(self, summary: pd.DataFrame, manifest: Manifest) -> dict[str, float]:
        """The primary metric at the main condition, one value per model (the mean over its
        main rows): what a leaderboard, a result's short form and a training log show."""
        rows = self.main_rows(summary, manifest)
        column = self.primary.column
        if column not in rows:
            return {}
        return {
            str(model): float(group[column].mean())
            for model, group in rows.groupby("model", sort=False)
        }

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        """What must match for two runs of this probe to stand side by side (in one table,
        figure, report, leaderboard or comparison), each as a short printable value."""
        return {}

    def estimate(self, values: OptionsT) -> int | None:
        """At most how many prompts a run with these options scores per model, from its inputs
        alone (no model); None where that cannot be told without the models."""
        return None

    def keeps(self, norms: NormSet, vocab: Vocabulary) -> str | None:
        """What a run would keep of these norms with this shared vocabulary, and why the rest
        is left out (`probe norms show --model`); None for a probe that reads no norms."""
        return None
