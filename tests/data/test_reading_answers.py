"""Reading real answers (issue 60): what SmolLM2-135M-Instruct and gpt-3.5-turbo wrote, each
completion with the answers and matches a reader of answers.csv should see. The SmolLM2
completions hold the fragments a new user hit (`The answer is: 1. A bear has no legs`, `An
apple has 5 properties`, a base model running on into the next question); the gpt-3.5
sentences are rows of Hansen & Hebart's released listings (../shared/data/llm-norms)."""

from __future__ import annotations

import pytest

from tacit.matching import (
    Normaliser,
    concept_matcher,
    feature_matcher,
    parse_completion,
    read_completion,
)
from tacit.matching.match import EXACT, HEAD, UNMATCHED
from tacit.norms import read_norms

# a bear's features of every relation: (feature, relation, answer, phrase)
BEAR = [
    ("has fur_hair", "has", "fur_hair", "has fur"),
    ("has claws", "has", "claws", "has claws"),
    ("has four legs", "has", "four legs", "has four legs"),
    ("is big_large", "is", "big_large", "is big"),
    ("is brown", "is", "brown", "is brown"),
    ("is an animal", "is a", "animal", "is an animal"),
    ("does eat fish", "does", "", "eats fish"),
    ("does fly", "does", "", "flies"),
    ("is found in forests", "is", "found in forests", "is found in forests"),
]


def listing(concept: str = "bear", rows=BEAR, **alternatives):
    """A free listing's matcher of `rows` (every relation), `alternatives` by feature."""
    features = [f for f, *_ in rows]
    return feature_matcher(
        features,
        [a for _, _, a, _ in rows],
        [r for _, r, *_ in rows],
        phrases=[p for *_, p in rows],
        alternatives=[alternatives.get(f.replace(" ", "_"), ()) for f in features],
        about=concept,
    )


def read(text: str, matcher, finish: str = "stop") -> list[tuple[str, str, str, str]]:
    return [
        (r["answer"], r["matched"], r["rule"], r["status"])
        for r in read_completion(text, finish, matcher)
    ]


# --- SmolLM2-135M-Instruct's odd answers ------------------------------------------------------


def test_a_list_after_a_preamble_is_the_list_and_the_echoed_frame_is_cut():
    """`The answer is: 1. A bear has no legs`: one answer, `has no legs` (the preamble left
    out, the echoed `A bear` cut, the verb kept), never matched to `has four legs`."""
    parsed = parse_completion("The answer is: 1. A bear has no legs", about="bear")
    assert parsed.answers == ("has no legs",) and parsed.ignored == ("The answer is:",)
    assert read("The answer is: 1. A bear has no legs", listing()) == [
        ("has no legs", "", "", "ok")
    ]


def test_a_count_of_properties_is_no_answer():
    text = "An apple has 5 properties:\n1. It is red\n2. It is round\n3. It has a stem"
    parsed = parse_completion(text, about="apple")
    assert parsed.answers == ("is red", "is round", "has a stem")
    assert parsed.ignored == ("An apple has 5 properties:",)
    assert parse_completion("An apple has 5 properties.", about="apple").status == "empty"
    assert parse_completion("Here are some features of a bear: fur", about="bear").answers == (
        "fur",
    )


def test_a_run_on_into_the_next_demonstration_is_cut():
    """A base model answers, then asks the next question itself: the run-on is cut, and the
    answers before it are whole though the completion stopped at its length."""
    text = "It is red, it is round and it is a fruit. What are the properties of a cake? A cake"
    parsed = parse_completion(text, "length", about="apple")
    assert parsed.answers == ("is red", "is round", "is a fruit")
    assert parsed.status == "ok" and parsed.cut is None
    assert parsed.ran_on == "What are the properties of a cake? A cake"
    turn = parse_completion("fur, claws\n\nQuestion: Which concept has stripes?", about="bear")
    assert turn.answers == ("fur", "claws") and turn.ran_on.startswith("Question:")


def test_an_echoed_question_at_the_start_is_left_out():
    parsed = parse_completion("What are the properties of a bear? It is big.", about="bear")
    assert parsed.answers == ("is big",)
    assert parsed.ignored == ("What are the properties of a bear?",)


def test_the_head_rule_reads_a_phrase_head_not_its_last_word():
    """2 false matches of 11 answers checked by hand: `human beings with claws` named `has
    claws` and `The Maltese Falcon` the concept falcon; the head is before `with`, and a title
    is matched only exactly."""
    has = feature_matcher(["has claws"], ["claws"], "has")
    assert has.match("human beings with claws").name == ""
    assert has.why_unmatched("human beings with claws") == "not the head"
    concepts = concept_matcher(["falcon", "bear"])
    assert concepts.match("The Maltese Falcon").name == ""
    assert concepts.match("the falcon").name == "falcon"  # a title is matched exactly
    assert concepts.match("a Maltese falcon").rule == HEAD
    # the head before what follows it: a preposition or relative word
    assert has.match("sharp claws for climbing trees").name == "has claws"
    assert feature_matcher(["has fur"], ["fur"], "has").match("fur on its back").rule == HEAD
    used = feature_matcher(["is used for cutting"], ["used for cutting"], "is")
    assert used.match("is often used for cutting").name == "is used for cutting"


# --- gpt-3.5-turbo's sentences (Hansen & Hebart 2022) ------------------------------------------

ABACUS = (
    "It is a counting tool, it has beads or counters, it has a frame, it is made of wood or "
    "plastic, it is used for mathematical calculations, it has rows and columns of beads, it is "
    "a traditional tool, it can be used for addition, subtraction, multiplication and division, "
    "it is easy to use and it is a teaching"
)


def test_a_sentence_of_clauses_is_its_clauses_the_subject_cut():
    parsed = parse_completion(ABACUS, "length", about="abacus")
    assert parsed.answers == (
        "is a counting tool",
        "has beads or counters",
        "has a frame",
        "is made of wood or plastic",
        "is used for mathematical calculations",
        "has rows and columns of beads",
        "is a traditional tool",
        "can be used for addition",
        "can be used for subtraction",
        "can be used for multiplication",
        "can be used for division",
        "is easy to use",
    )
    assert parsed.status == "truncated" and parsed.cut == "is a teaching"


def test_or_joins_the_alternatives_of_one_answer():
    """`made of wood or plastic` is one answer, read `made of wood` or `made of plastic`:
    it names every feature a reading names, counted once."""
    parsed = parse_completion(ABACUS, "length", about="abacus")
    readings = dict(zip(parsed.answers, parsed.readings))
    assert readings["is made of wood or plastic"] == ("is made of wood", "is made of plastic")
    assert readings["has beads or counters"] == ("has beads", "has counters")
    cauliflower = parse_completion(
        'it is white or sometimes purple, it has a head or "curd", it can be eaten raw or '
        "cooked, it is used for privacy or security, it can be made from scratch or from a mix",
        about="cauliflower",
    )
    assert cauliflower.readings == (
        ("is white", "is sometimes purple"),
        ("has a head", "has a curd"),
        ("can be eaten raw", "can be eaten cooked"),
        ("is used for privacy", "is used for security"),
        ("can be made from scratch", "can be made from a mix"),
    )
    made = feature_matcher(
        ["made of wood", "made of plastic", "has beads"],
        ["wood", "plastic", "beads"],
        ["made of", "made of", "has"],
        about="abacus",
    )
    rows = read_completion("It is made of wood or plastic.", "stop", made)
    assert [(r["matched"], r["normal"]) for r in rows] == [
        ("made of wood | made of plastic", "wood or plastic")
    ]
    # a concept guessed, not listed: ` or ` still separates two guesses
    assert parse_completion("It is a bear or a wolf.").answers == ("a bear", "a wolf")


def test_a_clause_without_a_subject_takes_the_frame_before_it():
    parsed = parse_completion(
        "It is a dessert, it has toppings such as whipped cream, chocolate sauce and "
        "cherries, it has a long body, many legs",
        about="banana_split",
    )
    assert parsed.answers == (
        "is a dessert",
        "has toppings such as whipped cream",
        "has toppings such as chocolate sauce",
        "has toppings such as cherries",
        "has a long body",
        "has many legs",
    )


def test_negations_are_answers_never_matched_to_what_they_deny():
    matcher = listing()
    assert read("Bears have no claws. They do not fly. It isn't brown.", matcher) == [
        ("have no claws", "", "", "ok"),
        ("do not fly", "", "", "ok"),
        ("isn't brown", "", "", "ok"),
    ]
    assert matcher.why_unmatched("do not fly") == "negated"
    # a feature that is itself negated is matched by its words
    snake = feature_matcher(["has no legs", "does not fly"], ["no legs", ""], ["has", "does"])
    assert snake.match("has no legs").name == "has no legs"


def test_a_free_listing_reads_each_answer_s_relation():
    """Each answer against every feature of the concept, its relation from its start: `it
    has`, `it is`, `it is a`, `it can`, `made of`/`made from`, a verb (`eats fish`); a
    stated relation names only features of its verb (`is fur` names no `has` feature)."""
    matcher = listing()
    text = (
        "It has thick fur, it is big, it is an animal, it eats fish, it can fly, it is found "
        "in forests, it is fur and it has big paws"
    )
    assert read(text, matcher) == [
        ("has thick fur", "has fur_hair", HEAD, "ok"),
        ("is big", "is big_large", EXACT, "ok"),
        ("is an animal", "is an animal", EXACT, "ok"),
        ("eats fish", "does eat fish", EXACT, "ok"),
        ("can fly", "does fly", EXACT, "ok"),
        ("is found in forests", "is found in forests", EXACT, "ok"),
        ("is fur", "", "", "ok"),
        ("has big paws", "", "", "ok"),
    ]
    stated = [matcher.relation_stated(a) for a in ["is an animal", "has big paws", "can fly"]]
    assert stated == ["is a", "has", None]
    assert matcher.relation_stated("is made from wood") == "made of"
    assert matcher.why_unmatched("is fur") == "another relation"
    assert matcher.why_unmatched("has big paws") == "not the head"  # `big`: a modifier
    assert matcher.why_unmatched("has a long snout") == "other words"
    assert set(UNMATCHED) == {"negated", "another relation", "not the head", "other words"}


def test_british_and_american_spellings_are_one_form():
    normal = Normaliser()
    assert normal("is colourful") == normal("is colorful") == "be colorful"
    assert normal("high in fibre") == normal("high in fiber")
    assert normal("Grey") == normal("gray") == "gray"
    assert Normaliser(lang="de")("colour") == "colour"  # English only


@pytest.fixture
def alternatives_norms(tmp_path):
    """A CSLB file whose `feature alternatives` column holds the participants' wordings."""
    header = "domain\tfeature type\tconcept\tfeature\tpf\tfeature alternatives\tparticipant list"
    rows = [
        ("bear", "has fur_hair", "3", "has fur; hair; is furry", "p 1 2 3"),
        ("bear", "is big_large", "2", "is big; is giant", "p 1 2"),
        ("bear", "does growl", "2", "does growl; makes a growling noise", "p 2 3"),
        ("bear", "is giant", "2", "is giant", "p 4 5"),
    ]
    lines = [header] + [
        f"living\tvisual perceptual\t{c}\t{f}\t{pf}\t{a}\t{p}" for c, f, pf, a, p in rows
    ]
    path = tmp_path / "norms.dat"
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return path


def test_cslb_feature_alternatives_name_the_same_feature(alternatives_norms):
    """CSLB's `feature alternatives` (`has fur; hair; is furry`) are kept by the reader and
    name their feature; a feature's own wording wins over another's alternative (`is giant`)."""
    norms = read_norms(alternatives_norms)
    assert norms.alternatives[("bear", "has fur_hair")] == ("has fur", "hair", "is furry")
    rows = norms.features_of("bear")
    matcher = feature_matcher(
        list(rows["feature"]),
        list(rows["answer"]),
        list(rows["relation"]),
        phrases=list(rows["phrase"]),
        alternatives=norms.alternatives_of(rows),
        about="bear",
    )
    said = ["It is furry", "it makes a growling noise", "it is giant", "it has hair"]
    assert [matcher.match(parse_completion(a, about="bear").answers[0]).name for a in said] == [
        "has fur_hair",
        "does growl",
        "is giant",
        "has fur_hair",
    ]
