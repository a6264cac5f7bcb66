"""A set of prompt templates and their settings, as read from a file (tacit.templates.reading)
and filled by the probes: what a template is (Template), the set a run uses (TemplateSet), and
the placeholders they know. tacit.templates says what a template file holds."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tacit import lexicon  # read through the module, one home for how concepts are written
from tacit.core.blank import MASK
from tacit.core.errors import TacitError

SHIPPED = Path(__file__).parent  # the shipped sets: paper.jsonl, paraphrases.jsonl
DEFAULT = "paper"
ENSEMBLE = "ensemble"  # the id of the ensemble over a question's templates (reserved)
PLACEHOLDER = re.compile(r"\[([^\[\]]*)\]")
CONCEPT_FORMS = ("X", "a X", "A X")
BLANK_FORMS = ("Y", "a Y", "A Y")
PROPERTIES = "P"
KNOWN = (*CONCEPT_FORMS, *BLANK_FORMS, PROPERTIES)
PREFIX = re.compile(r"\{([^{}]*)\}\s*")
SENTENCE_END = re.compile(r"\s*[.!?]*\s*")  # what may follow a blank that ends its sentence
SETTINGS = {"language": str, "and": str, "serial_comma": bool, "pronoun": str, "articles": dict}


def join_phrases(phrases: Sequence[str], and_word: str = "and", serial_comma: bool = True) -> str:
    """Phrases as a list: commas, then `and_word` before the last (after a comma too with
    `serial_comma`, the paper's English).

    Examples:
        >>> join_phrases(["has fur", "is big", "has claws"])
        'has fur, is big, and has claws'
        >>> join_phrases(["hat Fell", "ist groß", "hat Krallen"], "und", serial_comma=False)
        'hat Fell, ist groß und hat Krallen'
    """
    if len(phrases) < 3:
        return f" {and_word} ".join(phrases)
    comma = "," if serial_comma else ""
    return ", ".join(phrases[:-1]) + f"{comma} {and_word} " + phrases[-1]


@dataclass(frozen=True)
class Settings:
    """How a file's templates write what they fill in (see the module docstring)."""

    language: str = "en"
    and_word: str = "and"
    serial_comma: bool = True
    pronoun: str = "it"
    articles: Mapping[str, str] = field(default_factory=dict)

    @property
    def english(self) -> bool:
        return self.language.lower() in ("en", "english") or self.language.lower().startswith("en-")

    def record(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "and": self.and_word,
            "serial_comma": self.serial_comma,
            "pronoun": self.pronoun,
            "articles": dict(self.articles),
        }


@dataclass(frozen=True)
class Template:
    """One template of a file (see the module docstring), parsed."""

    id: str
    text: str
    relation: str | None
    line: int
    prefix: str | None  # the optional prefix's text, without its braces
    body: str  # the text after the prefix
    concept: str | None  # which concept placeholder it holds, if any
    blank: str  # which blank placeholder it holds

    @property
    def retrieval(self) -> bool:
        return self.relation is None

    @property
    def blank_ends_sentence(self) -> bool:
        """Whether only final punctuation follows the blank (a causal model's next-token
        question then applies)."""
        return bool(SENTENCE_END.fullmatch(self.body.partition(f"[{self.blank}]")[2]))

    def blank_text(self, spans: bool) -> str:
        """What stands in the blank: `<mask>`, after `a` / `A` for retrieval's [a Y] / [A Y] in
        vocabulary mode (candidate spans bring their own article)."""
        if spans or self.blank == "Y":
            return MASK
        return f"{self.blank[0]} {MASK}"

    def a_before_blank(self, spans: bool) -> bool:
        """Whether the English article `a` comes right before the blank (vocabulary mode):
        a concept that starts with a vowel would read "a apple", so it is left out."""
        if spans:
            return False
        before = self.body.partition(f"[{self.blank}]")[0]
        return self.blank in ("a Y", "A Y") or bool(re.search(r"(^|\s)[aA]\s*$", before))

    def fill(
        self, *, concept: str = "", properties: str = "", blank: str = MASK, prefix: bool = True
    ) -> str:
        """The prompt: the concept's text (in this template's form), the property list and
        what stands in the blank put in; the prefix kept or dropped."""
        values = {form: concept for form in CONCEPT_FORMS}
        values.update({form: blank for form in BLANK_FORMS})
        values[PROPERTIES] = properties
        text = PLACEHOLDER.sub(lambda m: values[m.group(1)], self.body)
        if self.prefix is not None and prefix:
            return f"{self.prefix} {text}"
        return lexicon.sentence_start(text) if self.prefix is not None else text

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            **({"relation": self.relation} if self.relation else {}),
            "template": self.text,
        }


@dataclass(frozen=True)
class TemplateSet:
    """The templates of one file, with where they came from and their settings."""

    source: str  # as given: a shipped name (`paper`) or a path
    path: Path
    sha256: str
    settings: Settings
    templates: tuple[Template, ...]
    commit: str | None = None  # the Hub dataset's commit, for a file read from the Hub

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def retrieval(self) -> list[Template]:
        """The retrieval templates (those without a relation), in file order."""
        found = [t for t in self.templates if t.retrieval]
        if not found:
            raise TacitError(
                f"--templates {self.source}: no retrieval template (a line without `relation`, "
                "its text with [P] and a blank)"
            )
        return found

    @cached_property
    def relations(self) -> list[str]:
        """The elicitation relations, in file order."""
        return list(dict.fromkeys(t.relation for t in self.templates if t.relation))

    def for_relation(self, relation: str) -> list[Template]:
        found = [t for t in self.templates if t.relation == relation]
        if not found:
            known = ", ".join(self.relations) or "none"
            raise TacitError(
                f"--relation {relation!r}: --templates {self.source} has no template for it "
                f"(its relations: {known})"
            )
        return found

    def chosen_relations(self, relations: Sequence[str] | None) -> list[str]:
        """The relations asked for (each must have a template), or every relation of the file."""
        if relations is None:
            if not self.relations:
                raise TacitError(
                    f"--templates {self.source}: no elicitation template (a line with `relation`)"
                )
            return list(self.relations)
        for relation in relations:
            self.for_relation(relation)
        return list(dict.fromkeys(relations))

    def properties(self, phrases: Sequence[str]) -> str:
        """Retrieval's property list, joined as the settings say."""
        return join_phrases(phrases, self.settings.and_word, self.settings.serial_comma)

    def concept_text(
        self, concept: str, form: str | None, articles: Mapping[str, str] | None = None
    ) -> str:
        """How a concept reads in a concept placeholder (`X`, `a X`, `A X`): bare, or after
        its article: the one `articles` (`--articles`) or the settings give, else (English
        only) `a` or `an` by its sound."""
        text = lexicon.concept_text(concept)
        if form in (None, "X"):
            return text
        chosen = self.article_of(concept, articles)
        if chosen is None:
            chosen = lexicon.article(text)
        phrase = f"{chosen} {text}" if chosen else text
        return lexicon.sentence_start(phrase) if form == "A X" else phrase

    def blank_phrase(
        self, concept: str, form: str, articles: Mapping[str, str] | None = None
    ) -> str:
        """How a concept reads as a candidate span in retrieval's blank (`Y`, `a Y`, `A Y`):
        bare, or as a noun phrase: in English tacit.lexicon's (mass and plural nouns bare,
        "Scissors"), with the articles given overriding it; in another language the article
        given (`--articles`, then the settings)."""
        if form == "Y":
            return lexicon.concept_text(concept)
        if self.settings.english:
            phrase = lexicon.noun_phrase(concept, {**self.settings.articles, **(articles or {})})
        else:
            chosen = self.article_of(concept, articles)
            phrase = (
                f"{chosen} {lexicon.concept_text(concept)}"
                if chosen
                else lexicon.concept_text(concept)
            )
        return lexicon.sentence_start(phrase) if form == "A Y" else phrase

    def article_of(self, concept: str, articles: Mapping[str, str] | None = None) -> str | None:
        """The article given for a concept (`--articles` first, then the settings), looked up
        by its name, then its text; None where none is given. Outside English, a concept
        without one is an error: no English rule is applied to another language."""
        for table in (articles or {}, self.settings.articles):
            for name in (concept, lexicon.concept_text(concept)):
                if name in table:
                    return table[name]
        if not self.settings.english:
            raise TacitError(
                f"--templates {self.source}: no article for {concept!r} in a "
                f"{self.settings.language} template: give one in the file's settings "
                "(`articles`) or with --articles, or write the concept bare ([X], [Y])"
            )
        return None

    def record(self) -> dict[str, Any]:
        """The manifest's account: the file, its sha256, its settings and every template."""
        return {
            "source": self.source,
            "file": self.name,
            "sha256": self.sha256,
            **({"commit": self.commit} if self.commit else {}),
            "settings": self.settings.record(),
            "templates": [t.record() for t in self.templates],
        }
