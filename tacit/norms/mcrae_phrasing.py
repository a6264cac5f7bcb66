"""Turn a McRae feature (`has_4_legs`, `beh_-_flies`, `a_musical_instrument`) into a verb phrase
that can follow "A bear ...", with its relation and answer (see NormSet).

The feature is first rewritten in CSLB's notation (notes in parentheses dropped, `_` -> space,
`/` -> `_`: `is furry_fuzzy`); the first rule of RULES whose shape it has writes the phrase,
which keeps the first alternative as tacit.norms.phrasing does; the relation and answer are
read off it (`has 4 legs` -> `has`, `4 legs`). `rule_counts` counts each rule's features;
numbers stay digits, as McRae wrote them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd

from tacit.norms.phrasing import first_alternatives, relation_and_answer

# Whole features that need words no rule can supply.
_FIXES = {
    "beh_-_bark_peals_off": "has bark that peels off",
    "beh_-_branches_droop_down": "has branches that droop down",
    "inbeh_-_water_flows_through_it": "lets water flow through it",
    "inbeh_-_water_passes_through": "lets water pass through it",
    "inbeh_-_gives_bad_luck_if_breaks": "gives bad luck if it breaks",
    "has_>_4_wheels": "has more than 4 wheels",
    "has_units_-_cm": "has units in cm",
    "has_units_-_inches": "has units in inches",
    "worn_by_men_-_kilt": "is worn by men",
}
# After McRae's taxonomic `a_`: mass nouns, plurals and adjectives take no article.
_NO_ARTICLE = frozenset(
    {"cutlery", "footwear", "hardware", "jewelry", "lingerie", "music", "poultry", "seafood"}
    | {"bolts", "curtains", "mittens", "pants", "pantyhose", "stairs", "stockings", "tights"}
    | {"coniferous", "inanimate"}
)
# Participles that do not end in -ed (`worn_by_brides` -> is worn by brides).
_IRREGULAR_PARTICIPLES = frozenset({"worn", "eaten", "found", "made", "bought", "sold"})
# Nouns that McRae's features start with, and the words a phrase needs before them.
_PREDICATE_NOUNS = {
    "part": "is part",
    "symbol": "is a symbol",
    "king": "is the king",
    "like": "is like",
}
_SUPERORDINATES = frozenset({"clothing", "furniture"})  # bare superordinates: is clothing


@dataclass(frozen=True)
class Rule:
    """One shape of McRae feature and how it reads as a phrase (in CSLB's notation).

    `test` and `write` take the McRae feature and its words in CSLB's notation. An `action`
    rule's phrases are actions: relation `does` unless the phrase starts with a relation
    (`beh_-_is_nocturnal` -> is nocturnal: `is`).
    """

    shape: str
    example: str
    test: Callable[[str, list[str]], bool]
    write: Callable[[str, list[str]], str]
    action: bool = False


def _after(prefix: str, *, skip: int = 1) -> Callable[[str, list[str]], str]:
    """A writer: `prefix` + the words after the first `skip` ones."""
    return lambda _, words: " ".join([prefix, *words[skip:]]).strip()


def _passive(participle: str, example: str) -> Rule:
    """`used_for_cooking` -> is used for cooking: McRae's passives lack their `is`."""
    return Rule(
        f"{participle}_X -> is {participle} X",
        example,
        lambda _, words: words[0] == participle,
        _after("is", skip=0),
    )


def _is_participle(word: str) -> bool:
    first = word.split("_")[0]  # bought_sold: alternatives
    return first.endswith("ed") or first in _IRREGULAR_PARTICIPLES


RULES: tuple[Rule, ...] = (
    Rule(
        "whole-feature fixes",
        "beh_-_bark_peals_off",
        lambda f, _: f in _FIXES,
        lambda f, _: _FIXES[f],
        action=True,
    ),
    Rule(
        "beh_-_X -> X (a behaviour)",
        "beh_-_flies",
        lambda _, w: w[:2] == ["beh", "-"],
        _after("", skip=2),
        action=True,
    ),
    Rule(
        "inbeh_-_X -> X (an inanimate behaviour)",
        "inbeh_-_produces_music",
        lambda _, w: w[:2] == ["inbeh", "-"],
        _after("", skip=2),
        action=True,
    ),
    Rule(
        "eg_-_X -> can be X (a kind)",
        "eg_-_electric",
        lambda _, w: w[0] == "eg",
        lambda _, w: " ".join(["can be", *w[2 if w[1:2] == ["-"] else 1 :]]),
    ),
    Rule(
        "a_baby_is_a_X -> has a baby called a X",
        "a_baby_is_a_kitten",
        lambda _, w: w[:4] == ["a", "baby", "is", "a"],
        _after("has a baby called a", skip=4),
    ),
    Rule(
        "a_X, X a mass noun, plural or adjective -> is X",
        "a_jewelry",
        lambda _, w: w[0] in ("a", "an") and " ".join(w[1:]) in _NO_ARTICLE,
        _after("is"),
    ),
    Rule(
        "a_X / an_X -> is a X / is an X (a category)",
        "a_musical_instrument",
        lambda _, w: w[0] in ("a", "an") and len(w) > 1,
        _after("is", skip=0),
    ),
    Rule(
        "made_of_X -> is made of X",
        "made_of_metal",
        lambda _, w: w[:2] == ["made", "of"],
        _after("is", skip=0),
    ),
    Rule(
        "used_..._ago -> was used ... ago",
        "used_long_ago",
        lambda _, w: w[0] == "used" and w[-1] == "ago",
        _after("was", skip=0),
    ),
    _passive("used", "used_for_cooking"),
    _passive("worn", "worn_by_brides"),
    _passive("found", "found_in_kitchens"),
    _passive("eaten", "eaten_in_pies"),
    _passive("made", "made_by_bees"),
    Rule(
        "other passives (associated_with_X, hunted_by_X, ...) -> is ...",
        "hunted_by_people",
        lambda _, w: _is_participle(w[0]),
        _after("is", skip=0),
    ),
    Rule("is_X -> is X", "is_red", lambda _, w: w[0] == "is" and len(w) > 1, _after("is")),
    Rule("has_X -> has X", "has_keys", lambda _, w: w[0] == "has" and len(w) > 1, _after("has")),
    Rule(
        "different_X -> comes in different X",
        "different_colours",
        lambda _, w: w[0] == "different",
        _after("comes in", skip=0),
        action=True,
    ),
    Rule(
        "part_of_X, symbol_of_X, king_of_X, like_X -> is part of X, ...",
        "like_a_bee",
        lambda _, w: w[0] in _PREDICATE_NOUNS,
        lambda f, w: _after(_PREDICATE_NOUNS[w[0]])(f, w),
    ),
    Rule(
        "clothing, furniture -> is clothing (a category)",
        "clothing",
        lambda _, w: w == [w[0]] and w[0] in _SUPERORDINATES,
        _after("is", skip=0),
    ),
    Rule(
        "a third-person verb (lives_in_X, grows_on_X, tastes_X, ...) -> as written",
        "lives_in_water",
        lambda _, w: w[0].endswith("s") and len(w[0]) > 3,
        _after("", skip=0),
        action=True,
    ),
    Rule("anything else -> as written", "", lambda _, w: True, _after("", skip=0)),
)


def mcrae_words(feature: str) -> list[str]:
    """A McRae feature's words in CSLB's notation: notes in parentheses dropped, `/`-joined
    alternatives `_`-joined.

    Examples:
        >>> mcrae_words("has_a_flat_head_(slot)"), mcrae_words("is_furry/fuzzy")
        (['has', 'a', 'flat', 'head'], ['is', 'furry_fuzzy'])
    """
    text = re.sub(r"_?\([^)]*\)", "", feature.strip())
    return [word.replace("/", "_") for word in text.split("_") if word]


def rule_of(feature: str) -> Rule:
    """The first rule whose shape the feature has."""
    words = mcrae_words(feature) or [feature]
    return next(rule for rule in RULES if rule.test(feature, words))


def describe(feature: str) -> tuple[str, str, str]:
    """(phrase, relation, answer) of a McRae feature.

    Examples:
        >>> describe("has_4_legs"), describe("beh_-_flies")
        (('has 4 legs', 'has', '4 legs'), ('flies', 'does', ''))
        >>> describe("a_musical_instrument")
        ('is a musical instrument', 'is a', 'musical instrument')
        >>> describe("is_furry/fuzzy")
        ('is furry', 'is', 'furry_fuzzy')
    """
    rule = rule_of(feature)
    text = rule.write(feature, mcrae_words(feature) or [feature])
    relation, answer = relation_and_answer(text)
    if relation == "other" and rule.action:
        relation = "does"
    return first_alternatives(text), relation, answer


def rule_counts(features: Iterable[str]) -> pd.DataFrame:
    """How many features each rule handles: `shape, example, phrase` (the example's phrase)
    and `features`, in rule order, every rule listed (0 where none), summing to the input."""
    counts = Counter(rule_of(feature).shape for feature in features)
    return pd.DataFrame(
        [
            (
                rule.shape,
                rule.example,
                describe(rule.example)[0] if rule.example else "",
                counts.get(rule.shape, 0),
            )
            for rule in RULES
        ],
        columns=["shape", "example", "phrase", "features"],
    )
