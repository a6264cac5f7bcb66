"""The inputs the norms-based probes share, declared once: which norms (and how to read them),
which concepts, and `--limit`'s concepts. Light: declaring these options imports nothing
heavy; the norms are read when a run starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from tacit.core.choices import NORMS_FORMATS
from tacit.core.errors import TacitError
from tacit.core.files import check_text, regular_file
from tacit.core.option_names import option
from tacit.core.options import limited
from tacit.core.params import Param

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import NormsRecord
    from tacit.core.options import Planning
    from tacit.norms import NormSet


class NormsChoice(Protocol):
    """The options of a probe that reads norms (retrieve, elicit): which, and how to read them."""

    @property
    def norms(self) -> NormSet | str | Path | None: ...
    @property
    def norms_format(self) -> str | None: ...
    @property
    def norms_columns(self) -> Mapping[str, str] | str | None: ...


def parse_concepts(value: str) -> list[str]:
    """The command line's `bear,cat` or `@file` (one concept a line)."""
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            regular_file(path, f"--concepts {value}", missing_ok=True)
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise TacitError(f"--concepts {value}: cannot read {path} ({err.strerror})") from None
        check_text(text, path)
        lines = text.splitlines()
        names = [line.strip() for line in lines if line.strip()]
    else:
        names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise TacitError(f"--concepts {value!r}: names no concept")
    return names


def _norms(value: Any, label: str) -> Any:
    from tacit.norms import NormSet

    if not isinstance(value, str | Path | NormSet):
        raise TacitError(
            f"{label} {value!r}: expected a norms file, an installed name or a NormSet"
        )
    return value


def _columns(value: Any, label: str) -> Mapping[str, str]:
    if isinstance(value, str):
        from tacit.norms import parse_columns

        return parse_columns(value)
    if not isinstance(value, Mapping):
        raise TacitError(f"{label} {value!r}: expected KEY=NAME pairs or a mapping")
    return value


NORMS = Param(
    "norms",
    None,
    kind="any",
    check=_norms,
    help="Norms: a file (CSLB norms.dat, McRae's .xlsx or a CSV/TSV export, or your own CSV/TSV "
    "table), a Hub dataset's file (hf://datasets/OWNER/NAME[@REVISION]/PATH) or the name of "
    "installed norms. Default: $TACIT_NORMS (a file or a name), else the "
    "installed default (`probe norms install`).",
)


def _norms_format(value: Any, label: str) -> str:
    """A format tacit knows: its own or one registered at run time (tacit.norms.formats)."""
    from tacit.norms.formats import NORM_FORMATS

    if value not in NORM_FORMATS:
        raise TacitError(f"{label} {value!r}: expected one of {', '.join(NORM_FORMATS.names())}")
    return str(value)


NORMS_FORMAT = Param(
    "norms_format",
    None,
    check=_norms_format,
    help=f"Say the norms file's format when tacit cannot tell it from the file: "
    f"{', '.join(NORMS_FORMATS)}, or one registered by name.",
)
NORMS_COLUMNS = Param(
    "norms_columns",
    None,
    kind="any",
    check=_columns,
    help="A generic table's column names, e.g. `concept=Word,feature=Property,pf=Count` "
    "(feature_type optional).",
)
CONCEPTS = Param(
    "concepts",
    None,
    kind="list",
    parse=parse_concepts,
    help="Only these concepts: a comma-separated list, or @FILE with one a line.",
)
NORMS_PARAMS = (NORMS, NORMS_FORMAT, NORMS_COLUMNS, CONCEPTS)


def chosen_norms(values: NormsChoice) -> NormSet:
    """The run's NormSet: as given, or read from a path or an installed name."""
    from tacit.norms import NormSet, load_norms

    if isinstance(values.norms, NormSet):
        return values.norms
    columns = values.norms_columns  # a mapping once checked (_columns reads the text form)
    return load_norms(values.norms, format=values.norms_format, columns=cast(Any, columns))


def norms_record(norms: NormSet) -> NormsRecord:
    """The norms as a manifest records them."""
    return {
        "name": norms.name,
        "path": str(norms.path),
        "format": norms.format,
        "columns": dict(norms.columns) if norms.columns else None,
        "feature_types": norms.feature_types,
        "sha256": norms.sha256,
        **norms.hub,  # type: ignore[typeddict-item]
        "rows": len(norms.table),
        "concepts": len(norms.concepts),
        "merged_duplicates": norms.merged.to_dict("records"),
    }


def requested_concepts(norms: NormSet, requested: Sequence[str] | None) -> list[str]:
    """Every concept of the norms, or those `--concepts` asks for, each once. A name the norms
    do not hold is an error (a typo, not a subset); one they hold that a run cannot ask is
    dropped and counted by the probe (nothing_left says when none is left)."""
    if requested is None:
        return list(norms.concepts)
    known = set(norms.concepts)
    unknown = [c for c in requested if c not in known]
    if unknown:
        raise TacitError(f"{option('--concepts')}: not in the norms: {', '.join(unknown)}")
    return list(dict.fromkeys(requested))


def nothing_left(dropped: pd.DataFrame, asked: str, *, given: bool, hint: str = "") -> TacitError:
    """The error of a run that dropped every concept: `--concepts: no concept is left to
    ASKED: REASON: concept, ...; ...` (`dropped`: a `concept, reason` table; `given`: the
    concepts came from `--concepts`)."""
    from tacit.probes.run_notes import listed

    reasons = "; ".join(
        f"{reason}: {listed(sorted(set(rows['concept'])))}"
        for reason, rows in dropped.groupby("reason", sort=False)
    )
    start = f"{option('--concepts')}: " if given else ""
    said = f"{start}no concept is left to {asked}" + (f": {reasons}" if reasons else "")
    return TacitError(said + (f" ({hint})" if hint else ""))


def limit_reason(run: Planning) -> str:
    """Why `--limit` left a concept out, as the dropped tables say it."""
    from tacit.core.options import limit_said

    return f"left out by the limit (kept {limit_said(run, 'concepts')})"


def limit_concepts(prompts: pd.DataFrame, run: Planning) -> tuple[pd.DataFrame, list[str]]:
    """The prompts of the concepts `--limit` keeps (Planning.limit and limit_by: a seeded
    sample, or the first in the order they first appear: the norms' for retrieval,
    alphabetical for elicitation, whose prompts go relation by relation), and the concepts it
    leaves out; all of them without a limit."""
    if run.limit is None:
        return prompts, []
    concepts = list(dict.fromkeys(prompts["concept"]))
    if "relation" in prompts:
        concepts.sort()
    kept, left_out = limited(concepts, run.limit, run.limit_by, run.seed)
    return prompts[prompts["concept"].isin(kept)].reset_index(drop=True), left_out
