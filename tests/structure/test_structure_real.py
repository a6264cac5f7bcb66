"""The real norms: CSLB's whole pf matrix and its split-half ceiling, and McRae against CSLB
on their shared concepts (docs/probes/structure.md shows these numbers, from
`python bench/bench_structure.py`)."""

from __future__ import annotations

import pytest
from support import REAL_MCRAE, REAL_NORMS, SHARED_DATA

from tacit.norms import read_norms
from tacit.structure import compare_norms, from_norms, noise_ceiling, read_concepts

CONCEPTS = SHARED_DATA / "cslb" / "concepts.dat"
needs_norms = pytest.mark.skipif(
    not (REAL_NORMS.is_file() and REAL_MCRAE.is_file() and CONCEPTS.is_file()),
    reason=f"../shared/data (CSLB's norms.dat and concepts.dat, McRae's workbook) not found at {SHARED_DATA}",
)


@pytest.mark.slow
@needs_norms
def test_cslb_whole_matrix_and_its_ceiling():
    norms = read_norms(REAL_NORMS)
    matrix = from_norms(norms, categories=CONCEPTS)
    assert matrix.shape == (638, 5928)
    assert matrix.values.sum() == norms.table["pf"].sum()
    # four concepts of concepts.dat are spelt otherwise in norms.dat (castanets, castenets)
    assert len(matrix.left_out["concepts without a category"]) == 4
    ceiling = noise_ceiling(norms, n_splits=100, seed=0).iloc[0]
    assert ceiling["n_participants"] == 30
    assert 0.9 < ceiling["ci_low"] <= ceiling["reliability"] <= ceiling["ci_high"] < 1


@pytest.mark.slow
@needs_norms
def test_mcrae_against_cslb():
    concepts = read_concepts(CONCEPTS)
    named = concepts[concepts["mcrae label"] != ""]
    found = compare_norms(
        REAL_MCRAE,
        REAL_NORMS,
        categories=CONCEPTS,
        concept_map=dict(zip(named["mcrae label"], named["concept"])),
        n_participants_a=30,
        names=("McRae", "CSLB"),
        n_resamples=50,
        n_permutations=50,
        n_splits=5,
    )
    assert found.a.shape[0] == 415
    whole = found.tables["rsa"].iloc[0]
    assert whole["ci_low"] < whole["value"] < whole["ci_high"]
    assert whole["chance_high"] < 0.1 < 0.5 < whole["value"]
    ceiling = found.tables["ceiling"].set_index("of")
    assert ceiling.loc["McRae", "reason"].startswith("the mcrae norms")
    assert found.tables["ceiling_fraction"]["value"].iloc[0] < 1
