"""CSLB norms: reading, phrasing features as verb phrases, remembering the installed file."""

from tacit.norms.phrasing import feature_to_phrase, relation_of, third_person
from tacit.norms.reader import FEATURE_TYPES, NormSet, read_norms
from tacit.norms.store import install_norms, load_norms, resolve_norms_path

__all__ = [
    "FEATURE_TYPES",
    "NormSet",
    "feature_to_phrase",
    "install_norms",
    "load_norms",
    "read_norms",
    "relation_of",
    "resolve_norms_path",
    "third_person",
]
