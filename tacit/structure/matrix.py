"""The concept x feature matrix, one type however it was made (from norms, by scoring, by
generation): its concepts, features, values, where it came from and what was left out, written
to a directory that numpy and pandas read (no pickle) and read back exactly.

A matrix directory holds `matrix.npz` (one float64 array, `values`: concepts x features),
`concepts.csv` (concept, domain, category), `features.csv` (feature, relation, feature_type,
phrase)
and `matrix.json` (format, version, shape, provenance, what was left out and why).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError, first_line, shorten
from tacit.core.files import RECORD_LIMIT, json_text, read_input, regular_file, write_files

FORMAT = "tacit concept-feature matrix"
VERSION = 1
VALUES, CONCEPTS, FEATURES, RECORD = "matrix.npz", "concepts.csv", "features.csv", "matrix.json"
CONCEPT_COLUMNS = ["concept", "domain", "category"]
FEATURE_COLUMNS = ["feature", "relation", "feature_type", "phrase"]
Grouping = Literal["category", "domain"]


@dataclass(frozen=True)
class Provenance:
    """How a matrix was made.

    source: what made it: `norms` (a norm set's production frequencies), `aligned` (a matrix
        put on another's concepts or features), `prior removed` (tacit.structure.prior), or
        what a probe names (`scores`, `generation`).
    path: the file it was read from, where there is one.
    sha256: that file's digest.
    options: everything else that decided its values (JSON-serialisable).
    """

    source: str
    path: str | None = None
    sha256: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # as matrix.json gives them back: tuples become lists
        object.__setattr__(self, "options", json.loads(json.dumps(dict(self.options), default=str)))

    def record(self) -> dict[str, Any]:
        """As matrix.json writes it."""
        return {
            "source": self.source,
            "path": self.path,
            "sha256": self.sha256,
            "options": dict(self.options),
        }


@dataclass(frozen=True, eq=False)
class ConceptFeatureMatrix:
    """Concepts x features and how they were made.

    Attributes:
        concepts: row names, distinct.
        features: column names, distinct.
        values: float64 array (len(concepts), len(features)), finite, read-only.
        relations: each feature's relation (`has`, `is`, `is a`, `has a`, `made of`, `does`,
            `other`: the NormSet's).
        feature_types: each feature's type (one of tacit.norms.FEATURE_TYPES, the type most of
            its rows give in the norms).
        phrases: each feature as a verb phrase (the NormSet's `phrase`: `has fur`, `flies`),
            what features of two notations are matched by (tacit.structure.align).
        domains: each concept's domain where known (CSLB: `living`, `nonliving`), else None.
        categories: each concept's category where known (tacit.structure.concepts), else None.
        provenance: how the values were made.
        left_out: reason -> the concepts, features or `concept: feature` pairs left out for it.
    """

    concepts: tuple[str, ...]
    features: tuple[str, ...]
    values: np.ndarray
    relations: tuple[str, ...]
    feature_types: tuple[str, ...]
    phrases: tuple[str, ...]
    domains: tuple[str | None, ...]
    categories: tuple[str | None, ...]
    provenance: Provenance
    left_out: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=np.float64, order="C")
        values.setflags(write=False)
        fixed = {
            "concepts": tuple(self.concepts),
            "features": tuple(self.features),
            "relations": tuple(self.relations),
            "feature_types": tuple(self.feature_types),
            "phrases": tuple(self.phrases),
            "domains": tuple(self.domains),
            "categories": tuple(self.categories),
            "left_out": {str(k): tuple(map(str, v)) for k, v in self.left_out.items()},
            "values": values,
        }
        for name, value in fixed.items():
            object.__setattr__(self, name, value)
        problem = _problem(self)
        if problem:
            raise ValueError(problem)

    @property
    def shape(self) -> tuple[int, int]:
        """(concepts, features)."""
        rows, columns = self.values.shape
        return rows, columns

    def groups(self, by: Grouping) -> tuple[str | None, ...]:
        """Each concept's category or domain."""
        return self.categories if by == "category" else self.domains

    def table(self) -> pd.DataFrame:
        """The values as a DataFrame: a row per concept, a column per feature."""
        return pd.DataFrame(self.values, index=list(self.concepts), columns=list(self.features))

    def select(
        self, concepts: Sequence[str] | None = None, features: Sequence[str] | None = None
    ) -> ConceptFeatureMatrix:
        """The matrix on these concepts and features (in the order given; None: all)."""
        rows = _positions(self.concepts, concepts, "concept")
        columns = _positions(self.features, features, "feature")
        return replace(
            self,
            concepts=tuple(self.concepts[i] for i in rows),
            features=tuple(self.features[j] for j in columns),
            values=self.values[np.ix_(rows, columns)],
            relations=tuple(self.relations[j] for j in columns),
            feature_types=tuple(self.feature_types[j] for j in columns),
            phrases=tuple(self.phrases[j] for j in columns),
            domains=tuple(self.domains[i] for i in rows),
            categories=tuple(self.categories[i] for i in rows),
        )

    def leaving_out(self, reason: str, items: Iterable[str]) -> ConceptFeatureMatrix:
        """The same matrix recording `items` as left out for `reason` (added to any there)."""
        found = tuple(items)
        if not found:
            return self
        left = dict(self.left_out)
        left[reason] = left.get(reason, ()) + found
        return replace(self, left_out=left)

    def counts_left_out(self) -> dict[str, int]:
        """reason -> how many were left out for it."""
        return {reason: len(items) for reason, items in self.left_out.items()}

    def record(self) -> dict[str, Any]:
        """matrix.json: format, version, shape, provenance, what was left out and why."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "shape": list(self.shape),
            "values": VALUES,
            "provenance": self.provenance.record(),
            "left_out": {
                reason: {"count": len(items), "items": list(items)}
                for reason, items in self.left_out.items()
            },
        }

    def files(self) -> dict[str, bytes | str]:
        """The directory's files: name -> content."""
        buffer = io.BytesIO()
        np.savez_compressed(buffer, values=self.values)
        concepts = pd.DataFrame(
            {"concept": self.concepts, "domain": self.domains, "category": self.categories}
        )
        features = pd.DataFrame(
            {
                "feature": self.features,
                "relation": self.relations,
                "feature_type": self.feature_types,
                "phrase": self.phrases,
            }
        )
        return {
            VALUES: buffer.getvalue(),
            CONCEPTS: concepts.to_csv(index=False, lineterminator="\n"),
            FEATURES: features.to_csv(index=False, lineterminator="\n"),
            RECORD: json_text(self.record()),
        }

    def write(self, directory: str | Path) -> Path:
        """Write the matrix's four files into `directory` (made if need be), whole or not at
        all (tacit.core.files.write_files)."""
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            write_files(directory, self.files(), point="matrix")
        except OSError as err:
            raise TacitError(f"{directory}: cannot write the matrix ({err.strerror})") from None
        return directory

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConceptFeatureMatrix):
            return NotImplemented
        same = (
            self.concepts == other.concepts
            and self.features == other.features
            and self.relations == other.relations
            and self.feature_types == other.feature_types
            and self.phrases == other.phrases
            and self.domains == other.domains
            and self.categories == other.categories
            and self.provenance == other.provenance
            and dict(self.left_out) == dict(other.left_out)
        )
        return same and np.array_equal(self.values, other.values)

    __hash__ = None  # type: ignore[assignment]


def _positions(names: tuple[str, ...], wanted: Sequence[str] | None, kind: str) -> list[int]:
    if wanted is None:
        return list(range(len(names)))
    index = {name: i for i, name in enumerate(names)}
    missing = [name for name in wanted if name not in index]
    if missing:
        raise ValueError(f"no {kind} {shorten(missing[0])!r} in the matrix")
    return [index[name] for name in wanted]


def _problem(matrix: ConceptFeatureMatrix) -> str:
    """What is wrong with a matrix's parts ("" where nothing is)."""
    values = matrix.values
    n, m = len(matrix.concepts), len(matrix.features)
    if values.ndim != 2 or values.shape != (n, m):
        return f"values of shape {values.shape} for {n} concepts and {m} features"
    for name, length, of in (
        ("relations", m, "features"),
        ("feature_types", m, "features"),
        ("phrases", m, "features"),
        ("domains", n, "concepts"),
        ("categories", n, "concepts"),
    ):
        if len(getattr(matrix, name)) != length:
            return f"{len(getattr(matrix, name))} {name} for {length} {of}"
    for name in ("concepts", "features"):
        names = getattr(matrix, name)
        if any(not isinstance(x, str) or not x for x in names):
            return f"an empty or non-text name among the {name}"
        if len(set(names)) != len(names):
            twice = next(x for x in names if names.count(x) > 1)
            return f"{name[:-1]} {shorten(twice)!r} occurs twice"
    if not np.isfinite(values).all():
        return "values that are not finite numbers (NaN or infinite)"
    return ""


def _missing(path: Path) -> TacitError:
    return TacitError(
        f"{path}: missing; a matrix directory holds {VALUES}, {CONCEPTS}, {FEATURES} and {RECORD}"
    )


def _read_record(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise _missing(path)
    try:
        record = json.loads(read_input(path, limit=RECORD_LIMIT).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TacitError(f"{path}: not readable JSON ({shorten(first_line(err))})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise TacitError(f'{path}: not a {FORMAT} record (no "format": "{FORMAT}")')
    if record.get("version") != VERSION:
        raise TacitError(
            f"{path}: version {shorten(record.get('version'))}; this tacit reads version {VERSION}"
        )
    shape = record.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(s, int) for s in shape)):
        raise TacitError(f'{path}: "shape" must be [concepts, features]')
    provenance = record.get("provenance")
    if not isinstance(provenance, dict) or not isinstance(provenance.get("source"), str):
        raise TacitError(f'{path}: "provenance" must be an object with a "source"')
    left = record.get("left_out", {})
    if not isinstance(left, dict) or not all(
        isinstance(v, dict)
        and isinstance(v.get("items"), list)
        and v.get("count") == len(v["items"])
        for v in left.values()
    ):
        raise TacitError(
            f'{path}: "left_out" must map each reason to {{"count": N, "items": [N items]}}'
        )
    return record


def _read_values(path: Path, shape: list[int]) -> np.ndarray:
    if not path.is_file():
        raise _missing(path)
    regular_file(path)  # a file of a size tacit reads
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "values" not in archive.files:
                raise TacitError(f"{path}: holds no array named 'values'")
            values = archive["values"]
    except TacitError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
        raise TacitError(
            f"{path}: not a readable .npz of numbers ({shorten(first_line(err))})"
        ) from None
    if values.dtype != np.float64:
        raise TacitError(f"{path}: 'values' are {values.dtype}, not float64")
    if list(values.shape) != shape:
        raise TacitError(f"{path}: 'values' of shape {list(values.shape)}; {RECORD} says {shape}")
    if not np.isfinite(values).all():
        bad = np.argwhere(~np.isfinite(values))[0]
        raise TacitError(f"{path}: 'values' not finite at row {bad[0]}, column {bad[1]}")
    return values


def _read_names(path: Path, columns: list[str], rows: int) -> pd.DataFrame:
    if not path.is_file():
        raise _missing(path)
    regular_file(path)  # a file of a size tacit reads
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise TacitError(f"{path}: not a readable CSV table ({shorten(first_line(err))})") from None
    if list(table.columns) != columns:
        raise TacitError(
            f"{path}: columns {shorten(', '.join(map(str, table.columns)))}; expected "
            f"{', '.join(columns)}"
        )
    if len(table) != rows:
        raise TacitError(f"{path}: {len(table)} rows; {RECORD} says {rows}")
    names = table[columns[0]]
    if (names == "").any():
        raise TacitError(f"{path}:{int(np.argmax(names == '')) + 2}: empty {columns[0]}")
    twice = names.duplicated()
    if twice.any():
        row = int(np.argmax(twice))
        raise TacitError(f"{path}:{row + 2}: {columns[0]} {shorten(names[row])!r} occurs twice")
    return table


def read_matrix(directory: str | Path) -> ConceptFeatureMatrix:
    """Read a matrix directory (ConceptFeatureMatrix.write) back exactly; anything malformed is
    one TacitError naming the file (and line) and the problem."""
    directory = Path(directory)
    if not directory.is_dir():
        raise TacitError(f"{directory}: no such matrix directory")
    record = _read_record(directory / RECORD)
    n, m = record["shape"]
    values = _read_values(directory / VALUES, record["shape"])
    concepts = _read_names(directory / CONCEPTS, CONCEPT_COLUMNS, n)
    features = _read_names(directory / FEATURES, FEATURE_COLUMNS, m)
    made = record["provenance"]
    return ConceptFeatureMatrix(
        concepts=tuple(concepts["concept"]),
        features=tuple(features["feature"]),
        values=values,
        relations=tuple(features["relation"]),
        feature_types=tuple(features["feature_type"]),
        phrases=tuple(features["phrase"]),
        domains=tuple(d or None for d in concepts["domain"]),
        categories=tuple(c or None for c in concepts["category"]),
        provenance=Provenance(
            source=made["source"],
            path=made.get("path"),
            sha256=made.get("sha256"),
            options=made.get("options") or {},
        ),
        left_out={reason: tuple(v["items"]) for reason, v in record["left_out"].items()},
    )
