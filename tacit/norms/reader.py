"""Read a CSLB concept-property norms file into a NormSet, validating every line."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from tacit.errors import TacitError
from tacit.files import file_sha256
from tacit.norms.phrasing import feature_to_phrase, relation_and_answer

# The CSLB header names we need, and the names of our columns.
_REQUIRED = {"concept": "concept", "feature": "feature", "feature type": "feature_type", "pf": "pf"}
_PARTICIPANTS = "participant list"

FEATURE_TYPES = (
    "visual perceptual",
    "other perceptual",
    "functional",
    "encyclopaedic",
    "taxonomic",
)

NORM_COLUMNS = ["concept", "feature", "feature_type", "pf", "relation", "phrase", "answer"]


@dataclass(frozen=True)
class NormSet:
    """Concept-feature norms, one row per (concept, feature).

    The probes read only these columns, never a file's own syntax:

    - `concept`: the name as in the file (sense labels such as `bat_(animal)` kept).
    - `feature`: the feature as in the file (`has fur_hair`).
    - `feature_type`: one of FEATURE_TYPES.
    - `pf`: production frequency.
    - `relation`: `is`, `is a`, `has`, `has a`, `made of` (the elicitation relations, read
      straight off: `is an X` is `is a`, `is a tool` is `is a` and not `is`), else `does` (an
      action: `does X`) or `other`.
    - `phrase`: a third-person verb phrase that can follow "A bear ...": `has fur`, `flies`,
      `is made of metal`.
    - `answer`: for the five elicitation relations, the text after the relation, in CSLB's
      notation: words are separated by spaces and `_` joins alternatives of one word (`has
      fur_hair` -> `fur_hair`: fur or hair). Empty for `does` and `other`.

    Attributes:
        table: the columns above (NORM_COLUMNS), in file order.
        path: the file read.
        sha256: hex digest of the file's bytes, for the manifest.
        merged: one row per concept-feature pair that occurred more than once in the file
            (`concept, feature, pfs, pf`): what was merged and the production frequency kept.
    """

    table: pd.DataFrame
    path: Path
    sha256: str
    merged: pd.DataFrame = field(default_factory=pd.DataFrame)

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


def _participants(cell: str) -> list[str]:
    """Participant ids from a CSLB participant list such as `p 1 2 3 / 4 9`."""
    return [tok for tok in cell.replace("/", " ").split() if tok.isdigit()]


def _merge_duplicates(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merge rows that repeat a (concept, feature) pair.

    Rule: production frequency is the number of participants who produced the feature, so a
    merged pair's pf is the number of distinct participants over the union of the rows'
    participant lists (the largest row pf when the lists are missing); the feature type is
    that of the row with the highest pf (the first such row on a tie). The merged row takes
    the place of the pair's first occurrence.
    """
    key = ["concept", "feature"]
    dup_mask = rows.duplicated(key, keep=False)
    if not dup_mask.any():
        return rows, pd.DataFrame(columns=["concept", "feature", "pfs", "pf"])
    report = []
    keep_index = []
    replacements: dict[int, dict] = {}
    for (concept, feature), group in rows[dup_mask].groupby(key, sort=False):
        ids = set().union(*(_participants(c) for c in group["participants"]))
        pf = len(ids) if ids else int(group["pf"].max())
        best = group.loc[group["pf"].idxmax()]
        first = group.index[0]
        replacements[first] = {"pf": pf, "feature_type": best["feature_type"]}
        keep_index.append(first)
        report.append(
            {
                "concept": concept,
                "feature": feature,
                "pfs": " ".join(str(p) for p in group["pf"]),
                "pf": pf,
            }
        )
    out = rows[~dup_mask | rows.index.isin(keep_index)].copy()
    for index, values in replacements.items():
        for column, value in values.items():
            out.at[index, column] = value
    return out, pd.DataFrame(report)


def read_norms(path: str | Path) -> NormSet:
    """Read and validate a CSLB norms file (tab-separated, header line, any line ends).

    Raises:
        TacitError: naming the file, the line and the problem, for anything we cannot use.
    """
    path = Path(path)
    if path.is_dir():
        raise TacitError(f"{path}: is a directory; give the norms file itself (norms.dat)")
    if not path.is_file():
        raise TacitError(f"{path}: no such norms file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise TacitError(
            f"{path}: not UTF-8 text (byte {err.start}); is this the CSLB norms file?"
        ) from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise TacitError(
            f"{path}: empty file; expected the CSLB norms (tab-separated, header line)"
        )
    header = [name.strip().lower() for name in lines[0].split("\t")]
    missing = [name for name in _REQUIRED if name not in header]
    if missing:
        raise TacitError(
            f"{path}:1: header lacks column(s) {', '.join(repr(m) for m in missing)}; expected a "
            f"tab-separated CSLB norms file with columns {', '.join(_REQUIRED)} (found: "
            f"{', '.join(header[:8])})"
        )
    position = {name: header.index(name) for name in _REQUIRED}
    participants_at = header.index(_PARTICIPANTS) if _PARTICIPANTS in header else None
    records = []
    for number, fields in enumerate(csv.reader(lines[1:], delimiter="\t"), start=2):
        if not any(f.strip() for f in fields):
            continue
        if len(fields) < len(header):
            raise TacitError(
                f"{path}:{number}: {len(fields)} tab-separated fields, the header has {len(header)}"
            )
        record = {ours: fields[position[theirs]].strip() for theirs, ours in _REQUIRED.items()}
        for column in ("concept", "feature"):
            if not record[column]:
                raise TacitError(f"{path}:{number}: column {column!r} is empty")
        try:
            record["pf"] = int(record["pf"])
        except ValueError:
            raise TacitError(
                f"{path}:{number}: column 'pf' holds {record['pf']!r}, not a whole number"
            ) from None
        if record["pf"] < 1:
            raise TacitError(f"{path}:{number}: column 'pf' holds {record['pf']}, below 1")
        if record["feature_type"] not in FEATURE_TYPES:
            raise TacitError(
                f"{path}:{number}: column 'feature type' holds an unknown type "
                f"{record['feature_type']!r}; expected one "
                f"of {', '.join(FEATURE_TYPES)}"
            )
        record["feature"] = " ".join(record["feature"].split())
        record["participants"] = fields[participants_at] if participants_at is not None else ""
        records.append(record)
    if not records:
        raise TacitError(f"{path}: header only, no norms")
    rows, merged = _merge_duplicates(pd.DataFrame.from_records(records))
    rows = rows.drop(columns="participants").reset_index(drop=True)
    rows["pf"] = rows["pf"].astype(int)
    features = rows["feature"].unique()  # a quarter of the rows: phrase each feature once
    rows["phrase"] = rows["feature"].map({f: feature_to_phrase(f) for f in features})
    stated = {feature: relation_and_answer(feature) for feature in features}
    for i, column in enumerate(("relation", "answer")):
        rows[column] = rows["feature"].map({feature: s[i] for feature, s in stated.items()})
    return NormSet(table=rows[NORM_COLUMNS], path=path, sha256=file_sha256(path), merged=merged)
