"""A run directory read back: `tacit.load(RUN)` gives the ProbeResult the run produced, and
`read_table` each of its tables as the run held it, for every command that reads runs.

A CSV file does not say what its columns were (whole floats read as integers, an empty text
cell as missing, a concept named `nan` as a number), so a run also writes result.json
(tacit.results.record): each table's column types and missing cells, the printed summary and
its notes, which files are figures. With it a table reads back with its dtypes and values as
written (float32 precision: tacit.core.files.FLOAT_FORMAT); older runs read as plain CSV.
"""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError, first_line
from tacit.core.files import RECORD_LIMIT, read_input
from tacit.probes.report import report_of
from tacit.results.record import RESULT_FILE, column_types, is_text

if TYPE_CHECKING:
    from tacit.results.result import ProbeResult
    from tacit.vocab.shared import Vocabulary

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def _typed(raw: pd.Series, dtype: str, missing: str | None) -> pd.Series:
    """A column read as text, back in its dtype (the empty field is a missing value)."""
    if dtype == "bool":
        return raw.map({"True": True, "False": False}).astype(bool)
    if is_text(dtype):
        if missing is not None:
            raw = raw.astype(object).where(raw != "", None if missing == "None" else np.nan)
        return raw.astype(dtype)
    kind = pd.api.types.pandas_dtype(dtype)
    if pd.api.types.is_numeric_dtype(kind):
        return pd.to_numeric(raw.replace("", np.nan)).astype(kind)
    return raw.replace("", np.nan).astype(kind)


def read_table(run: str | Path, file: str, types: dict[str, Any] | None = None) -> pd.DataFrame:
    """A table of a run directory, typed as `types` (its result.json record) says; without a
    record, as pandas reads any CSV. An unreadable table is a one-line error naming it."""
    path = Path(run) / file
    if not path.exists() and not path.is_symlink():
        raise TacitError(f"{path}: missing; the run directory is incomplete")
    source = io.BytesIO(read_input(path))  # a regular file of a size tacit reads, only
    try:
        if types is None:
            return pd.read_csv(source)
        return _read_typed(source, types, path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise TacitError(f"{path}: not a readable CSV table ({first_line(err)})") from None


def _read_typed(source: Any, types: dict[str, Any], where: object) -> pd.DataFrame:
    """CSV text (a path or a buffer) read as text, each column back in its recorded type."""
    if not types["columns"]:
        return pd.DataFrame()
    raw = pd.read_csv(source, dtype=str, keep_default_na=False)
    missing = types.get("missing", {})
    for column, dtype in types["columns"].items():
        if column not in raw:
            raise TacitError(f"{where}: no column {column!r}, which the run wrote")
        try:
            raw[column] = _typed(raw[column], dtype, missing.get(column))
        except (ValueError, TypeError) as err:
            raise TacitError(
                f"{where}: column {column!r} is not the {dtype} the run wrote ({first_line(err)})"
            ) from None
    return raw


def as_saved(table: pd.DataFrame) -> pd.DataFrame:
    """A table as it reads back from its saved file (floats to the files' significant digits,
    typed as read_table types it), so that a result in memory and its run directory give the
    same numbers to the last bit."""
    import io

    from tacit.core.files import table_text

    return _read_typed(io.StringIO(table_text(table)), column_types(table), "a table")


def read_record(run: str | Path) -> dict[str, Any] | None:
    """A run's result.json; None for a run written before there was one."""
    path = Path(run) / RESULT_FILE
    if not path.exists() and not path.is_symlink():
        return None
    try:
        record = json.loads(read_input(path, limit=RECORD_LIMIT).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise TacitError(f"{path}: not readable JSON ({first_line(err)})") from None
    if not isinstance(record, dict) or not isinstance(record.get("tables"), dict):
        raise TacitError(f"{path}: not a run's result record (no `tables`)")
    return record


def run_table(run: str | Path, file: str) -> pd.DataFrame:
    """One table of a run directory, typed by its result.json where it has one."""
    record = read_record(run)
    types = record["tables"].get(file) if record is not None else None
    return read_table(run, file, types)


def finished_run(run: str | Path) -> Path:
    """The run directory, or a one-line error naming it and what it holds instead."""
    from tacit.results.rundir import unfinished

    path = Path(run)
    if not path.exists():
        raise TacitError(f"{path}: no such run directory")
    if not path.is_dir():
        raise TacitError(f"{path}: a file, not a run directory")
    held = unfinished(path)
    if held is not None:
        raise TacitError(f"{path}: not a finished run: {held}")
    return path


def _vocabulary(path: Path) -> Vocabulary:
    """vocab.txt as a Vocabulary: its words (the models' token ids are not in the run)."""
    from tacit.vocab.shared import Vocabulary, read_vocab_file

    return Vocabulary(tuple(read_vocab_file(path)), token_ids={}, single_token={})


def load(run: str | Path) -> ProbeResult:
    """The ProbeResult a run directory holds: its tables (typed as the run held them), the
    manifest, the vocabulary's words or the candidates' file, its figures, and its printed
    summary and notes, so that `print(tacit.load(RUN))` prints what the run printed.

    A directory that holds no finished run is a one-line error saying what it holds.

    Examples:
        >>> result = tacit.load("results/retrieve/20250101-120000")  # doctest: +SKIP
        >>> result.summary[["n_props", "mrr"]]  # doctest: +SKIP
    """
    from tacit.core.manifest import read_manifest
    from tacit.probes import registry
    from tacit.results.result import ProbeResult

    path = finished_run(run)
    manifest = read_manifest(path)
    probe = registry.of_run(manifest, path)
    record = read_record(path)
    notes: list[str] = []
    if record is None:  # a run written before result.json
        extra = [name for name in report_of(probe).extra_tables if (path / name).is_file()]
        tables: dict[str, Any] = dict.fromkeys([report_of(probe).rows_file, "summary.csv", *extra])
        files = [p.name for p in sorted(path.glob("*.txt")) if p.name != "vocab.txt"]
        figures = [p.name for p in sorted(path.iterdir()) if p.suffix in FIGURE_SUFFIXES]
        rows_file, text = report_of(probe).rows_file, ""
        notes.append(
            f"note: {path} was written before runs kept {RESULT_FILE}: its tables are typed "
            "as pandas reads them, and its printed summary is not kept"
        )
    else:
        tables, files, figures = record["tables"], record["files"], record["figures"]
        rows_file, text = record["rows_file"], record["text"]
        notes += record["notes"]
    read = {name: read_table(path, name, types) for name, types in tables.items()}
    for name in [*files, *figures]:
        if not (path / name).exists():
            raise TacitError(f"{path / name}: missing; the run directory is incomplete")
    vocab = _vocabulary(path / "vocab.txt") if (path / "vocab.txt").exists() else None
    return ProbeResult(
        read.pop(rows_file),
        read.pop("summary.csv"),
        vocab,
        manifest,
        {Path(name).stem: table for name, table in read.items()},
        rows_file=rows_file,
        text=text,
        notes=notes,
        figures={name: functools.partial(read_input, path / name) for name in figures},
        files={name: read_input(path / name).decode("utf-8", "replace") for name in files},
    )
