"""Read any norms file into a NormSet: CSLB's norms.dat, McRae's workbook (or a CSV/TSV export of
its sheet), or a generic table. The format is recognised from the file, or said with format=."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tacit.core.errors import TacitError, shorten
from tacit.norms import cslb, generic, mcrae
from tacit.norms.normset import FEATURE_TYPES, NORM_COLUMNS, NormSet
from tacit.norms.tables import (
    XLS_MAGIC,
    XLSX_MAGIC,
    check_file,
    file_start,
    read_lines,
    split_header,
)

__all__ = ["FEATURE_TYPES", "FORMATS", "NORM_COLUMNS", "NormSet", "detect_format", "read_norms"]

# Each format, and how a file shows it (for the error that lists them).
FORMATS = {
    "cslb": "CSLB's norms.dat: tab-separated, columns concept, feature, feature type, pf",
    "mcrae": "McRae's .xlsx (sheet concepts_features) or a CSV/TSV export of that sheet: "
    "columns Concept, Feature, BR_Label, Prod_Freq",
    "generic": "CSV/TSV with columns concept, feature, pf[, feature_type]",
}


def _unknown_format(path: Path, names: list[str]) -> TacitError:
    known = "; ".join(f"{name} ({how})" for name, how in FORMATS.items())
    return TacitError(
        f"{path}:1: not a norms format tacit knows (header: {shorten(' | '.join(names))!r}); "
        f"known formats: {known}; say which with format= (--norms-format), other column names "
        "with columns= (--norms-columns concept=NAME,feature=NAME,pf=NAME)"
    )


def detect_format(path: Path, names: list[str], delimiter: str, columns: Mapping | None) -> str:
    """Which reader a text table's header calls for (see FORMATS), else a one-line error."""
    folded = {name.casefold() for name in names}
    if columns:
        return "generic"
    if delimiter == "\t" and folded & set(cslb.SIGNATURE):
        return "cslb"
    if folded & {name.casefold() for name in mcrae.SIGNATURE}:
        return "mcrae"
    if folded & {name.casefold() for name in generic.DEFAULT_COLUMNS.values()}:
        return "generic"
    raise _unknown_format(path, names)


def read_norms(
    path: str | Path, *, format: str | None = None, columns: Mapping[str, str] | None = None
) -> NormSet:
    """Read and validate a norms file of any known format (FORMATS).

    Args:
        format: `cslb`, `mcrae` or `generic`; None recognises it from the file (an .xlsx is
            McRae's workbook; a text table by its header).
        columns: for a generic table, our column -> the file's header name, e.g.
            `{"concept": "Word", "feature": "Property", "pf": "Count"}` (see
            generic.parse_columns for the command line's `concept=Word,...`).

    Raises:
        TacitError: one line naming the file, the line (or sheet and row) and column, and the
            problem, for anything we cannot use.
    """
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise TacitError(f"norms format {format!r}: expected one of {', '.join(FORMATS)}")
    if columns and format not in (None, "generic"):
        raise TacitError(
            f"{path}: column names (columns=, --norms-columns) apply to generic tables only, "
            f"not to the {format} format"
        )
    check_file(path)
    start = file_start(path)
    if start.startswith(XLS_MAGIC):
        raise TacitError(f"{path}: an Excel 97-2003 (.xls) workbook; save it as .xlsx or CSV")
    if start.startswith(XLSX_MAGIC) and format in (None, "mcrae"):
        return mcrae.read_mcrae_xlsx(path)
    if start.startswith(XLSX_MAGIC) and format == "generic":
        raise TacitError(f"{path}: an .xlsx workbook; a generic table must be CSV or TSV text")
    lines = read_lines(path)
    delimiter, names = split_header(lines[0])
    format = format or detect_format(path, names, delimiter, columns)
    if format == "cslb":
        return cslb.read_cslb(path, lines)
    if format == "mcrae":
        return mcrae.read_mcrae_text(path, lines)
    return generic.read_generic(path, lines, columns)
