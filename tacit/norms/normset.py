"""The NormSet every norms reader produces, and what all readers share: validating production
frequencies, merging repeated concept-feature pairs, and adding the phrase columns."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError, shorten
from tacit.core.files import file_sha256

FEATURE_TYPES = (
    "visual perceptual",
    "other perceptual",
    "functional",
    "encyclopaedic",
    "taxonomic",
)

NORM_COLUMNS = ["concept", "feature", "feature_type", "pf", "relation", "phrase", "answer"]

# feature -> (phrase, relation, answer): each format's phrasing rules
Describe = Callable[[str], tuple[str, str, str]]


@dataclass(frozen=True)
class NormSet:
    """Concept-feature norms, one row per (concept, feature), whatever the file's format.

    The probes read only these columns, never a format's own syntax:

    - `concept`: the name as in the file (sense labels such as `bat_(animal)` kept).
    - `feature`: the feature as in the file (CSLB `has fur_hair`, McRae `has_4_legs`).
    - `feature_type`: one of FEATURE_TYPES.
    - `pf`: production frequency: whole numbers for CSLB and McRae; a generic table may give
      any non-negative numbers (then the column is float unless every value is whole).
    - `relation`: `is`, `is a`, `has`, `has a`, `made of` (the elicitation relations, read
      straight off: `is an X` is `is a`, `is a tool` is `is a` and not `is`), else `does` (an
      action: CSLB `does X`, McRae behaviours and verbs) or `other`.
    - `phrase`: a third-person verb phrase that can follow "A bear ...": `has fur`, `flies`,
      `is made of metal`.
    - `answer`: for the five elicitation relations, the text after the relation, in one
      notation for every format: words are separated by spaces and `_` joins alternatives of
      one word, as CSLB writes them (`has fur_hair` -> `fur_hair`: fur or hair). McRae's own
      `_` (a space) becomes a space and its `/` (alternatives) becomes `_`: `has_4_legs` ->
      `4 legs` (two words), `is_furry/fuzzy` -> `furry_fuzzy` (two alternatives). Empty for
      `does` and `other`.

    Attributes:
        table: the columns above (NORM_COLUMNS), in file order.
        path: the file read.
        sha256: hex digest of the file's bytes, for the manifest.
        merged: one row per concept-feature pair that occurred more than once in the file
            (`concept, feature, pfs, pf`): what was merged and the production frequency kept.
        format: `cslb`, `mcrae` or `generic`: which reader read the file.
        columns: for a generic table, our column name -> the file's header name.
        feature_types: whether the file gave feature types (a generic table may not; then
            every row has generic.DEFAULT_FEATURE_TYPE).
        name: the name the norm set is installed under (`probe norms install`), when it was
            read by that name; None for a file given by path.
        hub: for a file read from a Hub dataset, its `source` URL and `commit`
            (tacit.hub.dataset_files); empty otherwise.
        alternatives: (concept, feature) -> the other wordings of the feature, where the
            format gives them (CSLB's `feature alternatives`: `has fur_hair` -> `has fur`,
            `hair`): what the participants wrote, which a model's answer may match too.
        participants: each row's participant list as the file writes it (CSLB's `participant
            list`, such as `p 1 2 3 / 4 9`; a merged row's lists joined by ` / `), indexed as
            `table`; None where the file has no lists (tacit.structure reads them).
        domains: concept -> its domain where the file says (CSLB's `living`, `nonliving`).
    """

    table: pd.DataFrame
    path: Path
    sha256: str
    merged: pd.DataFrame = field(default_factory=pd.DataFrame)
    format: str = "cslb"
    columns: Mapping[str, str] | None = None
    feature_types: bool = True
    name: str | None = None
    hub: Mapping[str, Any] = field(default_factory=dict)
    participants: pd.Series | None = None
    domains: Mapping[str, str] = field(default_factory=dict)
    alternatives: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    def alternatives_of(self, rows: pd.DataFrame) -> list[tuple[str, ...]]:
        """The other wordings of each of `rows`' features (rows of the table)."""
        pairs = zip(rows["concept"], rows["feature"])
        return [tuple(self.alternatives.get(pair, ())) for pair in pairs]

    @property
    def concepts(self) -> list[str]:
        """Concept names in file order."""
        return list(dict.fromkeys(self.table["concept"]))

    def features_of(self, concept: str) -> pd.DataFrame:
        """The rows of one concept (empty for an unknown concept)."""
        rows = self._rows_by_concept.get(concept)
        return self.table.iloc[rows] if rows is not None else self.table.iloc[:0]

    @cached_property
    def _rows_by_concept(self) -> dict[str, np.ndarray]:
        return {c: rows for c, rows in self.table.groupby("concept", sort=False).indices.items()}


def pf_value(cell: object, where: str, column: str, *, whole: bool) -> int | float:
    """A production frequency from a cell: a whole number >= 1 (`whole`: CSLB and McRae count
    participants) or any non-negative number (a generic table); whole values become ints."""
    text = "" if blank(cell) else str(cell).strip()
    if not text:
        raise TacitError(f"{where}: column {column!r} is empty")
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or (whole and not number.is_integer()):
        kind = "a whole number" if whole else "a number"
        raise TacitError(f"{where}: column {column!r} holds {shorten(text)!r}, not {kind}")
    if whole and number < 1:
        raise TacitError(f"{where}: column {column!r} holds {int(number)}, below 1")
    if number < 0:
        raise TacitError(f"{where}: column {column!r} holds {shorten(text)}, a negative number")
    return int(number) if number.is_integer() else number


def blank(cell: object) -> bool:
    """An empty cell: None or NaN (spreadsheets), or only whitespace."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return True
    return not str(cell).strip()


def required_text(cell: object, where: str, column: str) -> str:
    """A cell that must hold text, its whitespace runs collapsed; empty is an error."""
    if blank(cell):
        raise TacitError(f"{where}: column {column!r} is empty")
    return " ".join(str(cell).split())


def _participants(cell: str) -> list[str]:
    """Participant ids from a CSLB participant list such as `p 1 2 3 / 4 9`."""
    return [tok for tok in cell.replace("/", " ").split() if tok.isdigit()]


def merge_duplicates(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merge rows that repeat a (concept, feature) pair.

    Rule (every format): production frequency is the number of participants who produced the
    feature, so a merged pair's pf is the number of distinct participants over the union of
    the rows' participant lists, and the largest row pf where there are no lists (McRae,
    generic tables: the participants of the rows may overlap, so their sum could count one
    twice); the feature type is that of the row with the highest pf (the first such row on a
    tie). The merged row takes the place of the pair's first occurrence.
    """
    key = ["concept", "feature"]
    dup_mask = rows.duplicated(key, keep=False)
    if not dup_mask.any():
        return rows, pd.DataFrame(columns=["concept", "feature", "pfs", "pf"])
    report = []
    replacements: dict[int, dict] = {}
    for (concept, feature), group in rows[dup_mask].groupby(key, sort=False):
        ids = set().union(*(_participants(c) for c in group["participants"]))
        pf = len(ids) if ids else group["pf"].max().item()
        best = group.loc[group["pf"].idxmax()]
        lists = " / ".join(c.strip() for c in group["participants"] if c.strip())
        replacements[group.index[0]] = {
            "pf": pf,
            "feature_type": best["feature_type"],
            "participants": lists,
        }
        pfs = " ".join(str(p) for p in group["pf"])
        report.append({"concept": concept, "feature": feature, "pfs": pfs, "pf": pf})
    out = rows[~dup_mask | rows.index.isin(list(replacements))].copy()
    for index, values in replacements.items():
        for column, value in values.items():
            out.at[index, column] = value
    return out, pd.DataFrame(report)


def build_norm_set(
    records: Iterable[dict],
    path: Path,
    describe: Describe,
    *,
    format: str,
    columns: Mapping[str, str] | None = None,
    feature_types: bool = True,
) -> NormSet:
    """A NormSet from validated records (`concept, feature, feature_type, pf`, and CSLB's
    `participants` and `domain`): duplicates merged, each distinct feature phrased once by
    `describe`. Records that say their `relation` and `answer` themselves (a generic table in any
    language) keep them, and their feature is the phrase as written: no phrasing rule of
    English touches them."""
    rows = pd.DataFrame.from_records(list(records))
    if rows.empty:
        raise TacitError(f"{path}: header only, no norms")
    if "participants" not in rows:
        rows["participants"] = ""
    alternatives = _alternatives(rows)
    rows, merged = merge_duplicates(rows.drop(columns="alternatives", errors="ignore"))
    rows = rows.reset_index(drop=True)
    lists = rows.pop("participants").astype(str)
    domains: dict[str, str] = {}
    if "domain" in rows:
        for concept, domain in zip(rows["concept"], rows.pop("domain")):
            if domain:
                domains.setdefault(concept, domain)
    whole = all(float(p).is_integer() for p in rows["pf"])
    rows["pf"] = rows["pf"].astype(int if whole else float)
    if "relation" in rows:
        rows["phrase"] = rows["feature"]
    else:
        described = {feature: describe(feature) for feature in rows["feature"].unique()}
        for i, column in enumerate(("phrase", "relation", "answer")):
            rows[column] = rows["feature"].map({f: d[i] for f, d in described.items()})
    return NormSet(
        table=rows[NORM_COLUMNS],
        path=path,
        sha256=file_sha256(path),
        merged=merged,
        format=format,
        columns=dict(columns) if columns else None,
        feature_types=feature_types,
        alternatives=alternatives,
        participants=lists if lists.str.strip().astype(bool).any() else None,
        domains=domains,
    )


def _alternatives(rows: pd.DataFrame) -> dict[tuple[str, str], tuple[str, ...]]:
    """(concept, feature) -> its other wordings (`; `-joined in the records' `alternatives`),
    those of a repeated pair's rows together, each once, the feature itself left out."""
    if "alternatives" not in rows:
        return {}
    found: dict[tuple[str, str], dict[str, None]] = {}
    for concept, feature, cell in zip(rows["concept"], rows["feature"], rows["alternatives"]):
        wordings = (" ".join(w.split()) for w in str(cell).split(";"))
        kept = found.setdefault((concept, feature), {})
        kept.update(dict.fromkeys(w for w in wordings if w and w != feature))
    return {pair: tuple(words) for pair, words in found.items() if words}
