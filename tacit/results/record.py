"""result.json, which a run writes beside its tables (RESULT_FILE): each table's column types,
which empty cells were missing values (and whether None or NaN), the printed summary and its
notes, and which files are figures, so that tacit.results.reading reads the tables back as they
were in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

RESULT_FILE = "result.json"


class Written(Protocol):
    """What result.json records of a result (tacit.results.result.ProbeResult)."""

    rows_file: str
    prompts: pd.DataFrame
    summary: pd.DataFrame
    extra: dict[str, pd.DataFrame]
    figures: Any
    files: Any
    text: str
    notes: list[str]


def column_types(table: pd.DataFrame) -> dict[str, Any]:
    """A table's record in result.json: `columns` (name -> dtype, in order) and `missing`
    (text columns with missing values -> `None` or `NaN`: how they are restored from the
    empty fields they are written as)."""
    missing = {}
    for column in table.columns:
        values = table[column]
        if is_text(str(values.dtype)) and values.isna().any():
            first = values[values.isna()].iloc[0]
            missing[str(column)] = "None" if first is None else "NaN"
    return {"columns": {str(c): str(table[c].dtype) for c in table.columns}, "missing": missing}


def result_record(result: Written) -> dict[str, Any]:
    """What result.json holds for a result (see the module docstring)."""
    tables = {result.rows_file: result.prompts, "summary.csv": result.summary}
    tables.update({f"{name}.csv": table for name, table in result.extra.items()})
    return {
        "rows_file": result.rows_file,
        "tables": {name: column_types(table) for name, table in tables.items()},
        "figures": list(result.figures),
        "files": list(result.files),
        "text": result.text,
        "notes": list(result.notes),
    }


def is_text(dtype: str) -> bool:
    """Object columns and pandas' string dtypes (`str` from pandas 3 on)."""
    return dtype in ("object", "str", "string")
