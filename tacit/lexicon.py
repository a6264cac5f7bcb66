"""How a concept name reads in English: its text and its article.

Norms name concepts in a file's shorthand (`bat_(animal)`, `coffee_machine`); prompts need them
as English ("a bat", "a coffee machine"). This module is the one place that knows how: probes
that write a concept into a sentence take it from here.
"""

from __future__ import annotations

# Words whose article does not follow their first letter.
_AN_BEFORE_CONSONANT = ("hour", "honest", "honour", "heir")
_A_BEFORE_VOWEL = ("uni", "use", "usu", "ute", "uku", "eu", "ewe", "one", "once")


def article(noun: str) -> str:
    """`a` or `an` by the sound of the noun's start, with a short exception list.

    >>> [article(w) for w in ["bear", "apple", "hour", "unicorn", "umbrella", "ewe"]]
    ['a', 'an', 'an', 'a', 'an', 'a']
    """
    word = noun.lower()
    if word.startswith(_AN_BEFORE_CONSONANT):
        return "an"
    if word.startswith(_A_BEFORE_VOWEL):
        return "a"
    return "an" if word[:1] in "aeiou" else "a"


def concept_text(concept: str) -> str:
    """How a CSLB concept reads in a sentence: no sense label, spaces for underscores.

    >>> concept_text("bat_(animal)"), concept_text("coffee_machine")
    ('bat', 'coffee machine')
    """
    return concept.split("_(")[0].replace("_", " ").strip()
