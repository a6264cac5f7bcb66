"""McRae, Cree, Seidenberg & McNorgan (2005) feature production norms: the published workbook
`CONCS_FEATS_concstats_brm.xlsx` (sheet `concepts_features`), or a CSV/TSV export of that sheet.

Columns used: Concept, Feature (McRae's `has_4_legs` notation, phrased by
tacit.norms.mcrae_phrasing), BR_Label (the brain-region feature classes, mapped onto our feature
types by BR_LABELS) and Prod_Freq (participants out of 30 who produced the feature).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from tacit.core.errors import TacitError, shorten
from tacit.norms.formats import NormFormat, NormSource
from tacit.norms.mcrae_phrasing import describe
from tacit.norms.normset import NormSet, build_norm_set, pf_value, required_text
from tacit.norms.tables import delimited_rows, locate_columns, split_header, xlsx_rows

SHEET = "concepts_features"
# Our column -> McRae's header name.
COLUMNS = {"concept": "Concept", "feature": "Feature", "br_label": "BR_Label", "pf": "Prod_Freq"}
SIGNATURE = ("BR_Label", "Prod_Freq", "WB_Label")  # header names only McRae's files have
EXPECTED = f"McRae's sheet {SHEET} with columns {', '.join(COLUMNS.values())}"

# McRae's BR_Label (Cree & McRae 2003's brain-region taxonomy) -> our feature types.
BR_LABELS = {
    "visual-form_and_surface": "visual perceptual",
    "visual-colour": "visual perceptual",
    "visual-motion": "visual perceptual",
    "function": "functional",
    "encyclopaedic": "encyclopaedic",
    "taxonomic": "taxonomic",
    "tactile": "other perceptual",
    "sound": "other perceptual",
    "taste": "other perceptual",
    "smell": "other perceptual",
}


def _records(
    rows: Iterable[tuple[int, Sequence]], positions: dict[str, int], place: Callable[[int], str]
) -> Iterator[dict]:
    """Validated records from (row number, cells); `place` says where a row is."""
    for number, cells in rows:
        where = place(number)
        cell = {ours: cells[at] if at < len(cells) else None for ours, at in positions.items()}
        label = "" if cell["br_label"] is None else str(cell["br_label"]).strip()
        if label not in BR_LABELS:
            raise TacitError(
                f"{where}: column 'BR_Label' holds {shorten(label)!r}, not a McRae feature "
                f"class; expected one of {', '.join(BR_LABELS)}"
            )
        yield {
            "concept": required_text(cell["concept"], where, COLUMNS["concept"]),
            "feature": required_text(cell["feature"], where, COLUMNS["feature"]),
            "feature_type": BR_LABELS[label],
            "pf": pf_value(cell["pf"], where, COLUMNS["pf"], whole=True),
        }


def read_mcrae_xlsx(path: Path) -> NormSet:
    """McRae's published workbook: sheet concepts_features; errors name sheet and row."""
    names, rows = xlsx_rows(path, SHEET)
    positions = locate_columns(names, COLUMNS, f"{path}: sheet {SHEET!r}, row 1", EXPECTED)
    records = _records(rows, positions, lambda number: f"{path}: sheet {SHEET!r}, row {number}")
    return build_norm_set(records, path, describe, format="mcrae")


def read_mcrae_text(path: Path, lines: Sequence[str]) -> NormSet:
    """A CSV or TSV export of the concepts_features sheet; errors name the line."""
    delimiter, names = split_header(lines[0])
    positions = locate_columns(names, COLUMNS, f"{path}:1", EXPECTED)
    rows = delimited_rows(path, lines, delimiter, len(names))
    records = _records(rows, positions, lambda number: f"{path}:{number}")
    return build_norm_set(records, path, describe, format="mcrae")


class McRaeFormat(NormFormat):
    """McRae's published workbook, or a CSV/TSV export of its sheet."""

    name = "mcrae"
    description = (
        f"McRae's .xlsx (sheet {SHEET}) or a CSV/TSV export of that sheet: columns "
        f"{', '.join(COLUMNS.values())}"
    )

    def recognises(self, source: NormSource) -> bool:
        if source.is_workbook:
            return True
        _, names = source.header
        return bool({n.casefold() for n in names} & {n.casefold() for n in SIGNATURE})

    def read(self, source: NormSource) -> NormSet:
        if source.is_workbook:
            return read_mcrae_xlsx(source.path)
        return read_mcrae_text(source.path, source.lines)


FORMAT = McRaeFormat()
