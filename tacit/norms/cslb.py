"""CSLB concept property norms (Devereux et al. 2014): `norms.dat`, tab-separated with the header
`domain, feature type, concept, feature, pf, feature alternatives, participant list`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, shorten
from tacit.norms.formats import NormFormat, NormSource
from tacit.norms.normset import (
    FEATURE_TYPES,
    NormSet,
    build_norm_set,
    pf_value,
    required_text,
)
from tacit.norms.phrasing import feature_to_phrase, relation_and_answer
from tacit.norms.tables import delimited_rows, locate_columns

# The CSLB header names we need -> our column names.
REQUIRED = {"concept": "concept", "feature": "feature", "feature type": "feature_type", "pf": "pf"}
PARTICIPANTS = "participant list"
DOMAIN = "domain"
ALTERNATIVES = "feature alternatives"  # the participants' own wordings, `; `-joined
SIGNATURE = ("domain", "feature alternatives", "participant list")  # only CSLB has these
# sha256 of the norms.dat the CSLB hands out, the file the paper used: its published counts
# (elicitation's prompts per relation) are printed beside ours only for this file
# (tests/data/test_norms.py checks it against the file where ../shared/data has it)
PAPER_SHA256 = "d81d512028acada062947a1ea1b588db3a2875ce14bd5052d6e9b0ccb55b6197"
EXPECTED = f"a tab-separated CSLB norms file with columns {', '.join(REQUIRED)}"


def describe(feature: str) -> tuple[str, str, str]:
    """(phrase, relation, answer) of a feature in CSLB's notation (tacit.norms.phrasing)."""
    return (feature_to_phrase(feature), *relation_and_answer(feature))


def read_cslb(path: Path, lines: Sequence[str]) -> NormSet:
    """Validate every line of a CSLB norms file (its text lines, header first)."""
    header = [name.strip().lower() for name in lines[0].split("\t")]
    wanted = {name: name for name in REQUIRED}
    position = locate_columns(header, wanted, f"{path}:1", EXPECTED)
    participants_at = header.index(PARTICIPANTS) if PARTICIPANTS in header else None
    domain_at = header.index(DOMAIN) if DOMAIN in header else None
    alternatives_at = header.index(ALTERNATIVES) if ALTERNATIVES in header else None
    records = []
    for number, fields in delimited_rows(path, lines, "\t", len(header)):
        where = f"{path}:{number}"
        record: dict[str, Any] = {
            ours: fields[position[theirs]].strip() for theirs, ours in REQUIRED.items()
        }
        for column in ("concept", "feature"):
            record[column] = required_text(record[column], where, column)
        record["pf"] = pf_value(record["pf"], where, "pf", whole=True)
        if record["feature_type"] not in FEATURE_TYPES:
            raise TacitError(
                f"{where}: column 'feature type' holds an unknown type "
                f"{shorten(record['feature_type'])!r}; expected one of {', '.join(FEATURE_TYPES)}"
            )
        record["participants"] = fields[participants_at] if participants_at is not None else ""
        record["domain"] = fields[domain_at].strip() if domain_at is not None else ""
        record["alternatives"] = fields[alternatives_at] if alternatives_at is not None else ""
        records.append(record)
    return build_norm_set(records, path, describe, format="cslb")


class CSLBFormat(NormFormat):
    """CSLB's norms.dat."""

    name = "cslb"
    description = "CSLB's norms.dat: tab-separated, columns concept, feature, feature type, pf"

    def recognises(self, source: NormSource) -> bool:
        if source.is_workbook:
            return False
        delimiter, names = source.header
        return delimiter == "\t" and bool({n.casefold() for n in names} & set(SIGNATURE))

    def read(self, source: NormSource) -> NormSet:
        return read_cslb(source.path, source.lines)


FORMAT = CSLBFormat()
