"""Feature -> verb phrase: one example per feature shape in CSLB, and every real feature."""

import pytest
from support import REAL_NORMS, needs_shared

from tacit.norms import feature_to_phrase, read_norms, relation_of, third_person

# One example of every shape of feature that occurs in the real file.
SHAPES = [
    ("is a musical instrument", "is a musical instrument"),  # is a X: kept
    ("is big_large", "is big"),  # alternatives: first kept
    ("is sold_bought in supermarkets_shops", "is sold in supermarkets"),  # several sets
    ("is disgusting_taste bad", "is disgusting"),  # an alternative that is a phrase
    ("is a carnivore_eats meat", "is a carnivore"),
    ("has fur_hair", "has fur"),
    ("has a seat_seats", "has a seat"),
    ("has technology_is technological", "has technology"),
    ("made of metal", "is made of metal"),
    ("made of water_is watery", "is made of water"),
    ("made  of metal and fabric", "is made of metal and fabric"),  # doubled space
    ("does make music", "makes music"),
    ("does fly", "flies"),  # consonant + y
    ("does play", "plays"),  # vowel + y
    ("does go", "goes"),
    ("does moo", "moos"),
    ("does have a smell", "has a smell"),  # irregular
    ("does buzz", "buzzes"),
    ("does wash", "washes"),
    ("does hiss", "hisses"),
    ("does catch mice", "catches mice"),
    ("does box", "boxes"),
    ("does sing", "sings"),  # ends in -ing but a verb
    ("does hold_contain liquid_water", "holds liquid"),
    ("does drive_is driven", "drives"),
    ("does smell_is smelly", "smells"),
    ("does make sound_a noise", "makes sound"),
    ("does contain_hold_liquid", "contains liquid"),
    ("does breath underwater", "breathes underwater"),  # CSLB's misspelling
    ("does keeps animals out", "keeps animals out"),  # already inflected
    ("does not fly", "does not fly"),  # negation keeps does
    ("does nothing", "does nothing"),
    ("does DIY", "does DIY"),
    ("does washing up", "does washing up"),  # gerund keeps does
    ("does stunts_tricks", "does stunts"),
    ("keeps people out", "keeps people out"),  # unprefixed third person: kept
    ("found in bars", "is found in bars"),
    ("had pipes", "has pipes"),
    ("originated in Japan", "originated in Japan"),
]


@pytest.mark.parametrize(("feature", "phrase"), SHAPES)
def test_feature_shapes(feature, phrase):
    assert feature_to_phrase(feature) == phrase


def test_third_person_spelling():
    assert [third_person(v) for v in ["cry", "obey", "do", "fix", "touch", "rush", "see"]] == [
        "cries",
        "obeys",
        "does",
        "fixes",
        "touches",
        "rushes",
        "sees",
    ]


def test_relation_of():
    assert relation_of("does make music") == "does"
    assert relation_of("made of wood") == "made of"
    assert relation_of("is a fruit") == "is a"  # elicitation's relations, read straight off
    assert relation_of("is an animal") == "is a"
    assert relation_of("has an udder") == "has a"
    assert relation_of("has a tail") == "has a"
    assert relation_of("is made of metal") == "made of"  # a ready phrase's made of
    assert relation_of("originated in Japan") == "other"


@needs_shared
def test_every_real_feature_reads_as_a_verb_phrase():
    """Each of the real file's features yields a clean phrase starting with a verb."""
    table = read_norms(REAL_NORMS).table
    assert not table["phrase"].str.contains("_").any()
    assert not table["phrase"].str.contains("  ").any()
    assert (table["phrase"] == table["phrase"].str.strip()).all()
    first = table["phrase"].str.split(" ").str[0]
    # `made of` becomes `is made of`; `does` survives only before not-a-verb words.
    assert set(first[table["relation"] == "made of"]) == {"is"}
    assert set(first[table["relation"].isin(["is", "is a"])]) == {"is"}
    assert set(first[table["relation"].isin(["has", "has a"])]) == {"has"}
    does = table[table["relation"] == "does"]
    kept_does = does[does["phrase"].str.startswith("does ")]
    assert set(kept_does["phrase"].str.split(" ").str[1]) <= {
        "not",
        "nothing",
        "good",
        "DIY",
        "half",
        "greetings",
        "detailed",
        "structural",
        "stunts",
        "clamping",
        "poking",
        "sledging",
        "tweezing",
        "washing",
    }
    inflected = does[~does["phrase"].str.startswith("does ")]["phrase"].str.split(" ").str[0]
    assert inflected.str.endswith("s").all()
