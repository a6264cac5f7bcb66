"""A model's norms as norms: its feature listing written in CSLB's own columns, so that
`--norms FILE` (tacit.norms.read_norms) reads it as it reads CSLB's norms.dat, and a model
becomes a pool of participants (its draws): people against a model and a model against a
model go through the same code, the split-half ceiling included."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError, shorten
from tacit.core.files import CONTROL_IN_VALUE, write_atomic
from tacit.norms import FEATURE_TYPES
from tacit.norms.generic import DEFAULT_FEATURE_TYPE

HEADER = [
    "domain",
    "feature type",
    "concept",
    "feature",
    "pf",
    "feature alternatives",
    "participant list",
]
COUNT_COLUMNS = ["concept", "feature", "draw", "count"]


def _check(value: object, where: str, what: str) -> str:
    text = " ".join(str(value).split())
    if not text:
        raise TacitError(f"{where}: {what} is empty")
    if CONTROL_IN_VALUE.search(str(value).replace("\n", " ").replace("\t", " ")):
        raise TacitError(f"{where}: {what} {shorten(value)!r} holds a control character")
    return text


def _wording(value: object) -> str:
    """A wording as one of `feature alternatives`' `;`-separated parts."""
    return " ".join(str(value).replace(";", ",").split())


def model_norms_table(
    counts: pd.DataFrame,
    *,
    feature_types: Mapping[str, str] | None = None,
    domains: Mapping[str, str] | None = None,
    min_pf: int = 1,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """CSLB's table of a model's listings.

    Args:
        counts: one row per (concept, feature, draw): `concept`, `feature` (in CSLB's
            notation, `has fur_hair`, `does fly`: a norms feature the answer matched, or the
            model's own), `draw` (a whole number from 1: the sample, as a participant), `count`
            (how often that draw gave it; rows of 0 are not listings), and optionally
            `wording` (the answer's own words, kept as a feature alternative).
        feature_types: feature -> its type (the norms'); others get `encyclopaedic`, counted.
        domains: concept -> domain (CSLB's `living`, `nonliving`), else empty.
        min_pf: pairs that fewer draws gave are left out, counted (CSLB lists pf >= 2).

    pf is the number of distinct draws that gave the pair; `participant list` names them as
    CSLB does (`p 1 4 7`), in groups by wording (`p 1 4 / 7`, in the order of `feature
    alternatives`) where wordings are given; rows go concept by concept (first appearance),
    pf decreasing, then feature. Returns the table and a record of what was left out.
    """
    missing = [c for c in COUNT_COLUMNS if c not in counts.columns]
    if missing:
        raise TacitError(f"model norms: counts lack column(s) {', '.join(missing)}")
    if min_pf < 1:
        raise TacitError(f"model norms: min_pf must be at least 1, not {min_pf}")
    rows = []
    for number, row in enumerate(counts.itertuples(index=False), start=1):
        where = f"model norms, counts row {number}"
        record = row._asdict()
        try:
            draw = int(record["draw"])
            count = float(record["count"])
        except (TypeError, ValueError):
            raise TacitError(f"{where}: draw and count must be numbers") from None
        if draw < 1 or draw != float(record["draw"]):
            raise TacitError(
                f"{where}: draw {shorten(record['draw'])!r} is not a whole number >= 1"
            )
        if not count >= 0:
            raise TacitError(f"{where}: count {shorten(record['count'])!r} is not a number >= 0")
        if count == 0:
            continue
        rows.append(
            {
                "concept": _check(record["concept"], where, "concept"),
                "feature": _check(record["feature"], where, "feature"),
                "draw": draw,
                "wording": _wording(record.get("wording", "") or "") if "wording" in record else "",
            }
        )
    listed = pd.DataFrame(rows, columns=["concept", "feature", "draw", "wording"])
    types = dict(feature_types or {})
    bad = {f: t for f, t in types.items() if t not in FEATURE_TYPES}
    if bad:
        feature, kind = next(iter(bad.items()))
        raise TacitError(
            f"model norms: feature {shorten(feature)!r} has type {shorten(kind)!r}; types are "
            + ", ".join(FEATURE_TYPES)
        )
    out, dropped, untyped = [], [], set()
    for (concept, feature), group in listed.groupby(["concept", "feature"], sort=False):
        draws = sorted(set(group["draw"]))
        if len(draws) < min_pf:
            dropped.append(f"{concept}: {feature}")
            continue
        wordings = [w for w in dict.fromkeys(group["wording"]) if w]
        if wordings:
            parts = [
                " ".join(str(d) for d in sorted(set(group.loc[group["wording"] == w, "draw"])))
                for w in wordings
            ]
            unworded = sorted(set(group.loc[group["wording"] == "", "draw"]))
            if unworded:
                wordings.append(feature)
                parts.append(" ".join(map(str, unworded)))
            listing = "p " + " / ".join(parts)
        else:
            wordings, listing = [feature], "p " + " ".join(map(str, draws))
        if feature not in types:
            untyped.add(feature)
        out.append(
            {
                "domain": (domains or {}).get(concept, ""),
                "feature type": types.get(feature, DEFAULT_FEATURE_TYPE),
                "concept": concept,
                "feature": feature,
                "pf": len(draws),
                "feature alternatives": "; ".join(wordings),
                "participant list": listing,
            }
        )
    table = pd.DataFrame(out, columns=HEADER)
    if not table.empty:
        order = {c: i for i, c in enumerate(dict.fromkeys(table["concept"]))}
        table = table.assign(_c=table["concept"].map(order)).sort_values(
            ["_c", "pf", "feature"], ascending=[True, False, True], kind="stable"
        )
        table = table.drop(columns="_c").reset_index(drop=True)
    record = {
        "rows": len(table),
        "concepts": int(table["concept"].nunique()) if len(table) else 0,
        "draws": int(listed["draw"].nunique()) if len(listed) else 0,
        "min_pf": min_pf,
        "left_out": {f"pairs given by fewer than {min_pf} draws": dropped},
        "untyped": {f"features typed {DEFAULT_FEATURE_TYPE} (no type given)": sorted(untyped)},
    }
    return table, record


def write_model_norms(
    counts: pd.DataFrame,
    path: str | Path,
    *,
    feature_types: Mapping[str, str] | None = None,
    domains: Mapping[str, str] | None = None,
    min_pf: int = 1,
) -> dict[str, Any]:
    """Write a model's listings (model_norms_table) as a CSLB norms file at `path`, tab-
    separated, whole or not at all; returns what was written and left out. Nothing listed is
    an error: a norms file needs a row."""
    table, record = model_norms_table(
        counts, feature_types=feature_types, domains=domains, min_pf=min_pf
    )
    if table.empty:
        raise TacitError(f"{path}: nothing to write: no pair given by {min_pf} or more draws")
    # tab-separated as CSLB's norms.dat is: no quoting (no value holds a tab or a line end)
    lines = ["\t".join(HEADER)] + [
        "\t".join(map(str, row)) for row in table.itertuples(index=False)
    ]
    text = "\n".join(lines) + "\n"
    try:
        write_atomic(path, text)
    except OSError as err:
        raise TacitError(f"{path}: cannot write the norms ({err.strerror})") from None
    return record
