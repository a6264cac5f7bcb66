"""The contract every probe keeps, and what it hands the engine and the results.

A probe is a package under tacit/probes/ with one Probe subclass, registered by name in
tacit.probes.registry. It declares, once:

- its name, a one-line description, and its options (tacit.core.params.Param: the API, the
  command line, sweep files and their validation all read them), and which shared run options
  it takes (`run_options`);
- the model kinds it can use for the options given (`kinds`);
- how it prepares its work before any model loads (`plan`: prompts, candidates, what a resumed
  run must match) and what it makes of the scored rows (`finish`: summary, printed report,
  notes, figures, the manifest's own keys);
- its primary metric and whether greater is better, the columns that identify a summary row,
  its conditions (`conditions`: the main one first, what a leaderboard shows), the primary
  metric per prompt of the main condition (`main_scores`, what model comparisons test), and
  what must match for two of its runs to stand side by side (`comparable`).

Nothing outside a probe's package and the registry names a probe: the engine runs a Plan's
Work, and results, reports, tables, leaderboards and sweeps ask the probe. Probe modules that
build prompts import neither torch nor transformers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.core.params import Param, validate

if TYPE_CHECKING:
    import pandas as pd
    from tqdm.auto import tqdm

    from tacit.core.display import Table
    from tacit.core.manifest import Manifest, ModelRecord
    from tacit.core.options import RunOptions
    from tacit.models.base import Scorer
    from tacit.norms import NormSet
    from tacit.vocab.shared import Vocabulary

# the shared run options a probe may do without (RunOptions fields by group)
RUN_OPTION_GROUPS = ("vocab", "seed", "resume")


@dataclass(frozen=True)
class Scored:
    """A chunk's result rows (same index as the rows given) and counts to add up over chunks
    (e.g. prompts cut to fit) for the model's record."""

    table: pd.DataFrame
    counts: Mapping[str, int] = field(default_factory=dict)


ScoreChunk = Callable[[Any, "pd.DataFrame", "tqdm"], "Scored | pd.DataFrame"]
Finish = Callable[[Any, "pd.DataFrame"], "tuple[pd.DataFrame, dict[str, Any]]"]


@dataclass(frozen=True)
class Work:
    """What a probe asks of every model (the engine's runner does it).

    rows: one row per thing to score, in output order.
    key: the column whose distinct values are scored once (rows are chunked on it).
    score: (scorer, a chunk's rows, progress bar) -> Scored (or just the result table); with
        `lazy`, it gets the model's handle instead, whose `scorer` loads the model on first use
        (so that a run whose features are all cached never loads it).
    kinds: the model kinds this probe can use (tacit.models.FAMILIES).
    finish: optional (model handle, all of its result rows) -> (result rows, record fields):
        work that needs every row of a model, such as calibration.
    unit: what the progress bar counts.
    load_options: kind -> keyword arguments for loading a model of that kind.
    hints: kind -> what to do instead, said when a model of that kind is refused.
    """

    rows: pd.DataFrame
    key: str
    score: ScoreChunk
    kinds: Sequence[str] = ("masked",)
    finish: Finish | None = None
    unit: str = "prompt"
    load_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    lazy: bool = False
    hints: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    """What a probe prepared before any model loads.

    work: what every model scores (None: nothing is scored by a model, e.g. released
        predictions, whose rows and records are `given`).
    values: the run's options, checked (Probe.validate).
    resume_key: what else a resumed run must match (vocabulary, candidates, ...).
    manifest: the probe's manifest keys known before scoring.
    state: anything the probe keeps for `finish`.
    tokenizers: tokenizers already loaded (for the shared vocabulary), reused by the models.
    given: (rows, model records) where no model scores anything.
    """

    work: Work | None
    values: Mapping[str, Any] = field(default_factory=dict)
    resume_key: Mapping[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    state: Any = None
    tokenizers: Mapping[str, Any] = field(default_factory=dict)
    given: tuple[pd.DataFrame, list[ModelRecord]] | None = None


@dataclass
class Outcome:
    """What a run produced, for its ProbeResult and run directory."""

    rows: pd.DataFrame
    summary: pd.DataFrame
    text: str
    notes: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    figures: dict[str, Callable[[], bytes]] = field(default_factory=dict)
    vocab: Vocabulary | None = None


@dataclass(frozen=True)
class Metric:
    """A probe's primary metric: its summary column, how it is printed, which way is better,
    the columns of its interval (if it has one), and the column counting the units (concepts,
    prompts, items) it is a mean over."""

    column: str
    label: str
    greater_is_better: bool = True
    low: str | None = None
    high: str | None = None
    count: str | None = None


# a condition of a run (Probe.conditions): its label, and its summary rows (one per model)
Condition = tuple[str, "pd.DataFrame"]


class Probe(ABC):
    """A probe (see the module docstring). Subclasses are stateless: one instance serves
    every run."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line
    help: ClassVar[str] = ""  # what `probe NAME --help` says after the description
    params: ClassVar[tuple[Param, ...]]
    primary: ClassVar[Metric]
    keys: ClassVar[tuple[str, ...]]  # summary columns that identify a row, model first
    run_options: ClassVar[frozenset[str]] = frozenset(RUN_OPTION_GROUPS)
    rows_file: ClassVar[str] = "prompts.csv"
    extra_tables: ClassVar[dict[str, str]] = {}  # further tables of a run, file -> what it holds
    figure_kinds: ClassVar[tuple[str, ...]] = ("auto",)  # the figures `probe plot --kind` draws
    # what `--limit N` takes the first N of (`concepts`, `items`, ...): the probe's plan
    # applies it (RunOptions.limit); None: the probe has nothing to limit, and refuses it
    limit: ClassVar[str | None] = None
    models_required: ClassVar[bool] = True
    models_help: ClassVar[str] = (
        "Model to probe: a Hugging Face hub name or a local directory, with its own loading "
        "options if any: NAME,KEY=VALUE,... (revision, dtype, trust_remote_code, "
        "attn_implementation, peft, load_in_8bit, load_in_4bit: see docs/models.md). Repeat "
        "for several."
    )

    def validate(
        self, given: Mapping[str, Any], *, context: str = "api", where: str = ""
    ) -> dict[str, Any]:
        """Every option's value, checked as declared (tacit.core.params.validate)."""
        return validate(
            self.params,
            given,
            context=context,  # type: ignore[arg-type]
            where=where,
            owner=self.name,
        )

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    @abstractmethod
    def kinds(self, values: Mapping[str, Any]) -> tuple[str, ...]:
        """The model kinds this probe can use with these options."""

    @abstractmethod
    def plan(
        self, models: Sequence[str | Scorer], values: Mapping[str, Any], run: RunOptions
    ) -> Plan:
        """Everything that can be done before a model loads: read the inputs, build the
        prompts and candidates; bad input fails here, before the slow part."""

    @abstractmethod
    def finish(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: RunOptions
    ) -> Outcome:
        """The scored rows of every model -> summary, report, notes, figures and the
        manifest's own keys (`manifest` holds the shared keys and the plan's)."""

    def verbose(self, summary: pd.DataFrame, manifest: Manifest) -> str | None:
        """The full breakdown a compact printed summary leaves to summary.csv (`--verbose`);
        None where the printed summary is all of it."""
        return None

    def conditions(
        self, summary: pd.DataFrame, manifest: Manifest, **options: Any
    ) -> list[Condition]:
        """The run's conditions as (label, summary rows: one per model), the main one first
        (what a leaderboard shows; the others are its extra columns when asked). `options`
        are the probe's own (retrieval's `n_props`); a probe ignores those it does not take.
        By default one condition, every row (a probe with one row per model needs no more)."""
        return [("", summary)]

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

    def estimate(self, values: Mapping[str, Any]) -> int | None:
        """At most how many prompts a run with these options scores per model, from its inputs
        alone (no model); None where that cannot be told without the models."""
        return None

    def keeps(self, norms: NormSet, vocab: Vocabulary) -> str | None:
        """What a run would keep of these norms with this shared vocabulary, and why the rest
        is left out (`probe norms show --model`); None for a probe that reads no norms."""
        return None

    def table(
        self, summary: pd.DataFrame, manifest: Manifest | None = None, **options: Any
    ) -> list[Table]:
        """The tables of the summaries of like-for-like runs of this probe (`probe table`, and
        a run's printed summary): `summary` holds their rows, models labelled so that two
        runs' rows do not clash, in the order of --model; `manifest` is one of theirs (they
        are like for like)."""
        from tacit.core.errors import TacitError

        raise TacitError(f"{self.name} runs have no table across runs: see their summary.csv")

    def figures(
        self,
        runs: Sequence[tuple[str, pd.DataFrame, Manifest]],
        *,
        kind: str = "auto",
        caption: str = "",
    ) -> list[tuple[str, Any]]:
        """(caption, matplotlib Figure) for one or more runs of this probe side by side
        ((run name, summary, manifest) each): what `probe report` and `probe plot` draw;
        `kind` picks one of the probe's figures, `caption` is said under it."""
        return []
