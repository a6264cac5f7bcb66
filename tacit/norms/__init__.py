"""Concept-property norms: reading CSLB, McRae and generic tables into one NormSet, phrasing
features as verb phrases, remembering the installed file."""

from tacit.norms.generic import parse_columns
from tacit.norms.phrasing import feature_to_phrase, relation_and_answer, relation_of, third_person
from tacit.norms.reader import FEATURE_TYPES, FORMATS, NormSet, read_norms
from tacit.norms.store import install_norms, load_norms, resolve_norms_path

__all__ = [
    "FEATURE_TYPES",
    "FORMATS",
    "NormSet",
    "feature_to_phrase",
    "install_norms",
    "load_norms",
    "parse_columns",
    "read_norms",
    "relation_and_answer",
    "relation_of",
    "resolve_norms_path",
    "third_person",
]
