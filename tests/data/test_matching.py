"""Reading what a model says (tacit.matching): a table of hand-written completions, each with
the answers, matches and statuses a reader of answers.csv should see, and the rules each row
stands for (issue 46)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest
from support import REAL_MCRAE, REAL_NORMS, needs_mcrae, needs_shared

from tacit.matching import (
    ANSWER_COLUMNS,
    Normaliser,
    answers_frame,
    concept_matcher,
    feature_matcher,
    parse_completion,
    read_completion,
)
from tacit.matching.match import EXACT, HEAD

CONCEPTS = [
    "bear",
    "polar_bear",
    "bat_(animal)",
    "bat_(sporting)",
    "mouse",
    "goose",
    "chest_of_drawers",
    "scissors",
    "aardvark",
    "knife",
    "ox",
]
# a bear's `has` features, CSLB's notation: the feature, its answer after the relation
HAS = {
    "has fur_hair": "fur_hair",
    "has four legs": "four legs",
    "has claws": "claws",
    "has sharp teeth": "sharp teeth",
    "has a fur coat": "fur coat",  # two features whose forms nest: the longest wins
    "has hard_tough skin": "hard_tough skin",
    "has leaves": "leaves",
}
IS = {"is big_large": "big_large", "is brown": "brown", "is a mammal": "mammal"}
# a bear's features of every relation, for a listing of all its properties:
# (feature, relation, answer, phrase)
EVERY = [
    ("has fur_hair", "has", "fur_hair", "has fur"),
    ("has a tail", "has a", "tail", "has a tail"),
    ("is big_large", "is", "big_large", "is big"),
    ("is a mammal", "is a", "mammal", "is a mammal"),
    ("made of meat", "made of", "meat", "is made of meat"),
    ("does eat fish", "does", "", "eats fish"),
    ("does hibernate", "does", "", "hibernates"),
]

MATCHERS = {
    "concepts": concept_matcher(CONCEPTS),
    "has": feature_matcher(list(HAS), list(HAS.values()), "has"),
    "is": feature_matcher(list(IS), list(IS.values()), "is"),
    "is a": feature_matcher(["is a mammal"], ["mammal"], "is a"),
    "every": feature_matcher(
        [f for f, *_ in EVERY],
        [a for _, _, a, _ in EVERY],
        [r for _, r, *_ in EVERY],
        phrases=[p for *_, p in EVERY],
    ),
}


@dataclass(frozen=True)
class Case:
    """A completion, what it is matched against, and per answer row (answer as parsed,
    matched target, rule, status)."""

    text: str
    against: str
    rows: list[tuple[str, str, str, str]]
    finish_reason: str | None = "stop"


NO = ("", "")  # no target, no rule
CASES = {
    # lists
    "numbered dots": Case(
        "1. Bear\n2. Wolf\n3. Mouse",
        "concepts",
        [("Bear", "bear", EXACT, "ok"), ("Wolf", *NO, "ok"), ("Mouse", "mouse", EXACT, "ok")],
    ),
    "numbered parens": Case(
        "1) bear\n2) aardvark",
        "concepts",
        [("bear", "bear", EXACT, "ok"), ("aardvark", "aardvark", EXACT, "ok")],
    ),
    "numbered with a hash and a colon": Case(
        "#1: bear\n#2: wolf",
        "concepts",
        [("bear", "bear", EXACT, "ok"), ("wolf", *NO, "ok")],
    ),
    "numbered on one line": Case(
        "1. wolf 2. bear 3. fox",
        "concepts",
        [("wolf", *NO, "ok"), ("bear", "bear", EXACT, "ok"), ("fox", *NO, "ok")],
    ),
    "dash bullets": Case(
        "- fur\n- claws",
        "has",
        [("fur", "has fur_hair", EXACT, "ok"), ("claws", "has claws", EXACT, "ok")],
    ),
    "star bullets": Case(
        "* fur\n* claws",
        "has",
        [("fur", "has fur_hair", EXACT, "ok"), ("claws", "has claws", EXACT, "ok")],
    ),
    "round bullets": Case(
        "• fur\n• four legs",
        "has",
        [("fur", "has fur_hair", EXACT, "ok"), ("four legs", "has four legs", EXACT, "ok")],
    ),
    "list with preface and remark": Case(
        "Here are some features of a bear:\n\n1. **Fur**: thick and brown\n2. Claws - sharp\n\nHope this helps!",
        "has",
        [("Fur", "has fur_hair", EXACT, "ok"), ("Claws", "has claws", EXACT, "ok")],
    ),
    "a markdown heading is no answer": Case(
        "### Answer\nbear\nwolf", "concepts", [("bear", "bear", EXACT, "ok"), ("wolf", *NO, "ok")]
    ),
    "one per line": Case(
        "bear\nwolf\n", "concepts", [("bear", "bear", EXACT, "ok"), ("wolf", *NO, "ok")]
    ),
    "lines after a preface": Case(
        "Features:\nfur\nclaws",
        "has",
        [("fur", "has fur_hair", EXACT, "ok"), ("claws", "has claws", EXACT, "ok")],
    ),
    "commas": Case(
        "fur, claws, sharp teeth",
        "has",
        [
            ("fur", "has fur_hair", EXACT, "ok"),
            ("claws", "has claws", EXACT, "ok"),
            ("sharp teeth", "has sharp teeth", EXACT, "ok"),
        ],
    ),
    "semicolons": Case(
        "fur; claws",
        "has",
        [("fur", "has fur_hair", EXACT, "ok"), ("claws", "has claws", EXACT, "ok")],
    ),
    "final and": Case(
        "fur, claws and four legs",
        "has",
        [
            ("fur", "has fur_hair", EXACT, "ok"),
            ("claws", "has claws", EXACT, "ok"),
            ("four legs", "has four legs", EXACT, "ok"),
        ],
    ),
    "oxford comma": Case(
        "fur, claws, and four legs",
        "has",
        [
            ("fur", "has fur_hair", EXACT, "ok"),
            ("claws", "has claws", EXACT, "ok"),
            ("four legs", "has four legs", EXACT, "ok"),
        ],
    ),
    "final or": Case(
        "a bear, a wolf or a fox",
        "concepts",
        [("a bear", "bear", EXACT, "ok"), ("a wolf", *NO, "ok"), ("a fox", *NO, "ok")],
    ),
    "a hedge is two guesses": Case(
        "It is a bear or a wolf.",
        "concepts",
        [("a bear", "bear", EXACT, "ok"), ("a wolf", *NO, "ok")],
    ),
    "and without a comma is one answer": Case(
        "big and brown", "is", [("big and brown", "is brown", HEAD, "ok")]
    ),
    # sentences around one answer
    "I think it is": Case("I think it is a bear.", "concepts", [("a bear", "bear", EXACT, "ok")]),
    "the answer is, colon": Case(
        "The answer is: bear", "concepts", [("bear", "bear", EXACT, "ok")]
    ),
    "my guess is": Case(
        "My guess is probably an aardvark!", "concepts", [("an aardvark", "aardvark", EXACT, "ok")]
    ),
    "answer label": Case("Answer: Scissors", "concepts", [("Scissors", "scissors", EXACT, "ok")]),
    "it's with a curly apostrophe": Case(
        "It’s a mouse.", "concepts", [("a mouse", "mouse", EXACT, "ok")]
    ),
    # quotes, markdown, punctuation, case
    "quotes": Case('"Bear"', "concepts", [("Bear", "bear", EXACT, "ok")]),
    "curly quotes": Case("“bear”", "concepts", [("bear", "bear", EXACT, "ok")]),
    "bold": Case("**bear**", "concepts", [("bear", "bear", EXACT, "ok")]),
    "italic underscores": Case("_bear_", "concepts", [("bear", "bear", EXACT, "ok")]),
    "trailing punctuation": Case("bear!!!", "concepts", [("bear", "bear", EXACT, "ok")]),
    "upper case": Case("BEAR", "concepts", [("BEAR", "bear", EXACT, "ok")]),
    "explanation in parentheses": Case(
        "bear (a large mammal)", "concepts", [("bear", "bear", EXACT, "ok")]
    ),
    # articles
    "an": Case("an aardvark", "concepts", [("an aardvark", "aardvark", EXACT, "ok")]),
    "the": Case("The bear", "concepts", [("The bear", "bear", EXACT, "ok")]),
    "article inside a relation": Case(
        "is a mammal", "is a", [("is a mammal", "is a mammal", EXACT, "ok")]
    ),
    "article of is-a without the relation": Case(
        "a mammal", "is a", [("a mammal", "is a mammal", EXACT, "ok")]
    ),
    # plurals and inflections
    "regular plural": Case("Bears", "concepts", [("Bears", "bear", EXACT, "ok")]),
    "irregular plural mice": Case("mice", "concepts", [("mice", "mouse", EXACT, "ok")]),
    "irregular plural geese": Case("geese", "concepts", [("geese", "goose", EXACT, "ok")]),
    "irregular plural oxen": Case("oxen", "concepts", [("oxen", "ox", EXACT, "ok")]),
    "irregular plural knives": Case("knives", "concepts", [("knives", "knife", EXACT, "ok")]),
    "irregular plural teeth": Case(
        "sharp tooth", "has", [("sharp tooth", "has sharp teeth", EXACT, "ok")]
    ),
    "plural only": Case("scissors", "concepts", [("scissors", "scissors", EXACT, "ok")]),
    "plural inside a multi-word concept": Case(
        "chests of drawers", "concepts", [("chests of drawers", "chest_of_drawers", EXACT, "ok")]
    ),
    # the norms' own forms: senses, alternatives, multi-word features
    "a sense label matches both senses": Case(
        "a bat", "concepts", [("a bat", "bat_(animal) | bat_(sporting)", EXACT, "ok")]
    ),
    "the second alternative": Case("hair", "has", [("hair", "has fur_hair", EXACT, "ok")]),
    "an alternative in a multi-word feature": Case(
        "tough skin", "has", [("tough skin", "has hard_tough skin", EXACT, "ok")]
    ),
    "multi-word feature, digits": Case("4 legs", "has", [("4 legs", "has four legs", EXACT, "ok")]),
    "relation written out": Case(
        "has four legs", "has", [("has four legs", "has four legs", EXACT, "ok")]
    ),
    "relation in the third person plural": Case(
        "They have sharp teeth", "has", [("have sharp teeth", "has sharp teeth", EXACT, "ok")]
    ),
    "relation is": Case(
        "- is big\n- is brown",
        "is",
        [("is big", "is big_large", EXACT, "ok"), ("is brown", "is brown", EXACT, "ok")],
    ),
    "another relation is no match": Case("is big", "has", [("is big", *NO, "ok")]),
    "noun read as a verb on both sides": Case(
        "leaves", "has", [("leaves", "has leaves", EXACT, "ok")]
    ),
    # a listing of every relation: a stated relation names its own features (and its verb's)
    "every: has": Case("has fur", "every", [("has fur", "has fur_hair", EXACT, "ok")]),
    "every: no relation stated": Case("fur", "every", [("fur", "has fur_hair", EXACT, "ok")]),
    "every: is": Case("is big", "every", [("is big", "is big_large", EXACT, "ok")]),
    "every: is a": Case("is a mammal", "every", [("is a mammal", "is a mammal", EXACT, "ok")]),
    "every: has for has a": Case("has tail", "every", [("has tail", "has a tail", EXACT, "ok")]),
    "every: made of": Case(
        "is made of meat", "every", [("is made of meat", "made of meat", EXACT, "ok")]
    ),
    "every: another relation's answer": Case("is fur", "every", [("is fur", *NO, "ok")]),
    "every: a does feature by its phrase": Case(
        "eats fish", "every", [("eats fish", "does eat fish", EXACT, "ok")]
    ),
    "every: a does feature, inflected": Case(
        "- hibernating", "every", [("hibernating", "does hibernate", EXACT, "ok")]
    ),
    # the head rule, and what it does not do
    "head: a modifier before the target": Case(
        "thick fur", "has", [("thick fur", "has fur_hair", HEAD, "ok")]
    ),
    "head: the head, not a modifier": Case(
        "a thick fur coat", "has", [("a thick fur coat", "has a fur coat", HEAD, "ok")]
    ),
    "head: the longest target wins": Case(
        "a big polar bear", "concepts", [("a big polar bear", "polar_bear", HEAD, "ok")]
    ),
    "head: longer concept exact beats shorter": Case(
        "polar bears", "concepts", [("polar bears", "polar_bear", EXACT, "ok")]
    ),
    "head: a big brown bear": Case(
        "a big brown bear", "concepts", [("a big brown bear", "bear", HEAD, "ok")]
    ),
    "not the head: target first": Case("bear cub", "concepts", [("bear cub", *NO, "ok")]),
    "negation is no match": Case("no fur", "has", [("no fur", *NO, "ok")]),
    "a contracted negation is no match": Case(
        "doesn't have thick fur", "has", [("doesn't have thick fur", *NO, "ok")]
    ),
    "without is no match": Case("without claws", "has", [("without claws", *NO, "ok")]),
    # refusals, empty, truncated
    "refusal sorry": Case(
        "I'm sorry, but I can't help with that.", "concepts", [("", *NO, "refusal")]
    ),
    "refusal curly": Case("I’m sorry, I cannot answer.", "concepts", [("", *NO, "refusal")]),
    "refusal as an AI": Case(
        "As an AI language model, I don't have opinions.", "concepts", [("", *NO, "refusal")]
    ),
    "refusal cannot": Case(
        "I cannot determine which concept this is.", "concepts", [("", *NO, "refusal")]
    ),
    "refusal unable, bold": Case("**I am unable to answer**", "concepts", [("", *NO, "refusal")]),
    "sorry late in a list is a list": Case(
        "1. bear\n2. sorry", "concepts", [("bear", "bear", EXACT, "ok"), ("sorry", *NO, "ok")]
    ),
    "empty": Case("", "concepts", [("", *NO, "empty")]),
    "whitespace": Case("  \n\t ", "concepts", [("", *NO, "empty")]),
    "markdown only": Case("**", "concepts", [("", *NO, "empty")]),
    "truncated list": Case(
        "1. bear\n2. wolf\n3. mo",
        "concepts",
        [("bear", "bear", EXACT, "ok"), ("wolf", *NO, "ok"), ("mo", *NO, "truncated")],
        "length",
    ),
    "truncated single answer": Case("bea", "concepts", [("bea", *NO, "truncated")], "length"),
    "truncated empty": Case("", "concepts", [("", *NO, "truncated")], "length"),
    "truncated drops a whole last answer too": Case(
        "bear, mouse",
        "concepts",
        [("bear", "bear", EXACT, "ok"), ("mouse", *NO, "truncated")],
        "length",
    ),
    # duplicates within one completion
    "duplicate by normal form": Case(
        "1. bear\n2. Bears\n3. mouse",
        "concepts",
        [
            ("bear", "bear", EXACT, "ok"),
            ("Bears", "bear", EXACT, "duplicate"),
            ("mouse", "mouse", EXACT, "ok"),
        ],
    ),
    "two answers, one feature": Case(
        "fur, hair",
        "has",
        [("fur", "has fur_hair", EXACT, "ok"), ("hair", "has fur_hair", EXACT, "ok")],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name: str) -> None:
    case = CASES[name]
    rows = read_completion(case.text, case.finish_reason, MATCHERS[case.against])
    got = [(r["answer"], r["matched"], r["rule"], r["status"]) for r in rows]
    assert got == case.rows


def test_the_table_is_large() -> None:
    assert len(CASES) >= 40


def test_positions_count_distinct_answers() -> None:
    """A duplicate takes its first occurrence's place; later answers are not pushed down; a
    cut answer gets the place it would have had; a completion without answers, 0."""
    rows = read_completion("bear, Bears, mouse, wol", "length", MATCHERS["concepts"])
    assert [r["position"] for r in rows] == [1, 1, 2, 3]
    assert read_completion("I'm sorry", "stop", MATCHERS["concepts"])[0]["position"] == 0


def test_at_most_the_answers_asked_for_are_matched_the_rest_counted() -> None:
    """Issue 57: a completion of 400,000 numbered lines for 5 guesses matched every line; now
    the first K distinct answers are read and the rest is one `beyond` row, never matched."""
    many = "\n".join(f"{n}. bear {n}" for n in range(1, 400_001))
    rows = read_completion(many, "stop", MATCHERS["concepts"], at_most=5)
    assert [r["status"] for r in rows] == ["ok"] * 5 + ["beyond"]
    assert rows[-1]["position"] == 6 and rows[-1]["answer"] == ""
    # a duplicate does not use up a guess; a cut answer past K is counted, not `truncated`
    rows = read_completion("bear, Bears, mouse, wol", "length", MATCHERS["concepts"], at_most=2)
    assert [r["status"] for r in rows] == ["ok", "duplicate", "ok", "beyond"]
    rows = read_completion("bear, mouse", "stop", MATCHERS["concepts"], at_most=2)
    assert [r["status"] for r in rows] == ["ok", "ok"]


def test_truncated_status_and_cut() -> None:
    parsed = parse_completion("1. bear\n2. wo", "length")
    assert (parsed.answers, parsed.status, parsed.cut) == (("bear",), "truncated", "wo")
    assert parse_completion("1. bear\n2. wolf", "stop").status == "ok"


def test_one_normaliser_both_sides() -> None:
    normal = Normaliser()
    assert normal("The Mice!") == normal("mouse") == "mouse"
    assert normal("four-legged") == normal("four legged") == "four leg"
    assert normal("4 LEGS") == normal("four legs") == "four leg"
    assert normal("a the bear") == "bear"  # leading articles, however many
    assert normal("vitamin a") == "vitamin a"  # an article inside stays


@pytest.mark.slow
def test_articles_of_another_language() -> None:
    normal = Normaliser(lang="de", articles=frozenset({"der", "die", "das", "ein", "eine"}))
    assert normal("Die Häuser") == "haus"


def test_answers_frame_keys_and_columns() -> None:
    prompts = pd.DataFrame({"concept": ["bear", "mouse"], "n_props": [1, 1], "prompt": ["p", "q"]})

    @dataclass
    class Said:
        text: str
        finish_reason: str | None

    frame = answers_frame(
        prompts,
        ["concept", "n_props"],
        [[Said("bear, wolf", "stop"), Said("I'm sorry", "stop")], [Said("mice", "stop")]],
        MATCHERS["concepts"],
    )
    assert list(frame.columns) == ["concept", "n_props", *ANSWER_COLUMNS]
    assert frame[["concept", "draw", "position", "matched", "status"]].values.tolist() == [
        ["bear", 0, 1, "bear", "ok"],
        ["bear", 0, 2, "", "ok"],
        ["bear", 1, 0, "", "refusal"],
        ["mouse", 0, 1, "mouse", "ok"],
    ]
    with pytest.raises(ValueError, match="one list of completions per prompt"):
        answers_frame(prompts, ["concept"], [[]], MATCHERS["concepts"])


def self_matches(path) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]], dict]:
    """Over a real norms file: concepts whose text does not match them, feature texts (the
    phrase, each reading of the answer) that do not match their feature among the concept's
    features of the relation, and phrases that do not among all of its features; and the
    normal forms several concepts share."""
    from tacit.lexicon import concept_text
    from tacit.norms import read_norms
    from tacit.norms.phrasing import every_alternative

    norms = read_norms(path)
    concepts = concept_matcher(norms.concepts)
    missed_concepts = [
        (c, concept_text(c))
        for c in norms.concepts
        if c not in concepts.match(concept_text(c)).targets
    ]
    table = norms.table[norms.table["answer"] != ""]
    missed = []
    for (_, relation), rows in table.groupby(["concept", "relation"]):
        matcher = feature_matcher(list(rows["feature"]), list(rows["answer"]), relation)
        for feature, answer, phrase in zip(rows["feature"], rows["answer"], rows["phrase"]):
            for text in [phrase, *every_alternative(answer)]:
                if feature not in matcher.match(text).targets:
                    missed.append((relation, feature, text))
    for _, rows in norms.table.groupby("concept"):
        every = feature_matcher(
            list(rows["feature"]),
            list(rows["answer"]),
            list(rows["relation"]),
            phrases=list(rows["phrase"]),
        )
        for feature, phrase in zip(rows["feature"], rows["phrase"]):
            if feature not in every.match(phrase).targets:
                missed.append(("every", feature, phrase))
    shared = {" ".join(f): names for f, names in concepts.forms.items() if len(names) > 1}
    return missed_concepts, missed, shared


@pytest.mark.slow
@needs_shared
def test_every_cslb_name_matches_itself() -> None:
    """Every CSLB concept's text names it, and every feature's phrase and reading of its answer
    names the feature (`is being reintroduced in Scotland`: the answer starts with the
    relation's own word); only sense labels share a form."""
    missed_concepts, missed, shared = self_matches(REAL_NORMS)
    assert missed_concepts == [] and missed == []
    assert shared == {
        "bat": ["bat_(animal)", "bat_(sporting)"],
        "crane": ["crane_(bird)", "crane_(equipment)"],
    }


@pytest.mark.slow
@needs_mcrae
def test_every_mcrae_name_matches_itself() -> None:
    missed_concepts, missed, shared = self_matches(REAL_MCRAE)
    assert missed_concepts == [] and missed == []
    assert shared["mouse"] == ["mouse", "mouse_(computer)"] and len(shared) == 9
