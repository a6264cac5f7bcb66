"""Prompt templates from a file: the one home of reading, checking and filling them, for every
probe that writes norms into sentences (retrieval, elicitation, Prince).

A template file is JSON lines, one template a line (LAMA's relation files load as they are):

    {"relation": "has", "template": "[X] has [Y]."}
    {"id": "paper", "relation": "has", "template": "{Everyone knows that} [a X] has [Y]."}
    {"id": "paper", "template": "[A Y] [P]."}
    {"settings": {"language": "de", "and": "und", "serial_comma": false, "pronoun": "es",
                  "articles": {"Bär": "ein", "Katze": "eine"}}}

- `template`: the text, with placeholders in square brackets. `[Y]` is the blank. `[X]` is the
  concept as a bare noun ("bear", "coffee machine"); `[a X]` the concept after its article
  ("a bear", "an apple": `a` or `an` by its sound, as the paper's elicitation prompts, unless
  the settings or `--articles` give one); `[A X]` the same at the start of a sentence.
  `[P]` is retrieval's list of properties ("has fur, is big, and has claws"). In retrieval the
  concept is the answer, so it goes in the blank: `[a Y]` / `[A Y]` put it there with its
  article (vocabulary mode writes `a` / `A` before the blank; candidate spans bring their own
  article, "A bear", "Scissors"). `{...}` at the very start is the optional prefix: kept by
  default, dropped by `--no-prefix` (the sentence then starts with a capital).
- `relation`: the elicitation relation the template asks about (the norms' `relation`
  column); a template without one is retrieval's (and needs `[P]`).
- `id`: names the template in prompts.csv and summary.csv (unique within its relation;
  default its number within its relation, `1`, `2`, ...). Other keys are ignored (LAMA's
  `label`, `description`, `type`).
- `settings` (one line at most): the prompts' language (`en` by default: English articles by
  sound); for any other language articles come only from the settings' `articles` or
  `--articles`, never from English rules; `and` and `serial_comma` join the property list;
  `pronoun` stands for the concept in elicitation's `--normalize pmi` baseline.

The paper's templates are the file shipped as `paper` (paper.jsonl beside this module); reading
a file is tacit.templates.reading.
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
