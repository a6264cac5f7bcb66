"""Concept structure: does a model's knowledge of concepts have the shape of people's?

A concept x feature matrix (ConceptFeatureMatrix) made from norms (from_norms, any subset of
CSLB's participants) or, later, by a probe; a model's norms written as CSLB's
(write_model_norms); two matrices aligned (align); and the analyses that read matrices, never
a model: representational similarity with a Mantel test (rsa), the people's split-half ceiling
(noise_ceiling), feature verification (feature_verification; verify_answers for yes/no
answers), category structure and MDS maps (category_structure, concept_map), and the
answer-space prior (answer_prior, without_prior).
compare_norms runs them all on two norm sets. docs/probes/structure.md has the formulas.
"""

from tacit.structure.align import Alignment, align
from tacit.structure.build import from_norms
from tacit.structure.ceiling import ceiling_fraction, noise_ceiling, spearman_brown, split_halves
from tacit.structure.clusters import (
    average_linkage,
    category_structure,
    classical_mds,
    mds_map,
    procrustes_onto,
)
from tacit.structure.compare import Structure, compare_matrices, compare_norms
from tacit.structure.concepts import read_concepts, with_categories
from tacit.structure.matrix import ConceptFeatureMatrix, Provenance, read_matrix
from tacit.structure.model_norms import model_norms_table, write_model_norms
from tacit.structure.participants import Listings, participant_numbers
from tacit.structure.prior import answer_prior, prior_of, without_prior
from tacit.structure.similarity import rsa, similarity_matrix
from tacit.structure.verification import (
    calibration_bins,
    feature_verification,
    reliability_bins,
    verification_items,
    verify_answers,
)

__all__ = [
    "Alignment",
    "ConceptFeatureMatrix",
    "Listings",
    "Provenance",
    "Structure",
    "align",
    "answer_prior",
    "average_linkage",
    "calibration_bins",
    "category_structure",
    "ceiling_fraction",
    "classical_mds",
    "compare_matrices",
    "compare_norms",
    "mds_map",
    "feature_verification",
    "from_norms",
    "model_norms_table",
    "noise_ceiling",
    "participant_numbers",
    "prior_of",
    "procrustes_onto",
    "read_concepts",
    "read_matrix",
    "reliability_bins",
    "rsa",
    "similarity_matrix",
    "spearman_brown",
    "split_halves",
    "verification_items",
    "verify_answers",
    "with_categories",
    "without_prior",
    "write_model_norms",
]
