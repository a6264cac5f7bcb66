"""How a concept name reads in English: its text and its article.

Norms name concepts in a file's shorthand (`bat_(animal)`, `coffee_machine`); prompts need them
as English ("a bat", "a coffee machine"). This module is the one place that knows how: probes
that write a concept into a sentence take it from here.
"""

from __future__ import annotations

import re

# Sounds that spelling hides. "an" before a silent h; "a" before a vowel letter read as the
# consonant /j/ ("you": unicorn, European, ewe, utensil) or /w/ ("one"). Before u, one
# consonant and a vowel, English reads "you" (unicorn, uniform, usual, utensil, urine,
# ukulele); before two consonants "uh" (umbrella, udder, urn, usher). The un- and up-
# prefixes read "uh" (uneven, upper) except in uni- and unan- (unit, unanimous), and there not
# before -important, -interesting, -identified.
_SILENT_H = re.compile(r"(hour|honest|honou?r|heir|hors\b)")
_CONSONANT_SOUND = re.compile(
    r"(eu|ewe|one(?![a-z])|once(?![a-z])|ouija|uni(?![nmd])|unan|u[bcdfgklmrstvz][aeiou])"
)
_LETTERS_AN = frozenset("aefhilmnorsx")  # letter names that start with a vowel: "an X-ray"


def concept_text(concept: str) -> str:
    """How a concept name reads in a sentence: no sense label, spaces for underscores.

    Sense labels come as `_(...)` (norms.dat, McRae) or ` (...)` (CSLB's concepts.dat).

    >>> concept_text("bat_(animal)"), concept_text("coffee_machine"), concept_text("bat (animal)")
    ('bat', 'coffee machine', 'bat')
    """
    return re.split(r"[_ ]\(", concept, maxsplit=1)[0].replace("_", " ").strip()


def article(noun: str) -> str:
    """`a` or `an` for a count noun, by the sound of its first word, not its first letter.

    Spelling is a good guide but not the rule: a silent h takes `an`, a u or eu read "you"
    and a one read "won" take `a`. Single letters and initialisms are read letter by letter
    ("an X-ray", "a U-boat", "an MRI"); acronyms read as words ("NASA") cannot be told from
    initialisms by their spelling and need an override. Numbers are read as numbers ("an 8",
    "an 11-year-old", "a 1950s"). British usage: "a herb", "a historic".

    >>> [article(w) for w in ["bear", "apple", "hour", "heir", "honour", "honey", "herb"]]
    ['a', 'an', 'an', 'an', 'an', 'a', 'a']
    >>> [article(w) for w in ["unicorn", "uniform", "utensil", "umbrella", "urn", "uneven"]]
    ['a', 'a', 'a', 'an', 'an', 'an']
    >>> [article(w) for w in ["ewe", "European", "eucalyptus", "egg", "one-way", "onion"]]
    ['a', 'a', 'a', 'an', 'a', 'an']
    >>> [article(w) for w in ["X-ray", "U-boat", "T-shirt", "MRI scanner", "UFO", "8-track"]]
    ['an', 'a', 'a', 'an', 'a', 'an']
    """
    stripped = noun.strip()
    first = re.split(r"[\s\-]", stripped, maxsplit=1)[0]
    if first[:1].isdigit():
        return _number_article(first)
    if first.isalpha() and (len(first) == 1 or first.isupper()):
        return "an" if first[0].lower() in _LETTERS_AN else "a"
    word = stripped.lower()
    if _SILENT_H.match(word):
        return "an"
    if _CONSONANT_SOUND.match(word):
        return "a"
    return "an" if word[:1] in ("a", "e", "i", "o", "u") else "a"


def _number_article(token: str) -> str:
    """`an` before numbers spoken with a vowel first: 8, 80-89, 800..., 11, 18, 11,000, 18,000."""
    digits = re.match(r"[\d,]*", token).group().replace(",", "")
    eleven_or_eighteen = digits[:2] in ("11", "18") and len(digits) % 3 == 2
    return "an" if digits.startswith("8") or eleven_or_eighteen else "a"
