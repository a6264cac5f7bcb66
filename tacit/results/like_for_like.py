"""Whether runs can stand side by side, once for every command that puts runs together (`probe
table`, `plot`, `report`, `leaderboard`, `compare`): each probe says what must match for two of
its runs to be like for like (Probe.comparable: the vocabulary or candidates and their sha256,
the norms and theirs, span scoring and normalisation, concepts, templates, ...); here runs are
read, and grouped by those values. Runs of different groups are never averaged together or
shown in one table without saying so: each command shows the groups apart (or refuses) with
the reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.core.errors import TacitError, TacitWarning
from tacit.core.labels import short_labels
from tacit.core.option_names import option
from tacit.probes.report import report_of

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Probe
    from tacit.results.result import ProbeResult

# the options that set what runs scored over (Probe.comparable's keys), named beside a difference
OPTIONS = {
    "candidates": ("--candidates",),
    "span scoring": ("--span-scoring",),
    "normalisation": ("--normalize",),
    "norms": ("--norms",),
    "similarity": ("--similarity",),
    "concepts": ("--concepts",),
    "templates": ("--templates",),
    "relations": ("--relation",),
    "items": ("--items",),
    "suite": ("--suite",),
    "data": ("--data",),
    "cloze": ("--template", "--verbalizer", "--calibrate"),
}
RANKED = ("vocabulary", "candidates", "span scoring", "normalisation")  # among what, how
# empty where it does not apply (span scoring where no masked LM ran): matches any value
ANY_WHERE_EMPTY = ("span scoring",)


def read_summary(
    run: str | Path, required: set[str] | frozenset[str] = frozenset()
) -> pd.DataFrame:
    """summary.csv of a run directory, with a `run` column naming the directory."""
    from tacit.results.reading import run_table

    path = Path(run) / "summary.csv"
    if not path.is_file():
        raise TacitError(f"{run}: not a run directory (no summary.csv)")
    summary = run_table(run, "summary.csv")  # typed as the run held it
    missing = set(required) - set(summary.columns)
    if missing:
        raise TacitError(f"{path}: not the summary this needs (no {', '.join(sorted(missing))})")
    summary["run"] = Path(run).name
    return summary


@dataclass
class RunInfo:
    """A run as the commands across runs read it: its name (unique among the runs read
    together), manifest, summary, probe, and its rows file (read when first asked for)."""

    name: str
    manifest: Manifest
    summary: pd.DataFrame
    probe: Probe
    path: Path | None = None
    _rows: pd.DataFrame | None = field(default=None, repr=False)
    files: Mapping[str, str | bytes] = field(default_factory=dict, repr=False)  # in memory

    @contextmanager
    def directory(self) -> Iterator[Path]:
        """The run's directory: a result in memory's further files (ProbeResult.files, a
        matrix's) written to a temporary one for as long as it is read."""
        if self.path is not None:
            yield self.path
            return
        import tempfile

        with tempfile.TemporaryDirectory(prefix="tacit-run-") as where:
            for name, content in self.files.items():
                target = Path(where) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    target.write_text(content, encoding="utf-8")
            yield Path(where)

    @property
    def rows(self) -> pd.DataFrame:
        """The run's rows file (prompts.csv for retrieval and elicitation)."""
        if self._rows is None:
            from tacit.results.reading import run_table

            assert self.path is not None
            self._rows = run_table(self.path, report_of(self.probe).rows_file)
        return self._rows

    def scored_over(self) -> dict[str, str]:
        """What must match for runs to stand side by side (scored_over)."""
        return scored_over(self.probe, self.manifest)

    @property
    def models(self) -> list[str]:
        """The run's models in --model order."""
        return [str(record.get("name")) for record in self.manifest.get("models", [])] or list(
            dict.fromkeys(self.summary["model"])
        )


def as_saved(table: pd.DataFrame) -> pd.DataFrame:
    """A table as it reads back from its saved file (floats to SAVED_DIGITS significant
    digits, read as RunInfo.rows reads them), so that a result in memory and its run directory
    give the same numbers to the last bit."""
    import io

    from tacit.core.files import table_text

    return pd.read_csv(io.StringIO(table_text(table)))


def scored_over(probe: Probe, manifest: Manifest) -> dict[str, str]:
    """What must match for runs to stand side by side: the probe, what it declares, and a
    `--limit` (the first N concepts or items are not the whole set)."""
    shown = limited_to(manifest)
    found = {"probe": probe.name, **probe.comparable(manifest)}
    return {**found, "limit": shown} if shown else found


def asked_in_words(manifest: Manifest) -> str:
    """`by generation` for a run that asked its models in words (`--by generation`), else
    nothing: what a table names beside such a run, which may stand beside runs by scoring."""
    options = manifest.get("options") or {}
    return "by generation" if options.get("by") == "generation" else ""


def limited_to(manifest: Manifest) -> str:
    """`2 concepts drawn at random (seed 0)` or `the first 2 concepts` for a `--limit` run
    (a run of an earlier version recorded only `first`), else nothing."""
    limit = manifest.get("limit")
    if not limit:
        return ""
    if "first" in limit or limit.get("by") == "first":
        return f"the first {limit.get('n', limit.get('first'))} {limit['of']}"
    return f"{limit['n']} {limit['of']} drawn at random (seed {limit.get('seed')})"


def first_looks(runs: Sequence[tuple[str, Any, Manifest]]) -> str:
    """What a figure or report of (run name, summary, manifest) must say of `--limit` runs:
    `a first look (--limit): the first 2 concepts only` (each run named, for several)."""
    limited = [(name, limited_to(manifest)) for name, _, manifest in runs if limited_to(manifest)]
    if not limited:
        return ""
    if len(runs) == 1:
        shown = f"{limited[0][1]} only"
    else:
        shown = "; ".join(f"{name}: {what} only" for name, what in limited)
    return f"a first look ({option('--limit')}): {shown}, not the whole set"


def run_paths(runs: Sequence[Any]) -> list[Any]:
    """The runs given, less what a shell's `results/*/*` also names that holds no run to read:
    plain files (a leaderboard or report written beside the runs) and directories without a
    finished run (a run in progress, an interrupted or empty one), each left out with a
    warning that says why. Where that is all of them, they stay, for the reader's error."""
    import warnings

    left_out = {run: why for run in runs if (why := _not_a_run(run))}
    if not left_out or len(left_out) == len(runs):
        return list(runs)
    for run, why in left_out.items():
        warnings.warn(f"{run}: {why}: left out", TacitWarning, stacklevel=3)
    return [run for run in runs if run not in left_out]


def _not_a_run(run: Any) -> str | None:
    """Why a path given among runs holds none to read (None: it may, or it is in memory). A
    directory with a summary but no manifest is read as a summary alone (`probe plot`)."""
    from tacit.results.rundir import unfinished, writer

    if not isinstance(run, str | Path):
        return None
    path = Path(run)
    if path.is_file():
        return "a file, not a run directory"
    held = unfinished(path) if path.is_dir() else None
    if held is None or ((path / "summary.csv").is_file() and writer(path) is None):
        return None
    return f"not a finished run: {held}"


def read_runs(runs: Sequence[str | Path | ProbeResult]) -> list[RunInfo]:
    """Run directories (or results in memory) as RunInfo, named by their directories (as
    many of their last parts as tell them apart); plain files among several runs are left out
    (run_paths); a one-line error for anything else."""
    from tacit.core.manifest import read_manifest
    from tacit.probes import registry
    from tacit.results.reading import as_saved

    if not runs:
        raise TacitError("no run directory given")
    runs = run_paths(runs)
    paths = [str(run) for run in runs if isinstance(run, str | Path)]
    names = short_labels(str(Path(p).absolute()) for p in paths)
    read = []
    for index, run in enumerate(runs):
        if isinstance(run, str | Path):
            if not Path(run).is_dir():
                raise TacitError(f"{run}: not a run directory")
            manifest = read_manifest(run)
            probe = registry.of_run(manifest, run)
            summary = read_summary(run, required={*probe.keys, probe.primary.column})
            name = names[str(Path(run).absolute())]
            read.append(RunInfo(name, manifest, summary.assign(run=name), probe, Path(run)))
        else:
            probe = registry.of_run(run.manifest, f"result {index + 1}")
            name = f"result{index + 1}"
            rows = as_saved(run.prompts)  # the numbers its directory would give
            summary = run.summary.assign(run=name)
            read.append(RunInfo(name, run.manifest, summary, probe, _rows=rows, files=run.files))
    return read


@dataclass
class Group:
    """Runs that are like for like, and what they scored over."""

    runs: list[RunInfo]
    scored_over: dict[str, str]

    def describe(self) -> str:
        """What the group's runs scored over, in a line: `vocabulary 47 words (ab12cd34); ...`."""
        shown = [
            f"{what} {value}"
            for what, value in self.scored_over.items()
            if value and what != "probe"
        ]
        return "; ".join(shown)

    def takes(self, scored: dict[str, str]) -> bool:
        """Whether a run that scored over `scored` is like for like with the group's runs (an
        empty value of ANY_WHERE_EMPTY matches any, and a run by generation, which has none of
        RANKED, stands beside runs by scoring of the same norms, concepts and templates); the
        group then takes its values."""
        mine = self.scored_over
        for what in dict.fromkeys([*mine, *scored]):
            if what in RANKED and (what not in mine or what not in scored):
                continue  # a run by generation ranks among its own words, beside any
            ours, theirs = mine.get(what, ""), scored.get(what, "")
            if ours != theirs and not (what in ANY_WHERE_EMPTY and not (ours and theirs)):
                return False
        for what in [*ANY_WHERE_EMPTY, *RANKED]:
            if scored.get(what) and not mine.get(what):
                mine[what] = scored[what]
        return True

    @property
    def names(self) -> str:
        return ", ".join(run.name for run in self.runs)


def like_for_like(runs: Sequence[RunInfo]) -> tuple[list[Group], list[str]]:
    """The runs in groups that may stand side by side (in the order first met), and for
    several groups, one line per way they differ (with what to do about it)."""
    groups: list[Group] = []
    for run in runs:
        scored = run.scored_over()
        for group in groups:
            if group.takes(scored):
                group.runs.append(run)
                break
        else:
            groups.append(Group([run], scored))
    return groups, _differ(groups)


def _hint(what: str) -> str:
    """What to do about a difference in `what`: the option that sets it, said as the caller
    names options."""
    if what == "vocabulary":
        return (
            f"score them over one: {option('--vocab-model')} naming every run's models, or one "
            f"{option('--vocab-file')}"
        )
    if what == "limit":
        return (
            f"{option('--limit')} scores a subset (each run's named above: drawn at random "
            f"with its seed, or the first N with {option('--limit-by')} first), a first look: "
            "give the runs the same limit, or none"
        )
    flags = OPTIONS.get(what)
    return f"set by {' or '.join(map(option, flags))}" if flags else ""


def _ranked(scored: dict[str, str]) -> str:
    """What a run ranked among, in words."""
    if scored.get("candidates"):
        return f"candidate spans, {scored['candidates']}"
    return f"the shared vocabulary, {scored.get('vocabulary') or 'none'}"


def _differ(groups: Sequence[Group]) -> list[str]:
    """How the groups differ: in probe, and within a probe in what each scored over, each
    with the option that sets it. Runs ranked over the vocabulary beside runs ranked over
    candidates are said so once (no vocabulary to share, no span scoring to match)."""
    by_probe: dict[str, list[Group]] = {}
    for group in groups:
        by_probe.setdefault(group.scored_over["probe"], []).append(group)
    notes = []
    if len(by_probe) > 1:
        shown = "; ".join(
            f"{probe}: {', '.join(g.names for g in found)}" for probe, found in by_probe.items()
        )
        notes.append(f"the runs are of different probes ({shown})")
    for found in by_probe.values():
        spans = {bool(g.scored_over.get("candidates")) for g in found}
        apart = len(spans) > 1 and any("vocabulary" in g.scored_over for g in found)
        if apart:
            shown = "; ".join(f"{g.names}: {_ranked(g.scored_over)}" for g in found)
            notes.append(
                f"the runs rank among different things ({shown}): the vocabulary and candidate "
                f"spans ({option('--candidates')}) are never like for like"
            )
        whats = list(dict.fromkeys(what for g in found for what in g.scored_over))
        for what in whats:
            among = found
            if apart and what in RANKED:  # among the runs that have one
                among = [g for g in found if g.scored_over.get(what)]
            values = [g.scored_over.get(what, "") for g in among]
            if len(set(values) - ({""} if what in ANY_WHERE_EMPTY else set())) > 1:
                shown = "; ".join(
                    f"{g.names}: {value or 'none'}" for g, value in zip(among, values)
                )
                hint = _hint(what)
                notes.append(f"the runs differ in {what} ({shown})" + (f": {hint}" if hint else ""))
    return notes


def differences(runs: Sequence[str | Path]) -> list[str]:
    """One line per way the runs differ in what they scored, naming each run's value; empty
    when they are like for like (or have no manifest to tell)."""
    read = []
    for run in runs:
        try:
            read.extend(read_runs([run]))
        except TacitError:
            continue  # a summary without a manifest: nothing to compare
    groups, notes = like_for_like(read)
    return notes


def apart(groups: Sequence[Group], notes: Sequence[str], what: str) -> str:
    """The line said when runs are shown apart: how they differ, and that they are."""
    return (
        f"warning: not like for like: {'; '.join(notes)}: {what} shown apart, {len(groups)} groups"
    )


def one_probe(runs: Sequence[RunInfo], what: str) -> Probe:
    """The probe of runs that one table or figure takes; different probes are refused."""
    probes: dict[str, Any] = {}
    for run in runs:
        probes.setdefault(run.probe.name, run.name)
    if len(probes) > 1:
        listed = "; ".join(f"{name}: {run}" for name, run in probes.items())
        raise TacitError(f"these runs are of different probes ({listed}): one {what} takes one")
    return runs[0].probe
