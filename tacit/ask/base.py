"""The Ask protocol: one way of asking a model what fills a probe's blanks.

A probe names the Asks it takes; `choose` picks the one its options choose (`--by`,
`--candidates`) and refuses an option of another. An Ask plans before any model loads, scores
a chunk of prompts into plain fields (Answered) and finishes a run's rows into its files and
its record; the probe's Columns read the fields. docs/architecture.md has the rationale.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.core.registry import Registry

if TYPE_CHECKING:
    import pandas as pd
    from tqdm.auto import tqdm

    from tacit.core.manifest import ModelRecord
    from tacit.models.answers import Sampling
    from tacit.models.base import Needs, RunModel, Scorer
    from tacit.ranking.question import CandidateSet
    from tacit.templates import Template

# what an Ask's blank holds: one word of the shared vocabulary, or a phrase (article and all)
Form = Literal["word", "phrase"]


@dataclass(frozen=True)
class AskSpec:
    """An Ask as a probe takes it: its name (ASKS), the options of the probe's own it reads
    too (`extra`: retrieval's `articles` of its spans), those the manifest's options record,
    and for spans the names of the probe's own sets and how their files are written."""

    name: str
    extra: tuple[str, ...] = ()
    recorded: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    files: str = "sets"
    records_sets: bool = True


# every Ask by name, imported when a run plans
ASKS: Registry[type[Ask]] = Registry(
    "way of asking",
    {
        "vocabulary": "tacit.ask.vocabulary:VocabularyAsk",
        "spans": "tacit.ask.spans:SpanAsk",
        "words": "tacit.ask.words:WordsAsk",
    },
)


def asked_by(manifest: Mapping[str, Any] | None) -> Any:
    """The Ask a run's blanks were asked with, as its manifest records it (Ask.ran); None
    for a run that asked none."""
    for name in ASKS.names():
        ask = ASKS.get(name)
        if ask.ran(manifest or {}):
            return ask
    return None


def yielded(manifest: Mapping[str, Any] | None) -> str:
    """What a run's Ask gave its probe (Ask.yields): `ranks` among candidates, or `answers` in
    words; `ranks` for a run that asked none."""
    ask = asked_by(manifest)
    return ask.yields if ask is not None else "ranks"


@dataclass(frozen=True)
class Scored:
    """A chunk's result rows (under the index of the rows given: several result rows of one
    row given share its index, in order) and counts to add up over chunks (e.g. prompts cut to
    fit) for the model's record."""

    table: pd.DataFrame
    counts: Mapping[str, int] = field(default_factory=dict)


ScoreChunk = Callable[[Any, "pd.DataFrame", "tqdm"], "Scored | pd.DataFrame"]
AfterModel = Callable[[Any, "pd.DataFrame"], "tuple[pd.DataFrame, dict[str, Any]]"]


@dataclass(frozen=True)
class Work:
    """What a probe asks of every model (the engine's runner does it).

    rows: one row per thing to score, in output order.
    key: the column whose distinct values are scored once (rows are chunked on it).
    score: (scorer, a chunk's rows, progress bar) -> Scored (or just the result table); with
        `lazy`, it gets the model's handle instead, whose `scorer` loads the model on first use
        (so that a run whose features are all cached never loads it).
    needs: what every model must be able to answer (capabilities: tacit.models.base.Needs),
        checked before any weights load.
    after_model: optional (model handle, all of its result rows) -> (result rows, record fields):
        work that needs every row of a model, such as calibration.
    unit: what the progress bar counts.
    load_options: capability -> keyword arguments for loading a model that has it (an NLI
        classifier's label names, for `classify`).
    cost: rows -> the sentences each of their distinct keys costs a model (a Series indexed by
        key: a candidate span in a distinct prompt text is one sentence); None: one each.
        Checkpoint chunks are cut by it (a chunk holds about a minute of work), and `--dry-run`
        counts and times it.
    sampling: a plan by generation: how each row's question is asked (one request a row, its
        `n` completions of at most `max_tokens`), what `--dry-run` counts and bounds.
    """

    rows: pd.DataFrame
    key: str
    score: ScoreChunk
    needs: Needs
    after_model: AfterModel | None = None
    unit: str = "prompt"
    load_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    lazy: bool = False
    cost: Callable[[pd.DataFrame], pd.Series] | None = None
    sampling: Sampling | None = None

    def costs(self) -> pd.Series:
        """Sentences each distinct key costs a model, in the order of first appearance."""
        import pandas as pd

        keys = self.rows[self.key].drop_duplicates().to_numpy()
        if self.cost is None:
            return pd.Series(1, index=keys)
        return self.cost(self.rows).reindex(keys).astype(int)


@dataclass(frozen=True)
class Asking:
    """What a probe asks of each prompt row, the same for every Ask (answers by name).

    answers: rows -> per row, the names of the answers read (a target, gold answers).
    sets: rows -> per row, the candidate set its blank ranks among (None: the only one).
    texts: (set, name) -> how the answer reads in that set's blank (None: as named).
    labels: the set whose spans name every set's candidates (sets listing the same answers).
    subsets: name -> answers a second average precision is taken among; `subset_of` rows ->
        each row's subset.
    asks: in words, the question asked (tacit.ask.words.QUESTIONS: `concept`, `answers`).
    matchers: in words, rows -> what each row's answers can name.
    keys: rows -> the columns telling a model's rows apart (answers.csv, messages.jsonl).
    questions: rows -> the rows asked, where several rows share one question (an item's
        candidates, a row each).
    """

    answers: Callable[[pd.DataFrame], list[list[str]]]
    sets: Callable[[pd.DataFrame], list[str]] | None = None
    texts: Callable[[str, str], str] | None = None
    labels: str | None = None
    top_k: int | None = None  # None: tacit.ranking.TOP
    shares: bool = False
    subsets: Mapping[str, Sequence[str]] | None = None
    subset_of: Callable[[pd.DataFrame], list[str]] | None = None
    in_place: bool = False
    asks: str = "concept"
    matchers: Callable[[pd.DataFrame], Any] | None = None
    keys: Callable[[pd.DataFrame], list[str]] = lambda rows: ["prompt"]
    questions: Callable[[pd.DataFrame], pd.DataFrame] | None = None


class Answered:
    """A chunk's rows as an Ask answered them: each field (rank, score, listed, answers, ...)
    made on first use, for the rows and, where an ensemble was ranked, its rows after them."""

    def __init__(self, rows: pd.DataFrame, fields: Mapping[str, Callable[[], Any]]) -> None:
        self.rows = rows
        self._make = dict(fields)
        self._made: dict[str, Any] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._make

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            self._made[name] = self._make[name]()
        return self._made[name]

    def get(self, name: str, default: Any = None) -> Any:
        if name not in self._make:
            return default
        return self[name]


@dataclass(frozen=True)
class Column:
    """A column of a probe's rows, made of the fields an Ask answers (`reads`); written only
    where the Ask answers all of them (and `when` holds of the rows). `of`: the Answered ->
    the column's values (default: the one field as it is); several `names`: a table of them."""

    names: str | tuple[str, ...]
    reads: tuple[str, ...]
    of: Callable[[Answered], Any] | None = None
    when: Callable[[pd.DataFrame], bool] | None = None

    @classmethod
    def field(cls, name: str, source: str, **given: Any) -> Column:
        """The column `name` holding the field `source` as it is."""
        return cls(name, (source,), **given)

    def values(self, answered: Answered) -> Any:
        return self.of(answered) if self.of is not None else answered[self.reads[0]]


def written(rows: pd.DataFrame, answered: Answered, columns: Sequence[Column]) -> pd.DataFrame:
    """The rows with every column the Ask answers, in the order declared, after their own."""
    table = answered.rows.copy()
    for column in columns:
        if not all(name in answered for name in column.reads):
            continue
        if column.when is not None and not column.when(rows):
            continue
        values = column.values(answered)
        if isinstance(column.names, tuple):
            for name in column.names:
                table[name] = values[name].to_numpy()
        else:
            table[column.names] = values
    return table


@dataclass
class Finished:
    """What an Ask makes of a run's rows: the rows (its raw columns taken out), further
    tables, files, its manifest keys and what the manifest's options record of it."""

    rows: pd.DataFrame
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)


class Ask(ABC):
    """One way of asking (see the module docstring). Made per run from the probe's options;
    it keeps what it planned (the vocabulary, candidate sets, sampling) for the run."""

    name: ClassVar[str]
    form: ClassVar[Form]  # what its blank holds
    said: ClassVar[str]  # what it asks among, in a few words (`the shared vocabulary`)
    takes: ClassVar[tuple[str, ...]]  # the options it reads (fields of the probe's options)
    yields: ClassVar[str] = "ranks"  # what it gives the probe: `ranks`, or `answers` in words
    over: ClassVar[str] = ""  # what a run's ranks are over, as its report says
    recorded_as: ClassVar[str] = ""  # the manifest key a run of it records
    # of the probe's options it takes, those the manifest's options record
    recorded: ClassVar[tuple[str, ...]] = ()

    def __init__(self, values: Any, probe: str) -> None:
        self.values, self.probe = values, probe
        self.models: Sequence[RunModel] = ()

    @classmethod
    @abstractmethod
    def chosen(cls, values: Any) -> bool:
        """Do these options choose this Ask (`--by`, `--candidates`)?"""

    @classmethod
    def ran(cls, manifest: Mapping[str, Any]) -> bool:
        """Was this run (its manifest) asked this way?"""
        return cls.recorded_as in manifest

    # a printed table's note where no model's scores are probabilities, asked this way
    probability_note: ClassVar[str] = ""

    @classmethod
    def ranked_among(cls, manifest: Mapping[str, Any]) -> str:
        """What a run's targets were ranked among, in a line."""
        return ""

    @classmethod
    def compared(cls, manifest: Mapping[str, Any]) -> dict[str, str]:
        """What two runs asked this way must share to stand side by side, each printable."""
        return {}

    @classmethod
    def no_probability(cls, manifest: Mapping[str, Any], model: Mapping[str, Any]) -> str | None:
        """Why a model's scores (its manifest record) are no probability of the answer alone,
        asked this way; None where they are."""
        return None

    @classmethod
    def named(cls) -> str:
        """This way of asking in words, with how it is chosen: `the shared vocabulary
        (--candidates vocab)`."""
        return cls.said

    def value(self, name: str, default: Any = None) -> Any:
        return getattr(self.values, name, default)

    @abstractmethod
    def needs(self, templates: Sequence[Template], instead: str, in_place: bool = False) -> Needs:
        """What asking this way needs of a model at these templates' blanks (`instead`: the
        probe's own candidate set, suggested where a model cannot score the vocabulary)."""

    def prepare(self, models: Sequence[RunModel], needs: Needs, run: Any = None) -> None:
        """Before the prompts: what the models must give first (the shared vocabulary), and
        what the Ask reads of the run (`run`: tacit.core.options.Planning)."""
        self.models = models

    def cannot(self, text: str, as_word: Callable[[str], str | None] | None = None) -> str | None:
        """Why the answer `text` cannot be asked this way (None: it can); `as_word`: why it
        cannot be one word in the blank, where this way asks for one."""
        return None

    def has(self, text: str, among: str | None = None) -> bool:
        """Is `text` a candidate of the set `among` (None: of every set)?"""
        return True

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and self.has(text)

    def unread(self, texts: Sequence[str]) -> dict[str, str]:
        """The texts some model's tokenizer does not read whole, each with why."""
        return {}

    def candidate_sets(
        self,
        own: Callable[[], dict[str, CandidateSet]],
        *,
        one: str = "",
        without: Callable[[dict[str, str]], dict[str, CandidateSet]] | None = None,
    ) -> tuple[dict[str, CandidateSet], dict[str, str]]:
        """The candidate sets the blanks rank among, where the Ask ranks spans (the probe's
        `own`, remade `without` the spans no model reads whole), and those spans with why;
        `one`: why a FILE of spans may stand for one set only (empty: for every set)."""
        return {}, {}

    def shown(self, prompts: pd.DataFrame, shots: Any) -> tuple[pd.DataFrame, dict[str, str]]:
        """The prompts with their demonstrations (tacit.ask.shots), and each prompt text's
        context; as they were without."""
        if shots is None:
            return prompts, {}
        return shots.apply(prompts, scoring=True)

    @abstractmethod
    def work(
        self,
        rows: pd.DataFrame,
        asking: Asking,
        columns: Sequence[Column] | Callable[[pd.DataFrame, Answered], pd.DataFrame],
        *,
        key: str | None = None,
        baseline: Callable[[str], str] | None = None,
    ) -> Work:
        """What every model scores: each chunk of `rows` asked, its Answered written as the
        probe's `columns` (`key`: what the rows are chunked on, where not the Ask's own
        choice; `baseline`: a prompt -> the text `--normalize pmi` scores it against)."""

    def resume_key(self) -> dict[str, Any]:
        """What a resumed run must have asked the same way."""
        return {}

    def finish(
        self, rows: pd.DataFrame, models: Sequence[ModelRecord], keys: Sequence[str] = ("prompt",)
    ) -> Finished:
        """The run's rows finished (`keys`: the columns that tell them apart): files, further
        tables and the manifest's record."""
        return Finished(rows, options=self.options_record())

    def options_record(self) -> dict[str, Any]:
        """The options of this Ask the manifest's options record (Ask.recorded)."""
        return {name: _recorded(self.value(name)) for name in self.recorded}

    def among(self) -> str:
        """What the blanks are ranked among, for a dry run."""
        return "what the probe asks"

    def faster(self, sentences: bool, kinds: set[str | None]) -> list[str]:
        """What would make a long run of this Ask shorter (`sentences`: a model scored more
        sentences than the prompts, a causal LM's text after the blank)."""
        return []

    @property
    def vocabulary(self) -> Any:
        """The shared vocabulary asked over (a run's vocab.txt), where there is one."""
        return None

    def candidate_count(self) -> int | None:
        """How many candidates every prompt ranks, where that is one number (the shared
        vocabulary's size: chance levels read it); None where each row says its own."""
        return None


def _recorded(value: Any) -> Any:
    """An option's value as the manifest records it (a path as text)."""
    return value if value is None or isinstance(value, bool | int | float) else str(value)


def choose(
    values: Any, specs: Sequence[AskSpec], probe: str, *, only: str | None = None, because: str = ""
) -> Ask:
    """The Ask these options choose among a probe's (`specs`), made from them; an option that
    only another of its Asks takes, given, is refused in one line naming who takes it. `only`:
    the one Ask `because` can be asked with (the rest is refused)."""
    asks = [_taken(ASKS.get(spec.name), spec) for spec in specs]
    chosen = asks[0] if len(asks) == 1 else next(a for a in asks if a.chosen(values))
    if only is not None and chosen.name != only:
        needed = next(a for a in asks if a.name == only)
        raise TacitError(f"{because} is for {needed.named()} only")
    params = {p.name: p for p in type(values).params()}
    for name in dict.fromkeys(n for a in asks for n in a.takes):
        if name in chosen.takes or name not in params:
            continue
        param = params[name]
        if getattr(values, name) != param.default:
            takers = " or ".join(a.named() for a in asks if name in a.takes)
            raise TacitError(
                f"{probe}: {option(param.flag)} is an option of {takers}, not of {chosen.named()}"
            )
    return chosen(values, probe)


def _taken(ask: type[Ask], spec: AskSpec) -> type[Ask]:
    """An Ask as a probe takes it: the options of its own it reads too, those its manifest
    records, its own sets' names and their files."""
    settings = {
        "takes": ask.takes + spec.extra,
        "recorded": spec.recorded or ask.recorded,
        "own": spec.own,
        "files": spec.files,
        "records_sets": spec.records_sets,
    }
    return type(ask.__name__, (ask,), settings)


def with_model(scorer: Scorer, table: pd.DataFrame) -> pd.DataFrame:
    """A chunk's table with the model's name first."""
    table.insert(0, "model", scorer.name)
    return table
