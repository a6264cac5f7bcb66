"""Concept-property norms: reading CSLB, McRae and generic tables into one NormSet, phrasing
features as verb phrases, remembering installed norm sets by name."""

from tacit.norms.formats import NORM_FORMATS, NormFormat, NormSource, register_norm_format
from tacit.norms.generic import parse_columns
from tacit.norms.phrasing import feature_to_phrase, relation_and_answer, relation_of, third_person
from tacit.norms.reader import FEATURE_TYPES, NormSet, read_norms
from tacit.norms.store import (
    InstalledNorms,
    install_norms,
    installed_norms,
    load_norms,
    remove_norms,
    resolve_norms,
    resolve_norms_path,
    set_default_norms,
)

__all__ = [
    "FEATURE_TYPES",
    "NORM_FORMATS",
    "NormFormat",
    "NormSource",
    "InstalledNorms",
    "NormSet",
    "feature_to_phrase",
    "install_norms",
    "installed_norms",
    "load_norms",
    "parse_columns",
    "read_norms",
    "register_norm_format",
    "relation_and_answer",
    "remove_norms",
    "relation_of",
    "resolve_norms",
    "resolve_norms_path",
    "set_default_norms",
    "third_person",
]
