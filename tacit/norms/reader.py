"""Read any norms file into a NormSet: CSLB's norms.dat, McRae's workbook (or a CSV/TSV export of
its sheet), a generic table, or a format registered at run time (tacit.norms.formats). The
format is recognised from the file, or said with format=."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tacit.core.errors import TacitError, shorten
from tacit.norms.formats import NORM_FORMATS, NormFormat, NormSource, in_order
from tacit.norms.normset import FEATURE_TYPES, NORM_COLUMNS, NormSet
from tacit.norms.tables import XLS_MAGIC, check_file, file_start

__all__ = ["FEATURE_TYPES", "NORM_COLUMNS", "NormSet", "detect_format", "read_norms"]


def _unknown_format(source: NormSource) -> TacitError:
    known = "; ".join(f"{f.name} ({f.description})" for f in in_order())
    _, names = source.header
    return TacitError(
        f"{source.path}:1: not a norms format tacit knows (header: "
        f"{shorten(' | '.join(names))!r}); known formats: {known}; say which with format= "
        "(--norms-format), other column names with columns= (--norms-columns "
        "concept=NAME,feature=NAME,pf=NAME)"
    )


def detect_format(source: NormSource) -> NormFormat:
    """The format that recognises the file (with column names given, one that takes them), else
    a one-line error listing the formats."""
    for norm_format in in_order():
        if source.columns and not norm_format.takes_columns:
            continue
        if norm_format.recognises(source):
            return norm_format
    raise _unknown_format(source)


def read_norms(
    path: str | Path, *, format: str | None = None, columns: Mapping[str, str] | None = None
) -> NormSet:
    """Read and validate a norms file of any known format (tacit.norms.formats).

    Args:
        format: `cslb`, `mcrae`, `generic` or a format registered by name; None recognises it
            from the file (an .xlsx is McRae's workbook; a text table by its header).
        columns: for a generic table, our column -> the file's header name, e.g.
            `{"concept": "Word", "feature": "Property", "pf": "Count"}` (see
            generic.parse_columns for the command line's `concept=Word,...`).

    Raises:
        TacitError: one line naming the file, the line (or sheet and row) and column, and the
            problem, for anything we cannot use.
    """
    path = Path(path)
    named = NORM_FORMATS.get(format) if format is not None else None
    if columns and named is not None and not named.takes_columns:
        raise TacitError(
            f"{path}: column names (columns=, --norms-columns) apply to generic tables only, "
            f"not to the {format} format"
        )
    check_file(path)
    if file_start(path).startswith(XLS_MAGIC):
        raise TacitError(f"{path}: an Excel 97-2003 (.xls) workbook; save it as .xlsx or CSV")
    source = NormSource(path, columns)
    return (named or detect_format(source)).read(source)
