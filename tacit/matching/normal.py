"""The one normaliser: what a model's answer and a norm's name are compared as.

Both sides go through the same `Normaliser`, so a rule can never favour one of them: NFKC and
case folding, punctuation to spaces, numbers to 20 as words, each word lemmatised by simplemma,
British spellings read as American (English), leading articles dropped. The rules in order,
and why simplemma: docs/probes/generation.md ("One normaliser for both sides").

Examples:
    >>> [Normaliser()(t) for t in ["The Mice", "4 Legs", "sharp teeth!", "an aardvark"]]
    ['mouse', 'four leg', 'sharp tooth', 'aardvark']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from tacit.lexicon import ARTICLES

# tacit.lexicon's articles (`a`, `an`; its "" is no word) and the definite one
ENGLISH_ARTICLES = frozenset(a for a in ARTICLES if a) | {"the"}
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_NUMBER_WORDS = _NUMBERS.split()
# rule 5: British spellings (those of CSLB's features) and their American forms
_BRITISH = {
    "colour": "color",
    "flavour": "flavor",
    "odour": "odor",
    "vapour": "vapor",
    "labour": "labor",
    "armour": "armor",
    "humour": "humor",
    "harbour": "harbor",
    "neighbour": "neighbor",
    "behaviour": "behavior",
    "rumour": "rumor",
    "savour": "savor",
    "favour": "favor",
    "honour": "honor",
    "parlour": "parlor",
    "tumour": "tumor",
}
SPELLINGS = {
    **{
        british + ending: american + ending
        for british, american in _BRITISH.items()
        for ending in ("", "s", "ed", "ful", "ing", "less", "y", "ite", "ites", "able")
    },
    **{
        f"{stem}{british}": f"{stem}{american}"
        for stem in ("cent", "met", "centimet", "millimet", "kilomet", "lit", "fib", "theat")
        for british, american in (("re", "er"), ("res", "ers"))
    },
    **{
        f"{stem}{british}": f"{stem}{american}"
        for stem in (
            "organ",
            "real",
            "recogn",
            "special",
            "steril",
            "pasteur",
            "pressur",
            "motor",
            "moistur",
            "stabil",
            "alphabet",
            "custom",
            "categor",
            "symbol",
            "fertil",
            "harmon",
            "vapor",
            "summar",
            "memor",
            "apolog",
            "tenderis",
            "personal",
            "minim",
            "maxim",
        )
        for british, american in (
            ("ise", "ize"),
            ("ised", "ized"),
            ("ises", "izes"),
            ("ising", "izing"),
            ("isation", "ization"),
            ("iser", "izer"),
            ("isers", "izers"),
        )
    },
    "analogue": "analog",
    "catalogue": "catalog",
    "grey": "gray",
    "greyish": "grayish",
    "jewellery": "jewelry",
    "aluminium": "aluminum",
    "tyre": "tire",
    "tyres": "tires",
    "mould": "mold",
    "mouldy": "moldy",
    "plough": "plow",
    "pyjamas": "pajamas",
    "moustache": "mustache",
    "cosy": "cozy",
    "programme": "program",
    "defence": "defense",
    "licence": "license",
    "travelling": "traveling",
    "travelled": "traveled",
    "pedalling": "pedaling",
    "fuelled": "fueled",
    "modelling": "modeling",
    "jewelled": "jeweled",
    "woollen": "woolen",
    "sceptical": "skeptical",
    "doughnut": "donut",
    "doughnuts": "donuts",
    "yoghurt": "yogurt",
    "storey": "story",
}
_APOSTROPHES = re.compile(r"['’‘`´]")
_NOT_A_WORD = re.compile(r"[^\w]+|_+")  # punctuation, symbols and underscores


@lru_cache(maxsize=65536)
def lemma(word: str, lang: str) -> str:
    """A word's lemma in `lang` (simplemma's dictionary; the word itself where it has none)."""
    import simplemma

    return str(simplemma.lemmatize(word, lang=lang)).casefold()  # German nouns come capitalised


def words_of(text: str) -> list[str]:
    """Rules 1 to 3: the text's words, case folded, without punctuation, small numbers as words.

    Examples:
        >>> words_of("  **Four-legged**, 4 LEGS!")
        ['four', 'legged', 'four', 'legs']
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _NOT_A_WORD.sub(" ", _APOSTROPHES.sub("", text))
    return [_NUMBER_WORDS[int(w)] if w.isdigit() and int(w) <= 20 else w for w in text.split()]


def without_articles(words: list[str], articles: Iterable[str]) -> list[str]:
    """The words without their leading articles (`the`, `a` ...; several: `the a`)."""
    articles = frozenset(articles)
    start = 0
    while start < len(words) and words[start] in articles:
        start += 1
    return words[start:]


@dataclass(frozen=True)
class Normaliser:
    """The normal form of any text, the model's or the norms' (the module docstring's rules).

    lang: the language simplemma lemmatises in (an ISO 639-1 code: `en`, `de`, `fr`).
    articles: leading words dropped besides English's `a`, `an`, `the` (a template language's
        articles, as `--articles FILE` gives them).
    """

    lang: str = "en"
    articles: frozenset[str] = field(default_factory=frozenset)

    def words(self, text: str) -> list[str]:
        """The normal form as words (rules 1 to 6)."""
        return self._lemmas(without_articles(words_of(text), self.every_article))

    def lemmas(self, text: str) -> list[str]:
        """The text's words lemmatised, articles kept (rules 1 to 5): a relation's prefix
        (`is a` -> `be a`)."""
        return self._lemmas(words_of(text))

    def _lemmas(self, words: list[str]) -> list[str]:
        if self.lang == "en":
            words = [SPELLINGS.get(w, w) for w in words]
        return [lemma(w, self.lang) for w in words]

    def __call__(self, text: str) -> str:
        return " ".join(self.words(text))

    @property
    def every_article(self) -> frozenset[str]:
        return ENGLISH_ARTICLES | frozenset(a.casefold() for a in self.articles)

    def record(self) -> dict[str, object]:
        """What the manifest says of the normaliser."""
        import simplemma

        return {
            "lemmatiser": f"simplemma {simplemma.__version__}",
            "lang": self.lang,
            "articles": sorted(self.every_article),
        }
