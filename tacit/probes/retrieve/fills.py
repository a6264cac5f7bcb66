"""Retrieval's templates as fills: each template's id -> (properties -> prompt), in vocabulary
mode (the template writes the article before the blank) or over candidate spans (the span
brings its own), and whether the English `a` rule leaves vowel-initial concepts out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from tacit.core.errors import TacitError
from tacit.templates import Template, TemplateSet

Fill = Callable[[Sequence[str]], str]


def retrieval_fills(templates: TemplateSet, *, spans: bool) -> dict[str, Fill]:
    """Each retrieval template's id -> (properties -> prompt): "A <mask> has fur, is big, and
    has claws." in vocabulary mode, "<mask> has fur, ..." with candidate spans, which bring
    their own article."""
    fills: dict[str, Fill] = {}
    for template in templates.retrieval:
        if not spans and template.blank != "Y" and not templates.settings.english:
            raise TacitError(
                f"--templates {templates.source}: template {template.id!r} puts [{template.blank}] "
                f"in a {templates.settings.language} template: in vocabulary mode write the "
                "article in the template (`Ein [Y] ...`), or score spans (--candidates concepts)"
            )
        fills[template.id] = partial(_fill, template, templates, spans)
    return fills


def _fill(template: Template, templates: TemplateSet, spans: bool, phrases: Sequence[str]) -> str:
    return template.fill(properties=templates.properties(phrases), blank=template.blank_text(spans))


def a_before_blank(templates: TemplateSet, *, spans: bool) -> bool:
    """Whether some template writes the English `a` right before the blank (then concepts
    that start with a vowel cannot be vocabulary targets, as in the paper)."""
    english = templates.settings.english
    return english and any(t.a_before_blank(spans) for t in templates.retrieval)
