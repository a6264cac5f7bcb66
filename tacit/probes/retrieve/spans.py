"""Retrieval's answers as phrases: every concept of the norms in the form each template's blank
takes it (`[A Y]`: "A bear", "An aardvark", "Scissors"; `[a Y]`: "a bear"; `[Y]`: "bear"), one
candidate set per form, listing the same concepts in the same order (concepts that read alike
in every form share one candidate), so that an ensemble of templates is taken candidate by
candidate."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.ranking import CandidateSet

if TYPE_CHECKING:
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet

# a candidate set's name per form of the blank, where a run's templates take several forms
SET_NAMES = {"A Y": "A_Y", "a Y": "a_Y", "Y": "Y"}


def articles_table(value: Any, templates: TemplateSet) -> Mapping[str, str] | None:
    """`--articles`: a concept,article CSV (any one-word article outside English) or a mapping."""
    from tacit.lexicon import read_articles

    if isinstance(value, str | os.PathLike):
        return read_articles(Path(value), any_article=not templates.settings.english)
    return value


@dataclass(frozen=True)
class ConceptPhrases:
    """Each concept of the norms as every form of the run's blanks takes it."""

    norms: NormSet
    templates: TemplateSet
    articles: Mapping[str, str] | None = None

    @cached_property
    def forms(self) -> list[str]:
        """The distinct forms the retrieval templates' blanks take, in template order."""
        return list(dict.fromkeys(t.blank for t in self.templates.retrieval))

    @cached_property
    def phrase(self) -> dict[str, dict[str, str]]:
        """form -> concept -> its phrase in that form."""
        return {
            form: {
                c: self.templates.blank_phrase(c, form, self.articles) for c in self.norms.concepts
            }
            for form in self.forms
        }

    @property
    def names(self) -> dict[str, str]:
        """form -> its candidate set's name (`all` where there is one form)."""
        return {f: "all" if len(self.forms) == 1 else SET_NAMES[f] for f in self.forms}

    def set_of(self) -> dict[str, str] | None:
        """Each template's set, where the forms are several."""
        if len(self.forms) == 1:
            return None
        return {t.id: self.names[t.blank] for t in self.templates.retrieval}

    def text(self, set_name: str, concept: str) -> str:
        """How a concept reads in a set's blank."""
        form = next(f for f, name in self.names.items() if name == set_name)
        return self.phrase[form][concept]

    def sets(self, unread: Mapping[str, str] | None = None) -> dict[str, CandidateSet]:
        """One set per form (`concepts`), without the concepts any of whose phrases are
        `unread`."""
        groups = list(
            dict.fromkeys(tuple(self.phrase[f][c] for f in self.forms) for c in self.norms.concepts)
        )
        kept = [g for g in groups if not any(span in (unread or {}) for span in g)]
        return {
            self.names[f]: CandidateSet("concepts", [g[i] for g in kept])
            for i, f in enumerate(self.forms)
        }

    def unread_concepts(self, targets: Sequence[str], unread: Mapping[str, str]) -> dict[str, str]:
        """The targets left out because some model does not read one of their phrases whole,
        each with why."""
        return {
            c: unread[self.phrase[f][c]]
            for c in targets
            for f in self.forms
            if self.phrase[f][c] in unread
        }

    def one_file(self) -> str:
        """Why one FILE of spans cannot stand for these forms' sets."""
        forms = ", ".join(f"[{f}]" for f in self.forms)
        return (
            f"the templates put the concept in the blank in {len(self.forms)} forms ({forms}), "
            "and one file of spans holds one of them: use --candidates concepts, or templates "
            "of one form"
        )
