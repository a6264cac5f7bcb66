"""The lexicon: concept text, articles by sound, bare plurals and mass nouns, noun phrases;
checked against xcslb's articles for 530 CSLB concepts where ../shared/data is present."""

import csv

import pytest
from support import REAL_NORMS, SHARED_DATA

from tacit import lexicon
from tacit.core.errors import TacitError
from tacit.lexicon import (
    MASS_NOUNS,
    PLURAL_NAMES,
    PLURALIA_TANTUM,
    article,
    concept_text,
    noun_class,
    noun_phrase,
    read_articles,
    sentence_start,
)
from tacit.probes.elicit import prompts as elicit


def test_elicitation_uses_the_lexicon(monkeypatch):
    """The templates' concept placeholders read the concept through tacit.lexicon."""
    assert (
        elicit.elicitation_prompt("hour_(time)", "has") == "Everyone knows that an hour has <mask>."
    )
    monkeypatch.setattr(lexicon, "article", lambda noun: "one")
    monkeypatch.setattr(lexicon, "concept_text", lambda concept: concept.upper())
    assert elicit.elicitation_prompt("bear", "has") == "Everyone knows that one BEAR has <mask>."


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


# (concept, noun class, noun phrase)
NOUN_PHRASES = [
    ("bear", "count", "a bear"),
    ("aardvark", "count", "an aardvark"),
    ("bat_(animal)", "count", "a bat"),
    ("coffee_machine", "count", "a coffee machine"),
    ("oil_tanker", "count", "an oil tanker"),
    ("chest_of_drawers", "count", "a chest of drawers"),  # head before "of"
    ("umbrella", "count", "an umbrella"),
    ("unicycle", "count", "a unicycle"),
    ("eucalyptus", "count", "a eucalyptus"),
    ("dice", "count", "a dice"),  # British singular; the norms describe one die
    ("banana", "count", "a banana"),  # count reading: "A banana is curved"
    ("potato", "count", "a potato"),
    ("cabbage", "count", "a cabbage"),
    ("cod", "count", "a cod"),  # the fish, not the food
    ("tape", "count", "a tape"),
    ("hose", "count", "a hose"),  # a garden hose
    ("scissors", "plural", "scissors"),  # plurale tantum
    ("trousers", "plural", "trousers"),
    ("pliers", "plural", "pliers"),
    ("jeans", "plural", "jeans"),
    ("tongs", "plural", "tongs"),
    ("binoculars", "plural", "binoculars"),
    ("knickers", "plural", "knickers"),
    ("bellows", "plural", "bellows"),
    ("kitchen_scales", "plural", "kitchen scales"),  # by the head noun
    ("earmuffs", "plural", "earmuffs"),  # plural names
    ("castanets", "plural", "castanets"),
    ("castenets", "plural", "castenets"),  # CSLB norms.dat's spelling
    ("boots", "plural", "boots"),
    ("lips", "plural", "lips"),
    ("brussel_sprouts", "plural", "brussel sprouts"),
    ("flip_flops", "plural", "flip flops"),
    ("dates (fruit)", "plural", "dates"),
    ("hose_(leggings)", "plural", "hose"),  # the sense label decides
    ("rice", "mass", "rice"),  # substances, drinks
    ("milk", "mass", "milk"),
    ("bread", "mass", "bread"),
    ("wine", "mass", "wine"),
    ("soup", "mass", "soup"),
    ("ice_cream", "mass", "ice cream"),
    ("broccoli", "mass", "broccoli"),  # counted by a measure: a head of broccoli
    ("garlic", "mass", "garlic"),
    ("asparagus", "mass", "asparagus"),
    ("hair", "mass", "hair"),
    ("armour", "mass", "armour"),  # a suit of armour
    ("aspirin", "mass", "aspirin"),  # drugs named as substances
    ("pennicillin", "mass", "pennicillin"),  # CSLB norms.dat's spelling
    ("nail_polish", "mass", "nail polish"),
    ("tape_(scotch)", "mass", "tape"),  # the sense label decides
    ("pepper", "mass", "pepper"),  # McRae's pepper is the spice
]


@pytest.mark.parametrize("concept, kind, phrase", NOUN_PHRASES)
def test_noun_phrase(concept, kind, phrase):
    assert noun_class(concept) == kind
    assert noun_phrase(concept) == phrase


def test_sentence_start():
    assert sentence_start(noun_phrase("bear")) == "A bear"
    assert sentence_start(noun_phrase("aardvark")) == "An aardvark"
    assert sentence_start(noun_phrase("scissors")) == "Scissors"
    assert sentence_start(noun_phrase("coffee_machine")) == "A coffee machine"
    assert sentence_start("an MRI scanner") == "An MRI scanner"  # only the first letter
    assert sentence_start("") == ""


def test_overrides():
    overrides = {"bat_(animal)": "", "milk": "a", "scissors": "a", "herb": "an", "bear": ""}
    assert noun_phrase("bat_(animal)", overrides) == "bat"  # by the concept's name
    assert noun_phrase("herb", overrides) == "an herb"  # American usage, say
    assert noun_phrase("milk", overrides) == "a milk"
    assert noun_phrase("scissors", overrides) == "a scissors"
    assert noun_phrase("bear", overrides) == "bear"
    assert noun_phrase("bat_(sporting)", {"bat": "a"}) == "a bat"  # by its text
    assert noun_phrase("apple", overrides) == "an apple"  # not overridden
    assert noun_phrase("apple", {}) == noun_phrase("apple", None) == "an apple"
    with pytest.raises(TacitError, match="article for 'bear' must be"):
        noun_phrase("bear", {"bear": "the"})


def test_word_sets_are_disjoint_and_lower_case():
    sets = [PLURALIA_TANTUM, PLURAL_NAMES, MASS_NOUNS]
    for i, one in enumerate(sets):
        assert all(w == w.lower().strip() and "_" not in w for w in one)
        for other in sets[i + 1 :]:
            assert not one & other


def test_read_articles_overrides_through_noun_phrase(tmp_path):
    path = tmp_path / "articles.csv"
    path.write_bytes(
        "\ufeffconcept,article,reason\r\n"  # a byte-order mark, CRLF, an extra column
        "bat_(animal),,bare\r\n"
        "herb,an,American\r\n"
        "milk,A,a serving\r\n"
        "\r\n"  # blank lines are skipped
        "bear,-,\r\n"
        "scissors,None,\r\n"
        " aardvark , an ,\r\n"  # spaces around cells are ignored
        "herb,an,the same again\r\n".encode()
    )
    articles = read_articles(path)
    assert articles == {
        "bat_(animal)": "",
        "herb": "an",
        "milk": "a",
        "bear": "",
        "scissors": "",
        "aardvark": "an",
    }
    phrases = [noun_phrase(c, articles) for c in ["bat_(animal)", "herb", "milk", "bear", "cat"]]
    assert phrases == ["bat", "an herb", "a milk", "bear", "a cat"]
    columns_swapped = tmp_path / "swapped.csv"
    columns_swapped.write_text("article,concept\nan,herb\n")
    assert read_articles(columns_swapped) == {"herb": "an"}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty file; expected a CSV with header concept,article"),
        (b"concept,art\nbear,a\n", "line 1: no article column"),
        (b"name,article\nbear,a\n", "line 1: no concept column"),
        (b"concept,article\nbear,a\nowl\n", "line 3: expected concept,article, got ['owl']"),
        (b"concept,article\n,a\n", "line 2: empty concept"),
        (b"concept,article\nbear,the\n", "line 2: unknown article 'the' for 'bear'"),
        (
            b"concept,article\nmilk,\nbear,a\nmilk,a\n",
            "line 4: 'milk' has article 'a' here but 'bare' on line 2",
        ),
        (b"concept,article\nbear,a\ncr\xe8me,a\n", "line 3: not UTF-8 text"),
        (b'concept,article\nbear,"' + b"x" * 200_000 + b'"\n', "line 2: not CSV"),
    ],
)
def test_read_articles_errors(tmp_path, content, message):
    path = tmp_path / "articles.csv"
    path.write_bytes(content)
    with pytest.raises(TacitError) as err:
        read_articles(path)
    assert message in str(err.value)
    assert str(err.value).startswith(f"{path}: ")
    assert "\n" not in str(err.value)


def test_read_articles_missing_file(tmp_path):
    with pytest.raises(TacitError, match="no such articles file"):
        read_articles(tmp_path / "absent.csv")
    with pytest.raises(TacitError, match="is a directory"):
        read_articles(tmp_path)


# Concept names of the CSLB and McRae norms that end in -s but are singular count nouns.
SINGULAR_IN_S = {"bus", "dress", "eucalyptus", "octopus", "platypus", "walrus"}
MCRAE = SHARED_DATA / "mcrae" / "CONCS_FEATS_concstats_brm.xlsx"


def undecided_in_s(concepts):
    """Names whose head ends in -s that the lexicon would give "a" without knowing them."""
    heads = {c: lexicon._head(concept_text(c)) for c in concepts}
    return {
        c
        for c, head in heads.items()
        if head.endswith("s") and noun_class(c) == "count" and head not in SINGULAR_IN_S
    }


@pytest.mark.skipif(not REAL_NORMS.is_file(), reason=f"CSLB norms not found at {REAL_NORMS}")
def test_every_cslb_name_in_s_is_decided():
    """A plural name the lexicon does not know would read "a boots": every CSLB concept whose
    head ends in -s is a known plural or mass noun, or a known singular."""
    with REAL_NORMS.open(encoding="utf-8", newline="") as f:
        concepts = {row["concept"] for row in csv.DictReader(f, delimiter="\t")}
    assert len(concepts) == 638
    assert undecided_in_s(concepts) == set()


@pytest.mark.slow
@pytest.mark.skipif(not MCRAE.is_file(), reason=f"McRae norms not found at {MCRAE}")
@pytest.mark.filterwarnings("ignore:Unknown extension:UserWarning")  # openpyxl, on this file
def test_every_mcrae_name_in_s_is_decided():
    pytest.importorskip("openpyxl", reason="reading McRae's .xlsx needs openpyxl")
    import pandas as pd

    table = pd.read_excel(MCRAE, sheet_name="concepts_features", usecols=["Concept"])
    concepts = set(table["Concept"])
    assert len(concepts) == 541
    assert undecided_in_s(concepts) == set()


def test_names_xcslb_made_singular_read_bare_as_cslb_names_them():
    """xcslb renamed some of CSLB's plural concepts in the singular (trouser, tweezer, pajama,
    ...); under CSLB's own names, which our probes use, they read bare."""
    cslb = [
        "trousers",
        "tweezers",
        "pyjamas",
        "stockings",
        "mittens",
        "bolts",
        "dates",
        "peas",
        "bagpipes",
        "brussel_sprouts",
        "earmuffs",
        "gloves",
    ]
    assert [noun_phrase(c) for c in cslb] == [concept_text(c) for c in cslb]


XCSLB = SHARED_DATA / "lexicon" / "xcslb_concept_senses.csv"


def _count(word, described, others):
    return (
        f"xcslb reads {word} bare, as a mass noun; as the subject of a generic statement about "
        f"the concept we use the count reading 'a {word}': the norms describe one {word} "
        f"({described}), and xcslb itself counts {others}"
    )


def _fruit(word, described):
    return _count(word, described, "apple, orange, melon and strawberry")


def _vegetable(word, described):
    return _count(word, described, "onion, bean, olive and artichoke")


def _head_of(word, described):
    return (
        f"xcslb reads {word} bare, as a mass noun; in British English (CSLB's) a {word} is the "
        f"head one grows and buys, and the norms describe it ({described}): we use the count "
        f"reading 'a {word}'. A judgment call: '{word.capitalize()} is green' is good English too"
    )


def _tree(word, phrase):
    return (
        f"xcslb adds the head noun 'tree' ('{phrase} tree') to keep the tree apart from its wood "
        f"or fruit; noun_phrase supplies only the article and never adds words to a concept's "
        f"name, and '{phrase}' names the tree in a sentence about trees"
    )


# concept -> why our noun phrase (quoted in the reason) differs from xcslb's `article` column.
XCSLB_DISAGREEMENTS = {
    "banana": _fruit("banana", "is curved, has a peel"),
    "blueberry": _fruit("blueberry", "is small, is round"),
    "cherry": _fruit("cherry", "has a stone, has a stalk"),
    "coconut": _fruit("coconut", "has a shell, is hard"),
    "grape": _fruit("grape", "is small, grows in bunches"),
    "grapefruit": _fruit("grapefruit", "has a peel, is juicy"),
    "kiwi": _fruit("kiwi", "is small, is furry"),
    "lemon": _fruit("lemon", "is round, has pips"),
    "lime": _fruit("lime", "has a peel, is a citrus fruit"),
    "mango": _fruit("mango", "has a skin, is sweet"),
    "peach": _fruit("peach", "has a stone, is furry"),
    "pear": _fruit("pear", "has a stalk, has pips"),
    "pineapple": _fruit("pineapple", "is prickly, has leaves"),
    "plum": _fruit("plum", "has a stone, is purple"),
    "satsuma": _fruit("satsuma", "is small, has segments"),
    "tangerine": _fruit("tangerine", "has segments, has pips"),
    "sultana": _count("sultana", "is small, is wrinkly", "raisin, currant and prune"),
    "carrot": _vegetable("carrot", "is long, grows underground"),
    "cucumber": _vegetable("cucumber", "is long, has a skin"),
    "leek": _vegetable("leek", "is long, is thin"),
    "mushroom": _vegetable("mushroom", "has a stalk, has a cap"),
    "potato": _vegetable("potato", "has a skin, grows in the ground"),
    "pumpkin": _vegetable("pumpkin", "is big, is orange"),
    "radish": _vegetable("radish", "is small, is red"),
    "sweet_potato": _vegetable("sweet potato", "has a skin, grows in the ground"),
    "tomato": _vegetable("tomato", "is round, is juicy"),
    "turnip": _vegetable("turnip", "grows in the ground, has roots"),
    "zucchini": _vegetable("zucchini", "is long, is green; CSLB's courgette"),
    "cabbage": _head_of("cabbage", "is round, has leaves"),
    "cauliflower": _head_of("cauliflower", "is white, has leaves"),
    "lettuce": _head_of("lettuce", "has leaves, grows"),
    "cod": (
        "xcslb reads cod bare, as the food; CSLB lists cod among the fish and its norms describe "
        "the animal (has fins, has gills, swims): the count reading 'a cod', as xcslb itself "
        "reads salmon, trout and herring"
    ),
    "heart": (
        "xcslb reads heart bare; heart is a count noun, an organ ('A heart pumps blood'): "
        "'a heart', as xcslb itself reads nose, finger and bone"
    ),
    "soup": (
        "soup is a mass noun, a liquid ('Soup is hot'): 'soup' bare, as xcslb itself reads milk "
        "and tea; 'a soup' is a kind or a serving of it"
    ),
    "asparagus": (
        "asparagus is counted by the spear, not by its name ('a spear of asparagus'): "
        "'asparagus' bare, as xcslb itself reads broccoli and celery"
    ),
    "armor": (
        "armour is a mass (collective) noun: 'a suit of armour', not 'an armour': 'armor' bare"
    ),
    "ear": "xcslb's 'a ear' is a slip: ear begins with a vowel sound, 'an ear'",
    "knickers": (
        "knickers, the garment, is plural only (plurale tantum): 'a knicker' is not English for "
        "it; 'knickers' bare, as xcslb itself reads jeans and tights"
    ),
    "lips": (
        "xcslb keeps CSLB's plural name but writes the singular 'a lip'; noun_phrase never "
        "changes a concept's number, and the plural reads bare: 'lips' ('Lips are red')"
    ),
    "brussels_sprout": (
        "xcslb's bare singular 'brussels sprout' is no generic subject for a count noun "
        "('Brussels sprout is green'); the singular name takes its article: 'a brussels sprout' "
        "(CSLB's own name, brussel_sprouts, is plural and reads bare)"
    ),
    "birch": _tree("birch", "a birch"),
    "chestnut": _tree("chestnut", "a chestnut"),
    "elm": _tree("elm", "an elm"),
    "eucalyptus": _tree("eucalyptus", "a eucalyptus"),
    "fir": _tree("fir", "a fir"),
    "oak": _tree("oak", "an oak"),
    "pine": _tree("pine", "a pine"),
    "sycamore": _tree("sycamore", "a sycamore"),
    "willow": _tree("willow", "a willow"),
}


def xcslb_comparison() -> tuple[int, dict[str, tuple[str, str]]]:
    """xcslb's rows, and (ours, xcslb's) for every concept where they differ (any case)."""
    with XCSLB.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    differ = {}
    for row in rows:
        ours, theirs = noun_phrase(row["concept"]), " ".join(row["article"].split())
        if ours.lower() != theirs.lower():
            differ[row["concept"]] = (ours, theirs)
    return len(rows), differ


@pytest.mark.skipif(not XCSLB.is_file(), reason=f"xcslb concept senses not found at {XCSLB}")
def test_agrees_with_xcslb_but_for_listed_reasons():
    n, differ = xcslb_comparison()
    assert n == 530
    unexplained = {c: differ[c] for c in set(differ) - set(XCSLB_DISAGREEMENTS)}
    agreed_now = set(XCSLB_DISAGREEMENTS) - set(differ)
    assert not unexplained, f"disagreements with no reason (ours, xcslb's): {unexplained}"
    assert not agreed_now, f"listed as disagreements but now agree: {sorted(agreed_now)}"
    for concept, (ours, _) in differ.items():
        assert f"'{ours}'" in XCSLB_DISAGREEMENTS[concept], (concept, ours)
    assert (n - len(differ), len(differ)) == (481, 49)
