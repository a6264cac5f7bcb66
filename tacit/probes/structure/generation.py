"""The matrix by generation: the norming task (elicitation's free listing, `--relation all`)
asked of each model `--samples` times; each draw is a participant, and a feature's cell is
how many draws named it. The model's listing is written as CSLB's norms (its run's
`norms/NAME.dat`, and `--write-norms`) and read back as any norm set is."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from tacit.norms import NormSet, read_norms
from tacit.structure import ConceptFeatureMatrix, from_norms, write_model_norms

if TYPE_CHECKING:
    from tacit.probes.elicit.options import ElicitOptions
    from tacit.probes.structure.options import StructureOptions

OK = "ok"


def listing_options(values: StructureOptions) -> ElicitOptions:
    """Elicitation's options of the free listing the structure probe asks."""
    from tacit.probes.elicit.free_listing import FREE_LISTING
    from tacit.probes.elicit.options import ElicitOptions

    return ElicitOptions(
        relations=[FREE_LISTING],
        norms=values.norms,
        norms_format=values.norms_format,
        norms_columns=values.norms_columns,
        concepts=values.concepts,
        by="generation",
        guesses=values.guesses,
        samples=values.samples,
        temperature=values.temperature,
        max_tokens=values.max_tokens,
        questions=values.questions,
    )


def draw_counts(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per (concept, feature, draw) a model's answers matched, with its wording:
    `concept, feature, draw, count, wording` (draws numbered from 1: participants)."""
    matched = answers[(answers["status"] == OK) & answers["matched"].fillna("").astype(bool)]
    return pd.DataFrame(
        {
            "concept": matched["concept"].to_numpy(),
            "feature": matched["matched"].to_numpy(),
            "draw": matched["draw"].astype(int).to_numpy() + 1,
            "count": 1,
            "wording": matched["normal"].fillna("").astype(str).to_numpy(),
        }
    ).drop_duplicates(["concept", "feature", "draw"])


def model_norms(counts: pd.DataFrame, people: NormSet) -> tuple[NormSet, str, dict[str, object]]:
    """The model's listing as CSLB's norms: the NormSet read back, the file's text, and what
    was written and left out (`counts` holds at least one match)."""
    types = dict(zip(people.table["feature"], people.table["feature_type"]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "norms.dat"
        record = write_model_norms(counts, path, feature_types=types, domains=people.domains)
        text = path.read_text(encoding="utf-8")
        norms = read_norms(path)
    return norms, text, record


def listing_matrix(norms: NormSet, draws: Mapping[str, int]) -> ConceptFeatureMatrix:
    """A model's listing as a matrix of proportions: of each concept's `draws` (a recorded
    model's may differ from concept to concept), how many named each feature."""
    return from_norms(
        norms, value="proportion", n_participants={c: int(draws[c]) for c in norms.concepts}
    )
