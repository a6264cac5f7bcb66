"""A generic norms table: CSV or TSV (or semicolon-separated) with a header line, one row per
concept-feature pair: `concept`, `feature` (a ready phrase or CSLB-style text, both through
tacit.norms.phrasing), `pf`, optionally `feature_type` (else DEFAULT_FEATURE_TYPE), and
optionally `relation` and `answer` together (a row's feature is then its phrase as written).
Header names match ignoring case; `columns` maps ours to others. A pair given twice is merged
as CSLB's are (normset.merge_duplicates). docs/norms.md ("Your own norms") has the format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option
from tacit.norms.cslb import describe
from tacit.norms.formats import NormFormat, NormSource
from tacit.norms.normset import (
    FEATURE_TYPES,
    NormSet,
    build_norm_set,
    pf_value,
    required_text,
)
from tacit.norms.tables import delimited_rows, locate_columns, split_header

DEFAULT_COLUMNS = {"concept": "concept", "feature": "feature", "pf": "pf"}
FEATURE_TYPE_NAMES = ("feature_type", "feature type")  # the optional column, by default
OPTIONAL = ("feature_type", "relation", "answer")
KEYS = (*DEFAULT_COLUMNS, *OPTIONAL)
# Without a feature-type column: CSLB's type for what is known about a concept rather than
# perceived or done with it, the widest of the five. Retrieval's --category is then meaningless.
DEFAULT_FEATURE_TYPE = "encyclopaedic"
_EXAMPLE = "concept=Word,feature=Property,pf=Count"


def check_columns(columns: Mapping[str, str], where: str = "columns") -> dict[str, str]:
    """A column mapping with known keys, non-empty names, and no name used twice."""
    unknown = [key for key in columns if key not in KEYS]
    if unknown:
        raise TacitError(
            f"{where}: unknown column key(s) {', '.join(repr(shorten(k)) for k in unknown)}; "
            f"keys: {', '.join(KEYS)}"
        )
    mapping = {key: str(name).strip() for key, name in columns.items()}
    empty = [key for key, name in mapping.items() if not name]
    if empty:
        raise TacitError(f"{where}: no header name for {', '.join(empty)}")
    names = list(mapping.values())
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise TacitError(f"{where}: header name(s) {', '.join(map(repr, twice))} given twice")
    return mapping


def parse_columns(text: str) -> dict[str, str]:
    """The command line's `--norms-columns concept=Word,feature=Property,pf=Count`.

    Examples:
        >>> parse_columns("concept=Word, pf=Count")
        {'concept': 'Word', 'pf': 'Count'}
    """
    where = f"{option('--norms-columns')} {shorten(text)!r}"
    pairs = [item.partition("=") for item in text.split(",") if item.strip()]
    if not pairs or any(not sep or not key.strip() for key, sep, _ in pairs):
        raise TacitError(
            f"{where}: expected KEY=NAME pairs separated by commas, e.g. {_EXAMPLE} "
            f"(keys: {', '.join(KEYS)})"
        )
    keys = [key.strip() for key, _, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise TacitError(f"{where}: key(s) {', '.join(repeated)} given twice")
    return check_columns({key: name for key, (_, _, name) in zip(keys, pairs)}, where)


def _feature_type(cell: str, where: str, column: str) -> str:
    value = required_text(cell, where, column).lower()
    if value not in FEATURE_TYPES:
        raise TacitError(
            f"{where}: column {column!r} holds an unknown type {shorten(cell)!r}; expected one "
            f"of {', '.join(FEATURE_TYPES)}"
        )
    return value


def _wanted(names: Sequence[str], columns: Mapping[str, str]) -> dict[str, str]:
    """Our column -> the header name to look for; the optional ones only where there are."""
    wanted = {**DEFAULT_COLUMNS, **columns}
    folded = [name.casefold() for name in names]
    for key, header_names in (
        ("feature_type", FEATURE_TYPE_NAMES),
        ("relation", ("relation",)),
        ("answer", ("answer",)),
    ):
        present = [name for name in header_names if name in folded]
        if key not in wanted and present:
            wanted[key] = names[folded.index(present[0])]
    return wanted


def _relation(cell: dict[str, str], wanted: Mapping[str, str], where: str) -> dict[str, str]:
    """A row's own relation and answer (empty relation: none, `other`)."""
    relation = " ".join(cell["relation"].split())
    answer = " ".join(cell["answer"].split())
    if relation and not answer:
        raise TacitError(
            f"{where}: column {wanted['answer']!r} is empty: a feature with a "
            f"relation ({relation!r}) needs its answer"
        )
    if answer and not relation:
        raise TacitError(
            f"{where}: column {wanted['relation']!r} is empty: an answer "
            f"({shorten(answer)!r}) needs its relation"
        )
    return {"relation": relation or "other", "answer": answer}


def read_generic(
    path: Path, lines: Sequence[str], columns: Mapping[str, str] | None = None
) -> NormSet:
    """Validate every line of a generic table (its text lines, header first)."""
    columns = check_columns(columns or {})
    delimiter, names = split_header(lines[0])
    wanted = _wanted(names, columns)
    named = [ours if ours == name else f"{ours} (as {name!r})" for ours, name in wanted.items()]
    expected = f"a CSV/TSV norms table with columns {', '.join(named)}"
    position = locate_columns(names, wanted, f"{path}:1", expected)
    if ("relation" in position) != ("answer" in position):
        given, lacking = (
            ("relation", "answer") if "relation" in position else ("answer", "relation")
        )
        raise TacitError(
            f"{path}:1: a {given} column needs an {lacking} column beside it "
            "(each feature's relation and its answer)"
        )
    records = []
    for number, fields in delimited_rows(path, lines, delimiter, len(names)):
        where = f"{path}:{number}"
        cell = {ours: fields[at] for ours, at in position.items()}
        records.append(
            {
                "concept": required_text(cell["concept"], where, wanted["concept"]),
                "feature": required_text(cell["feature"], where, wanted["feature"]),
                "pf": pf_value(cell["pf"], where, wanted["pf"], whole=False),
                "feature_type": (
                    _feature_type(cell["feature_type"], where, wanted["feature_type"])
                    if "feature_type" in cell
                    else DEFAULT_FEATURE_TYPE
                ),
                **(_relation(cell, wanted, where) if "relation" in position else {}),
            }
        )
    return build_norm_set(
        records,
        path,
        describe,
        format="generic",
        columns=columns,
        feature_types="feature_type" in position,
    )


class GenericFormat(NormFormat):
    """A CSV/TSV table of concept, feature, pf (and optional columns), names as given."""

    name = "generic"
    description = "CSV/TSV with columns concept, feature, pf[, feature_type]"
    takes_columns = True

    def recognises(self, source: NormSource) -> bool:
        if source.is_workbook:
            return False
        if source.columns:
            return True
        _, names = source.header
        return bool({n.casefold() for n in names} & set(DEFAULT_COLUMNS.values()))

    def read(self, source: NormSource) -> NormSet:
        if source.is_workbook:
            raise TacitError(
                f"{source.path}: an .xlsx workbook; a generic table must be CSV or TSV text"
            )
        return read_generic(source.path, source.lines, source.columns)


FORMAT = GenericFormat()
