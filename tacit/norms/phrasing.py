"""Turn a CSLB feature string into a third-person verb phrase that can follow "A bear ...".

In order: whitespace collapses; `_` joins alternatives and the first is kept (the rest
dropped where an alternative starts a phrase of its own: `does drive_is driven` -> `does
drive`); `does VERB rest` -> `VERBs rest` in English spelling (`does fly` -> `flies`), except
before a negation, a gerund or a noun; `made of X` -> `is made of X`; the rest is kept, but
for the unprefixed features in `_WHOLE_FEATURE_FIXES`. docs/norms.md shows the rules at work.
"""

from __future__ import annotations

import re

# Alternatives that begin with one of these words start a phrase of their own (rule 2).
_PHRASE_STARTERS = frozenset({"is", "does", "has", "a", "an", "used", "by", "in", "eats", "taste"})

# After `does`, words that are not bare verbs: `does` is kept (rule 3).
_NOT_A_VERB = frozenset(
    {"not", "nothing", "good", "DIY", "half", "greetings", "detailed", "structural", "stunts"}
    | {"clamping", "poking", "sledging", "tweezing", "washing"}  # gerunds; `sing` is a verb
)

# Verbs whose third person is not produced by the spelling rules, or that CSLB misspells.
_IRREGULAR_THIRD_PERSON = {
    "have": "has",
    "be": "is",
    "breath": "breathes",  # CSLB's "does breath underwater" means breathe
    "keeps": "keeps",  # CSLB's "does keeps animals out" is already inflected
}

# Whole features that need a word the rules cannot supply.
_WHOLE_FEATURE_FIXES = {
    "does contain_hold_liquid": "contains liquid",
    "found in bars": "is found in bars",
    "had pipes": "has pipes",
}

_VOWELS = "aeiou"


def third_person(verb: str) -> str:
    """Third-person singular present of an English verb in its base form.

    Examples:
        >>> [third_person(v) for v in ["make", "fly", "go", "moo", "have", "buzz", "wash", "play"]]
        ['makes', 'flies', 'goes', 'moos', 'has', 'buzzes', 'washes', 'plays']
    """
    if verb in _IRREGULAR_THIRD_PERSON:
        return _IRREGULAR_THIRD_PERSON[verb]
    if re.search(r"(s|x|z|ch|sh|[^o]o)$", verb):  # goes, but moos
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in _VOWELS:
        return verb[:-1] + "ies"
    return verb + "s"


def _alternatives(word: str) -> tuple[list[str], bool]:
    """The `_`-joined alternatives of a word, up to one that starts a phrase of its own, and
    whether one did (then the alternatives span the rest of the feature, rule 2)."""
    alternatives = [a for a in word.split("_") if a]
    for i, alternative in enumerate(alternatives[1:], start=1):
        if alternative in _PHRASE_STARTERS:
            return alternatives[:i], True
    return alternatives, False


def answer_spans(answer: str) -> list[str]:
    """The candidate spans an answer gives, of any length: each alternative of a one-word
    answer, else the phrase with the first of each set of alternatives (rule 2).

    Examples:
        >>> answer_spans("fur_hair"), answer_spans("sharp teeth"), answer_spans("four legs_feet")
        (['fur', 'hair'], ['sharp teeth'], ['four legs'])
    """
    words = one_word_answers(answer)
    return words if words is not None else [first_alternatives(answer)]


def every_alternative(answer: str) -> list[str]:
    """Every reading of an answer's `_`-joined alternatives, word by word, in order (rule 2:
    an alternative that starts a phrase of its own ends the answer); what matching a model's
    words to the answer accepts, where `answer_spans` keeps one span to score.

    Examples:
        >>> every_alternative("fur_hair"), every_alternative("hard_tough skin")
        (['fur', 'hair'], ['hard skin', 'tough skin'])
        >>> every_alternative("technology_is technological")
        ['technology']
    """
    readings = [""]
    for word in answer.split(" "):
        alternatives, starts_phrase = _alternatives(word)
        readings = [f"{r} {a}".strip() for r in readings for a in alternatives or [word]]
        if starts_phrase:
            break
    return list(dict.fromkeys(readings))


def first_alternatives(feature: str) -> str:
    """Keep the first of each set of `_`-joined alternatives (rule 2).

    Examples:
        >>> first_alternatives("is sold_bought in supermarkets_shops")
        'is sold in supermarkets'
        >>> first_alternatives("does drive_is driven")
        'does drive'
    """
    kept: list[str] = []
    for word in feature.split(" "):
        alternatives, starts_phrase = _alternatives(word)
        kept.append(alternatives[0] if alternatives else word)
        if starts_phrase:
            break  # the alternatives span the rest of the feature
    return " ".join(kept)


def feature_to_phrase(feature: str) -> str:
    """The third-person verb phrase for a CSLB feature (see the module docstring for the rules).

    Examples:
        >>> feature_to_phrase("does make music")
        'makes music'
        >>> feature_to_phrase("has fur_hair")
        'has fur'
        >>> feature_to_phrase("made of metal")
        'is made of metal'
        >>> feature_to_phrase("is a musical instrument")
        'is a musical instrument'
    """
    feature = " ".join(feature.split())
    if feature in _WHOLE_FEATURE_FIXES:
        return _WHOLE_FEATURE_FIXES[feature]
    phrase = first_alternatives(feature)
    words = phrase.split(" ")
    if words[0] == "does" and len(words) > 1:
        verb = words[1]
        if verb in _NOT_A_VERB:
            return phrase
        return " ".join([third_person(verb), *words[2:]])
    if words[:2] == ["made", "of"]:
        return "is " + phrase
    return phrase


# The elicitation relations and the feature prefixes that answer each, longest first, so that
# `is a tool` answers `is a` (not `is`) and `has an X` answers `has a`. `is made of` is how a
# ready phrase (McRae, a user's table) says CSLB's `made of`.
ANSWER_PREFIXES = (
    ("made of", ("is made of", "made of")),
    ("is a", ("is an", "is a")),
    ("has a", ("has an", "has a")),
    ("is", ("is",)),
    ("has", ("has",)),
)


def relation_and_answer(feature: str) -> tuple[str, str]:
    """The relation a feature states and the text after it (its answer, in CSLB's notation).

    The relation is one of elicitation's `is`, `is a`, `has`, `has a`, `made of` (then the
    answer is the rest of the feature, alternatives still `_`-joined), else `does` (a `does`
    feature) or `other`, with an empty answer.

    Examples:
        >>> [relation_and_answer(f) for f in ["has fur_hair", "is an animal", "made of metal"]]
        [('has', 'fur_hair'), ('is a', 'animal'), ('made of', 'metal')]
        >>> relation_and_answer("does fly"), relation_and_answer("keeps people out")
        (('does', ''), ('other', ''))
    """
    feature = " ".join(feature.split())
    for relation, prefixes in ANSWER_PREFIXES:
        for prefix in prefixes:
            if feature.startswith(prefix + " "):
                return relation, feature[len(prefix) + 1 :]
    return ("does" if feature.split(" ")[0] == "does" else "other"), ""


def relation_of(feature: str) -> str:
    """The relation a feature states (see relation_and_answer).

    Examples:
        >>> features = ["is big_large", "has a tail", "made of wood", "keeps people out"]
        >>> [relation_of(f) for f in features]
        ['is', 'has a', 'made of', 'other']
    """
    return relation_and_answer(feature)[0]


def one_word_answers(rest: str) -> list[str] | None:
    """The one-word answers a feature gives after its relation, or None if it takes more words.

    `fur_hair` gives both alternatives; `water_is watery` gives `water` (the alternative after
    the underscore starts a phrase of its own, rule 2); `wood and metal` takes several words.

    Examples:
        >>> one_word_answers("fur_hair"), one_word_answers("water_is watery")
        (['fur', 'hair'], ['water'])
        >>> one_word_answers("wood and metal") is None
        True
    """
    words = rest.split(" ")
    alternatives, starts_phrase = _alternatives(words[0])
    return alternatives if len(words) == 1 or starts_phrase else None
