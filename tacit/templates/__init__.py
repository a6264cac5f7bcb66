"""Prompt templates from a file: the one home of reading, checking and filling them, for every
probe that writes norms into sentences (retrieval, elicitation, Prince).

A template file is JSON lines, one template a line (LAMA's relation files load as they are):
`{"id": "paper", "relation": "has", "template": "{Everyone knows that} [a X] has [Y]."}`.
`[Y]` is the blank, `[X]`/`[a X]`/`[A X]` the concept, `[P]` retrieval's properties, `{...}`
the optional prefix; a `settings` line gives the language, its articles and how lists join.
docs/probes/templates.md describes every key. The paper's templates ship as `paper`
(paper.jsonl beside this module); reading a file is tacit.templates.reading.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tacit.core.choices import meant
from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option
from tacit.core.params import Param
from tacit.templates.template import (
    BLANK_FORMS,
    CONCEPT_FORMS,
    DEFAULT,
    ENSEMBLE,
    KNOWN,
    PLACEHOLDER,
    PREFIX,
    PROPERTIES,
    SETTINGS,
    SHIPPED,
    Settings,
    Template,
    TemplateSet,
    join_phrases,
)

__all__ = [
    "BLANK_FORMS",
    "CONCEPT_FORMS",
    "DEFAULT",
    "ENSEMBLE",
    "KNOWN",
    "PLACEHOLDER",
    "PREFIX",
    "PROPERTIES",
    "SETTINGS",
    "TEMPLATES",
    "Settings",
    "Template",
    "TemplateSet",
    "join_phrases",
    "load_templates",
]


def _templates(value: Any, label: str) -> Any:
    if not isinstance(value, str | Path | TemplateSet):
        raise TacitError(
            f"{label} {shorten(repr(value))}: expected a template file, a shipped "
            "name (paper, paraphrases) or a TemplateSet"
        )
    return value


TEMPLATES = Param(
    "templates",
    DEFAULT,
    kind="any",
    check=_templates,
    help="The prompts' templates: a JSON lines file (one template a line, several per relation "
    "for paraphrases; LAMA's relation files load as they are) or a shipped set: `paper` (the "
    "paper's prompts) or `paraphrases`; a Hub dataset's file is "
    "hf://datasets/OWNER/NAME[@REVISION]/PATH. See docs/probes/templates.md.",
)


def load_templates(value: str | Path | TemplateSet | None = None) -> TemplateSet:
    """A TemplateSet as given, or read from a shipped name (`paper`), a file or a Hub dataset's
    file (`hf://datasets/OWNER/NAME[@REVISION]/PATH`, tacit.hub.dataset_files)."""
    if isinstance(value, TemplateSet):
        return value
    value = DEFAULT if value is None else value
    shipped = SHIPPED / f"{value}.jsonl"
    from tacit.hub.dataset_files import is_hub_url, local_file
    from tacit.templates.reading import read_templates

    if is_hub_url(value):
        path, fetched = local_file(value, option("--templates"))
        commit = fetched.commit if fetched else None
        return replace(read_templates(path, source=str(value)), commit=commit)

    if isinstance(value, str) and "/" not in value and shipped.is_file():
        return read_templates(shipped, source=value)
    names = sorted(path.stem for path in SHIPPED.glob("*.jsonl"))
    if not Path(value).exists() and meant(value, names):
        raise TacitError(f"{option('--templates')} {value}: no such file{meant(value, names)}")
    return read_templates(Path(value))
