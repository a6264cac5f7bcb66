"""How a concept name reads in English: its text, its article, its noun phrase.

Norms name concepts in a file's shorthand (`bat_(animal)`, `coffee_machine`, `scissors`);
prompts need them as English: "a bat", "a coffee machine", "scissors". This module is the one
place that knows how. Plural and mass nouns read bare, count nouns take `a`/`an` by sound;
docs/probes/candidates.md ("Which article a concept takes") has the rules and their reasons.

Examples:
    >>> [sentence_start(noun_phrase(c)) for c in ["bear", "aardvark", "scissors", "rice"]]
    ['A bear', 'An aardvark', 'Scissors', 'Rice']
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from pathlib import Path

from tacit.core.errors import TacitError
from tacit.core.files import check_text, regular_file


def _words(text: str) -> frozenset[str]:
    """A set of words written as one string: long word lists stay readable."""
    return frozenset(text.split())


# Nouns with no singular in the sense that names the thing ("a scissor" is not one).
PLURALIA_TANTUM = _words(
    "binoculars bellows cattle clothes glasses goggles headphones jeans knickers leggings "
    "overalls pajamas pants pliers pyjamas scales scissors secateurs shears shorts spectacles "
    "sunglasses tights tongs trousers tweezers"
)
# Concepts that the norms name in the plural, though the singular exists.
PLURAL_NAMES = _words(
    "bagpipes beans beets bolts boots castanets curtains dates drapes earmuffs gloves "
    "leotards lips mittens nylons onions peas sandals screws shelves shoes skis slippers socks "
    "stockings sprouts"
) | {
    "brussel sprouts",  # CSLB's spelling
    "brussels sprouts",
    "castenets",  # CSLB's norms.dat spelling of castanets
    "dates (fruit)",
    "flip flops",
    "flip-flops",
    "hose (leggings)",  # McRae: hose the legwear (plural); a garden hose is counted
}
# Mass nouns: what the concept is made of or is, not one of it.
MASS_NOUNS = _words(
    # food and drink
    "bacon beef beer brandy bread butter champagne cheese chocolate cider coffee cream flour "
    "gin ham honey jam jelly ketchup lemonade mayonnaise meat milk pasta pork rice salt soup "
    "sugar tea toast vodka water whiskey whisky wine yoghurt yogurt "
    # vegetables and herbs counted by a measure: a head, a stick, a clove, a spear, a cob
    "asparagus broccoli celery corn garlic parsley rhubarb spinach "
    # collectives, counted by a measure too: a suit of armour, a piece of furniture
    "armor armour clothing crockery cutlery furniture jewellery jewelry luggage "
    # materials and other substances
    "cotton glue gold hair leather moss paper perfume plastic poison sand sandpaper seaweed "
    "sellotape silver steel tobacco wood wool "
    # drugs and cosmetics, named as substances
    "aspirin codeine ibuprofen lipstick penicillin valium"
) | {
    "ice cream",
    "nail polish",
    "pennicillin",  # CSLB's norms.dat spelling of penicillin
    "pepper",  # McRae's pepper is the spice ("is black", "a spice"); a bell pepper is counted
    "tape (scotch)",
}
ARTICLES = ("a", "an", "")

# Sounds that spelling hides. "an" before a silent h; "a" before a vowel letter read as the
# consonant /j/ ("you": unicorn, European, ewe, utensil) or /w/ ("one"). Before u, one
# consonant and a vowel, English reads "you" (unicorn, uniform, usual, utensil, urine,
# ukulele); before two consonants "uh" (umbrella, udder, urn, usher). The un- and up-
# prefixes read "uh" (uneven, upper), but uni- and unan- read "you" (unit, unanimous) unless
# un- is the prefix (unimportant, uninteresting, unidentified).
_SILENT_H = re.compile(r"(hour|honest|honou?r|heir|hors\b)")
_CONSONANT_SOUND = re.compile(
    r"(eu|ewe|one(?![a-z])|once(?![a-z])|ouija|uni(?![nmd])|unan|u[bcdfgklmrstvz][aeiou])"
)
_LETTERS_AN = frozenset("aefhilmnorsx")  # letter names that start with a vowel: "an X-ray"


def concept_text(concept: str) -> str:
    """How a concept name reads in a sentence: no sense label, spaces for underscores.

    Sense labels come as `_(...)` (norms.dat, McRae) or ` (...)` (CSLB's concepts.dat).

    Examples:
        >>> concept_text("bat_(animal)"), concept_text("coffee_machine")
        ('bat', 'coffee machine')
        >>> concept_text("bat (animal)")
        'bat'
    """
    return re.split(r"[_ ]\(", concept, maxsplit=1)[0].replace("_", " ").strip()


def article(noun: str) -> str:
    """`a` or `an` for a count noun, by the sound of its first word, not its first letter.

    Spelling is a good guide but not the rule: a silent h takes `an`, a u or eu read "you"
    and a one read "won" take `a`. Single letters and initialisms are read letter by letter
    ("an X-ray", "a U-boat", "an MRI"); acronyms read as words ("NASA") cannot be told from
    initialisms by their spelling and need an override. Numbers are read as numbers ("an 8",
    "an 11-year-old", "a 1950s"). British usage: "a herb", "a historic".

    Examples:
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
    digits = re.sub(r"[^\d,].*", "", token).replace(",", "")  # the leading number, as spoken
    eleven_or_eighteen = digits[:2] in ("11", "18") and len(digits) % 3 == 2
    return "an" if digits.startswith("8") or eleven_or_eighteen else "a"


def _key(concept: str) -> str:
    """A concept name for lookups: lower case, spaces for underscores, sense label kept."""
    return " ".join(concept.replace("_", " ").lower().split())


def _head(text: str) -> str:
    """The head noun of a concept's text: its last word, or the word before `of`."""
    words = text.lower().split()
    if "of" in words[1:]:
        words = words[: words.index("of", 1)]
    return words[-1] if words else ""


def noun_class(concept: str) -> str:
    """`count`, `plural` or `mass`: what article the concept takes and how its verb agrees.

    A template that puts a concept before a verb needs this as much as the article:
    "A bear has fur" but "Scissors have blades", "Rice is white".

    Examples:
        >>> [noun_class(c) for c in ["bear", "kitchen_scales", "ice_cream", "chest_of_drawers"]]
        ['count', 'plural', 'mass', 'count']
    """
    text = concept_text(concept).lower()
    for form in (_key(concept), text, _head(text)):
        if form in MASS_NOUNS:
            return "mass"
        if form in PLURALIA_TANTUM or form in PLURAL_NAMES:
            return "plural"
    return "count"


def noun_phrase(concept: str, articles: Mapping[str, str] | None = None) -> str:
    """The concept with its article, as it reads inside a sentence.

    `articles` overrides the lexicon: concept -> `a`, `an` or `""` (bare), looked up by the
    concept's name as given (`bat_(animal)`), then by its text (`bat`).

    Examples:
        >>> [noun_phrase(c) for c in ["bear", "aardvark", "scissors", "coffee_machine", "milk"]]
        ['a bear', 'an aardvark', 'scissors', 'a coffee machine', 'milk']
        >>> noun_phrase("bat_(animal)", {"bat": ""}), noun_phrase("milk", {"milk": "a"})
        ('bat', 'a milk')
    """
    text = concept_text(concept)
    chosen = None
    if articles:
        for name in (concept, text):
            if name in articles:
                chosen = articles[name]
                break
    if chosen is None:
        chosen = "" if noun_class(concept) != "count" else article(text)
    elif chosen not in ARTICLES:
        raise TacitError(f"article for {concept!r} must be 'a', 'an' or '' (bare), not {chosen!r}")
    return f"{chosen} {text}" if chosen else text


def sentence_start(phrase: str) -> str:
    """A noun phrase as the first words of a sentence: its first letter capitalised.

    Only the first letter: the rest keeps its case ("An MRI scanner").

    Examples:
        >>> sentence_start("a bear"), sentence_start("scissors"), sentence_start("an MRI scanner")
        ('A bear', 'Scissors', 'An MRI scanner')
    """
    return phrase[:1].upper() + phrase[1:]


_BARE_VALUES = ("", "-", "none")


def read_articles(path: str | Path, *, any_article: bool = False) -> dict[str, str]:
    """Read an `--articles FILE`: CSV, header `concept,article`, one concept a line.

    `article` is `a`, `an`, or bare: empty, `-` or `none` (any case; all read as `""`), so that
    a spreadsheet's empty cell and a hand-written `-` both mean "no article". With
    `any_article` (templates in another language) an article is any one word, kept as written
    (`ein`, `eine`, `une`). Concepts are
    written as in the norms (`bat_(animal)`) or as text (`bat`); see `noun_phrase`. Other
    columns are allowed and ignored (a `reason` column, say); blank lines are skipped. A concept
    may repeat with the same article, not with another. Every problem is a one-line
    `TacitError` naming the file and line; the first one found stops the reading.
    """
    path = Path(path)
    rows = csv.reader(io.StringIO(_read_utf8(path), newline=""))
    articles: dict[str, str] = {}
    first_line: dict[str, int] = {}
    try:
        at_concept, at_article = _article_columns(path, next(rows, None))
        for row in rows:
            line = rows.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) <= max(at_concept, at_article):
                raise TacitError(f"{path}: line {line}: expected concept,article, got {row!r}")
            concept, value = row[at_concept].strip(), row[at_article].strip()
            value = value if any_article and value.lower() not in _BARE_VALUES else value.lower()
            if not concept:
                raise TacitError(f"{path}: line {line}: empty concept")
            if any_article and len(value.split()) > 1:
                raise TacitError(
                    f"{path}: line {line}: the article {value!r} of {concept!r} "
                    "is more than one word"
                )
            if not any_article and value not in ("a", "an", *_BARE_VALUES):
                raise TacitError(
                    f"{path}: line {line}: unknown article {row[at_article]!r} for {concept!r} "
                    "(use a, an, or empty, - or none for bare)"
                )
            value = "" if value in _BARE_VALUES else value
            if articles.get(concept, value) != value:
                raise TacitError(
                    f"{path}: line {line}: {concept!r} has article {value or 'bare'!r} here "
                    f"but {articles[concept] or 'bare'!r} on line {first_line[concept]}"
                )
            articles[concept] = value
            first_line.setdefault(concept, line)
    except csv.Error as err:
        raise TacitError(f"{path}: line {rows.line_num}: not CSV: {err}") from None
    return articles


def _article_columns(path: Path, header: list[str] | None) -> tuple[int, int]:
    """Where the concept and article columns are, from the header row."""
    if header is None:
        raise TacitError(f"{path}: empty file; expected a CSV with header concept,article")
    columns = [name.strip().lower() for name in header]
    missing = [name for name in ("concept", "article") if name not in columns]
    if missing:
        raise TacitError(
            f"{path}: line 1: no {' or '.join(missing)} column; the header must be "
            f"concept,article (found {','.join(header)!r})"
        )
    return columns.index("concept"), columns.index("article")


def _read_utf8(path: Path) -> str:
    """A text file's contents (a UTF-8 byte-order mark allowed), or a one-line TacitError."""
    if path.is_dir():
        raise TacitError(f"{path}: is a directory; give the articles file itself")
    try:
        regular_file(path, missing_ok=True)
        data = path.read_bytes()
    except FileNotFoundError:
        raise TacitError(f"{path}: no such articles file") from None
    except OSError as err:
        raise TacitError(f"{path}: cannot read the articles file ({err.strerror})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise TacitError(f"{path}: line {line}: not UTF-8 text (byte {err.start})") from None
    check_text(text, path)
    return text
