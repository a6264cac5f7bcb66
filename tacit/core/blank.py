"""The blank every prompt carries: a literal `<mask>` that each model family reads its own way
(a masked LM's mask token, a causal LM's text before it). Prompt builders need only this
string, so it lives where importing it loads nothing else; how a sentence is made by putting
a text in the blank lives here too, for every family that scores whole sentences."""

from __future__ import annotations

from tacit.core.errors import TacitError

MASK = "<mask>"


def split_blank(template: str) -> tuple[str, str, str]:
    """(text before the blank, the whitespace before it, text after it): the whitespace belongs
    to what fills the blank (a word in its leading-space form).

    Examples:
        >>> split_blank("A bear has <mask>.")
        ('A bear has', ' ', '.')
    """
    if template.count(MASK) != 1:
        raise TacitError(f"prompt {template!r} must contain {MASK} exactly once")
    before, after = template.split(MASK)
    prefix = before.rstrip()
    return prefix, before[len(prefix) :], after


def filled(template: str, span: str) -> tuple[str, int, int]:
    """The sentence with `span` in the template's blank, and the characters [first, last) that
    the span and the whitespace before it take in it (the tokens that overlap them are the
    span's).

    Examples:
        >>> filled("Everyone knows that <mask> has fur.", "a bear")
        ('Everyone knows that a bear has fur.', 19, 26)
    """
    prefix, gap, after = split_blank(template)
    return prefix + gap + span + after, len(prefix), len(prefix) + len(gap) + len(span)
