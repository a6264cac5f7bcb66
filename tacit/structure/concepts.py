"""Concept tables: a file naming each concept's category (CSLB's `concepts.dat`: `Num,
Category, Concept, In McRae, McRae label`; any tab-, comma- or semicolon-separated table with
a `concept` and a `category` column), read with one-line errors, and categories put on a
matrix's concepts by name (tacit.structure.names: the same name, else the same normal form)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from tacit.core.errors import TacitError
from tacit.norms.tables import check_file, delimited_rows, locate_columns, read_lines, split_header
from tacit.structure.matrix import ConceptFeatureMatrix
from tacit.structure.names import concept_keys, match_names

NO_CATEGORY = "concepts without a category"
UNUSED = "concepts of the categories not in the matrix"


def read_concepts(path: str | Path) -> pd.DataFrame:
    """A concept table: every column, named as the file names them in lower case, its
    `concept` and `category` columns required (found ignoring case) and never empty.

    Raises:
        TacitError: one line naming the file, the line and the problem.
    """
    path = Path(path)
    check_file(path)
    lines = read_lines(path)
    delimiter, names = split_header(lines[0])
    wanted = {"concept": "concept", "category": "category"}
    position = locate_columns(names, wanted, f"{path}:1", "a table with columns concept, category")
    rows = []
    for number, fields in delimited_rows(path, lines, delimiter, len(names)):
        row = {name.lower(): value.strip() for name, value in zip(names, fields)}
        for column in wanted:
            if not fields[position[column]].strip():
                raise TacitError(f"{path}:{number}: column {names[position[column]]!r} is empty")
        row["concept"] = fields[position["concept"]].strip()
        row["category"] = fields[position["category"]].strip()
        rows.append(row)
    if not rows:
        raise TacitError(f"{path}: header only, no concepts")
    table = pd.DataFrame(rows)
    twice = table["concept"].duplicated()
    if twice.any():
        raise TacitError(f"{path}: concept {table['concept'][twice].iloc[0]!r} is listed twice")
    return table


def categories_from(source: Mapping[str, str] | str | Path) -> dict[str, str]:
    """concept -> category, from a mapping or a concept table's file (read_concepts)."""
    if isinstance(source, Mapping):
        return {str(k): str(v) for k, v in source.items()}
    table = read_concepts(source)
    return dict(zip(table["concept"], table["category"]))


def with_categories(
    matrix: ConceptFeatureMatrix, categories: Mapping[str, str] | str | Path
) -> ConceptFeatureMatrix:
    """The matrix with each concept's category, matched by name (tacit.structure.names: the
    same name, the same normal form, the same without a sense label); left out: the matrix's
    concepts that got none, and the table's concepts that are not in the matrix."""
    given = categories_from(categories)
    found = match_names(list(matrix.concepts), list(given), keys=concept_keys())
    named = [given[found.pairs[c]] if c in found.pairs else None for c in matrix.concepts]
    done = replace(matrix, categories=tuple(named))
    done = done.leaving_out(NO_CATEGORY, (c for c, g in zip(matrix.concepts, named) if g is None))
    unused = [n for names in found.left_second.values() for n in names]
    return done.leaving_out(UNUSED, unused)


def other_names(path: str | Path, column: str = "mcrae label") -> dict[str, str]:
    """Another norm set's name -> the table's concept, where the table names them (CSLB's
    concepts.dat: `McRae label`); empty where it has no such column."""
    table = read_concepts(path)
    if column not in table.columns:
        return {}
    named = table[table[column] != ""]
    return dict(zip(named[column], named["concept"]))
