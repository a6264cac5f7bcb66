"""The lexicon: concept text, articles by sound."""

import pytest

from tacit import lexicon
from tacit.lexicon import article, concept_text
from tacit.probes import elicit


def test_elicitation_uses_the_lexicon():
    assert elicit.article is lexicon.article
    assert elicit.concept_text is lexicon.concept_text


@pytest.mark.parametrize(
    "concept, text",
    [
        ("bear", "bear"),
        ("bat_(animal)", "bat"),  # CSLB norms.dat, McRae
        ("bat (animal)", "bat"),  # CSLB concepts.dat
        ("organ_(musical_instrument)", "organ"),
        ("coffee_machine", "coffee machine"),
        ("chest_of_drawers", "chest of drawers"),
        ("dates (fruit)", "dates"),
        ("yo-yo", "yo-yo"),
    ],
)
def test_concept_text(concept, text):
    assert concept_text(concept) == text


# (word, article, the rule it shows)
ARTICLES = [
    ("bear", "a", "consonant letter"),
    ("apple", "an", "vowel letter"),
    ("egg", "an", "vowel letter"),
    ("oak", "an", "vowel letter"),
    ("ice cream", "an", "first word decides"),
    ("coffee machine", "a", "first word decides"),
    ("hour", "an", "silent h"),
    ("hourglass", "an", "silent h"),
    ("honest", "an", "silent h"),
    ("honour", "an", "silent h"),
    ("honorary", "an", "silent h"),
    ("heir", "an", "silent h"),
    ("heirloom", "an", "silent h"),
    ("hors d'oeuvre", "an", "silent h"),
    ("honey", "a", "sounded h"),
    ("horse", "a", "sounded h"),
    ("herb", "a", "sounded h (British)"),
    ("unicorn", "a", "uni- read you"),
    ("uniform", "a", "uni- read you"),
    ("unicycle", "a", "uni- read you"),
    ("unanimous", "a", "unan- read you"),
    ("unimportant", "an", "un- prefix"),
    ("uninteresting", "an", "un- prefix"),
    ("unidentified", "an", "un- prefix"),
    ("uneven", "an", "un- prefix"),
    ("unusual", "an", "un- prefix"),
    ("upper", "an", "up- prefix"),
    ("utensil", "a", "u, one consonant, vowel: you"),
    ("usual", "a", "u, one consonant, vowel: you"),
    ("urine", "a", "u, one consonant, vowel: you"),
    ("ukulele", "a", "u, one consonant, vowel: you"),
    ("umbrella", "an", "u, two consonants: uh"),
    ("udder", "an", "u, two consonants: uh"),
    ("urn", "an", "u, two consonants: uh"),
    ("usher", "an", "u, two consonants: uh"),
    ("ewe", "a", "ewe read you"),
    ("European", "a", "eu read you"),
    ("eucalyptus", "a", "eu read you"),
    ("one-way street", "a", "one read won"),
    ("once-famous", "a", "once read wonce"),
    ("onion", "an", "on- is not one"),
    ("onerous", "an", "one- inside a word is not one"),
    ("ouija board", "a", "ouija read wee"),
    ("X-ray", "an", "letter name: ex"),
    ("x-ray", "an", "letter name: ex"),
    ("U-boat", "a", "letter name: you"),
    ("T-shirt", "a", "letter name: tee"),
    ("S-bend", "an", "letter name: ess"),
    ("H-bomb", "an", "letter name: aitch"),
    ("MRI scanner", "an", "initialism: em"),
    ("FBI agent", "an", "initialism: ef"),
    ("UFO", "a", "initialism: you"),
    ("CD", "a", "initialism: see"),
    ("8-track", "an", "number: eight"),
    ("80s", "an", "number: eighty"),
    ("11-year-old", "an", "number: eleven"),
    ("18th", "an", "number: eighteenth"),
    ("11,000", "an", "number: eleven thousand"),
    ("110", "a", "number: one hundred and ten"),
    ("1950s", "a", "number: nineteen fifties"),
]


@pytest.mark.parametrize("word, expected, rule", ARTICLES)
def test_article_by_sound(word, expected, rule):
    assert article(word) == expected, rule
