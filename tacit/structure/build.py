"""The people's matrix: a norm set's production frequencies as a ConceptFeatureMatrix, from
every participant or from a subset of CSLB's (tacit.structure.participants)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.norms import NormSet
from tacit.structure.concepts import with_categories
from tacit.structure.matrix import ConceptFeatureMatrix, Provenance
from tacit.structure.participants import Listings, Participants

Value = Literal["pf", "proportion", "binary"]
VALUES = ("pf", "proportion", "binary")
NOBODY_CONCEPTS = "concepts none of the participants chosen described"
NOBODY_FEATURES = "features none of the participants chosen listed"


def feature_columns(table: pd.DataFrame) -> pd.DataFrame:
    """One row per feature in order of first appearance: its relation, feature type and phrase,
    each the one most of its rows give (the first of them on a tie)."""
    features = list(dict.fromkeys(table["feature"]))

    def most(column: str) -> pd.Series:
        counts = table.groupby(["feature", column], sort=False).size().reset_index(name="n")
        counts = counts.sort_values("n", ascending=False, kind="stable")
        return counts.drop_duplicates("feature").set_index("feature")[column]

    return pd.DataFrame(
        {
            "feature": features,
            "relation": most("relation").reindex(features).to_numpy(),
            "feature_type": most("feature_type").reindex(features).to_numpy(),
            "phrase": most("phrase").reindex(features).to_numpy(),
        }
    )


def _subset_record(participants: Participants) -> object:
    if isinstance(participants, Mapping):
        return {c: sorted(int(p) for p in people) for c, people in participants.items()}
    return sorted({int(p) for p in participants})


def from_norms(
    norms: NormSet,
    *,
    value: Value = "pf",
    participants: Participants | None = None,
    n_participants: int | Mapping[str, int] | None = None,
    categories: Mapping[str, str] | str | Path | None = None,
) -> ConceptFeatureMatrix:
    """The norm set as a concept x feature matrix: a row per concept, a column per feature
    (both in file order), each cell the pair's production frequency (0: not listed).

    Args:
        value: `pf` (how many participants listed it), `proportion` (pf over the concept's
            participants) or `binary` (1 where listed).
        participants: only these participants' listings (CSLB's participant lists): numbers
            for every concept, or concept -> numbers. A pair's pf is then how many of them its
            list names (distinct); without, it is the file's pf. Concepts and features left
            with nothing are left out, and said so.
        n_participants: the participants per concept, for `proportion` where the norms have
            no lists (McRae: 30); with lists, the numbers they name (of those chosen).
        categories: concept -> category, or a concept table's file (tacit.structure.concepts).

    Raises:
        TacitError: a subset or split of norms without participant lists; `proportion` without
            a count of participants.
    """
    if value not in VALUES:
        raise ValueError(f"value must be one of {', '.join(VALUES)}, not {value!r}")
    table = norms.table
    concepts = list(norms.concepts)
    columns = feature_columns(table)
    row_of = {c: i for i, c in enumerate(concepts)}
    column_of = {f: j for j, f in enumerate(columns["feature"])}
    rows = table["concept"].map(row_of).to_numpy()
    cols = table["feature"].map(column_of).to_numpy()
    # the lists: for a subset (an error without them), or to count a concept's participants
    counting = value == "proportion" and n_participants is None and norms.participants is not None
    listings = Listings.of(norms) if participants is not None or counting else None
    if participants is None:
        pf = table["pf"].to_numpy(dtype=float)
    else:
        assert listings is not None
        pf = listings.counts(listings.chosen(participants), len(table))
    values = np.zeros((len(concepts), len(columns)))
    np.add.at(values, (rows, cols), pf)
    if value == "binary":
        values = (values > 0).astype(float)
    elif value == "proportion":
        values = (
            values
            / _participants_per_concept(norms, listings, participants, n_participants)[:, None]
        )
    matrix = ConceptFeatureMatrix(
        concepts=tuple(concepts),
        features=tuple(columns["feature"]),
        values=values,
        relations=tuple(columns["relation"]),
        feature_types=tuple(columns["feature_type"]),
        phrases=tuple(columns["phrase"]),
        domains=tuple(norms.domains.get(c) for c in concepts),
        categories=(None,) * len(concepts),
        provenance=Provenance(
            "norms",
            str(norms.path),
            norms.sha256,
            {
                "format": norms.format,
                "name": norms.name,
                "value": value,
                "participants": None if participants is None else _subset_record(participants),
                "n_participants": dict(n_participants)
                if isinstance(n_participants, Mapping)
                else n_participants,
            },
        ),
    )
    if participants is not None:
        kept_rows = [bool(x) for x in np.asarray(values.any(axis=1))]
        kept_columns = [bool(x) for x in np.asarray(values.any(axis=0))]
        matrix = matrix.select(
            [c for c, keep in zip(concepts, kept_rows) if keep],
            [f for f, keep in zip(matrix.features, kept_columns) if keep],
        )
        matrix = matrix.leaving_out(
            NOBODY_CONCEPTS, (c for c, keep in zip(concepts, kept_rows) if not keep)
        ).leaving_out(
            NOBODY_FEATURES, (f for f, keep in zip(columns["feature"], kept_columns) if not keep)
        )
    return with_categories(matrix, categories) if categories is not None else matrix


def _participants_per_concept(
    norms: NormSet,
    listings: Listings | None,
    participants: Participants | None,
    given: int | Mapping[str, int] | None,
) -> np.ndarray:
    concepts = norms.concepts
    if given is not None:
        if isinstance(given, Mapping):
            missing = [c for c in concepts if c not in given]
            if missing:
                raise TacitError(f"n_participants: no count for concept {missing[0]!r}")
            counts = np.array([float(given[c]) for c in concepts])
        else:
            counts = np.full(len(concepts), float(given))
    elif listings is None:
        raise TacitError(
            f"{norms.path}: a proportion needs the participants per concept: the {norms.format} "
            "norms have no participant lists, so say how many described each concept "
            "(n_participants; McRae: 30)"
        )
    else:
        pool = listings.pool()
        if participants is not None:
            counts = np.array([float(len(_chosen(pool[c], c, participants))) for c in concepts])
            return np.where(counts > 0, counts, 1.0)  # none chosen: left out after
        counts = np.array([float(len(pool[c])) for c in concepts])
    if (counts <= 0).any():
        bad = concepts[int(np.argmax(counts <= 0))]
        raise TacitError(f"{norms.path}: concept {bad!r} has no participants to divide by")
    return counts


def _chosen(pool: list[int], concept: str, participants: Participants) -> list[int]:
    """The concept's participants that are among those chosen."""
    wanted = participants.get(concept, ()) if isinstance(participants, Mapping) else participants
    chosen = {int(p) for p in wanted}
    return [p for p in pool if p in chosen]
