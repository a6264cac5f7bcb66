"""Matching a model's answers to the norms: which target an answer names, and by which rule.

A `Matcher` is built from targets, each a name as the norms write it and the texts that name
it: the concepts for retrieval (`bat_(animal)`: `bat`, its sense `animal` kept as a record),
a concept's features of one relation for elicitation (CSLB `has fur_hair` under `has`: `fur`
or `hair`; `has four legs`: `four legs`). Both sides are normalised by the same Normaliser
(tacit.matching.normal). An answer is matched by the first rule that gives a target:

1. `exact`: the answer's normal form is a target's (`Bears` -> `bear`; `mice` -> `mouse`;
   `4 legs` -> `four legs`).
2. `head`: the answer's normal form ends with a target's, as whole words (`thick fur` ->
   `fur`, `a big brown bear` -> `bear`), unless the answer says no (`NEGATIONS`: `no fur` is
   no match). Why the end: an English noun phrase's head is its last word, and what comes
   before it narrows it (thick fur is fur); a target's words elsewhere name something else
   (a fur coat is a coat, not fur; a bear cub is a cub). What it cannot tell: a modifier
   that changes the kind (`teddy bear` -> `bear`). Every match says its rule (answers.csv's
   `rule`), so a reader can count or drop the `head` matches.

Before both rules, an elicitation matcher takes the relation off the answer's start (the
model writes "has fur" as the norms' participants did: `has fur` -> `fur`; `is a mammal` ->
`mammal`), in its normal form (`have`, `be a`, `make of`, `be make of`); the answer whole is
tried too, exactly, for a target that itself begins with the relation's word (CSLB's wolf
`is being reintroduced in Scotland`: `being` is `be`).

Where several targets match, the longest (in words) wins (`a big polar bear` with targets
`bear` and `polar bear`: `polar bear`); targets of the same normal form and length all match, and
`matched` names them all (`bat`: `bat_(animal)` and `bat_(sporting)`), in the order the
targets were given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from tacit.lexicon import concept_text
from tacit.matching.normal import Normaliser, without_articles
from tacit.norms.phrasing import ANSWER_PREFIXES, every_alternative

EXACT = "exact"
HEAD = "head"
RULES = (EXACT, HEAD)
# words that make an answer say the target is absent: no `head` match
NEGATIONS = frozenset(
    {"no", "not", "never", "without", "none", "nor", "cannot"}
    # contractions as the normaliser leaves them (apostrophes dropped)
    | {"cant", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "hasnt"}
    | {"havent", "hadnt", "wont", "couldnt", "wouldnt", "shouldnt"}
)
SEPARATOR = " | "  # between the names of targets matched together


@dataclass(frozen=True)
class Target:
    """One thing an answer can name: `name` as the norms write it, the `texts` that name it,
    the `sense` its name carries (`bat_(animal)`: `animal`), for the record, and the
    `relation` a feature states (an answer that states another relation does not name it)."""

    name: str
    texts: tuple[str, ...]
    sense: str = ""
    relation: str = ""


@dataclass(frozen=True)
class Match:
    """What an answer matched: the targets' names (none: no match), the rule, the answer's
    normal form (after the relation was taken off)."""

    targets: tuple[str, ...]
    rule: str
    normal: str

    @property
    def name(self) -> str:
        """The matched names as answers.csv writes them (empty: nothing)."""
        return SEPARATOR.join(self.targets)


@dataclass(frozen=True)
class Matcher:
    """Matches answers to targets (the module docstring's rules).

    targets: what answers are matched to, in the order ties are named in.
    normaliser: the one normaliser, for both sides.
    relation_starts: the normal forms an answer may begin with (longest first), each with the
        relation it states: taken off first, and the answer then names only targets of that
        relation (elicitation; none for retrieval).
    """

    targets: tuple[Target, ...]
    normaliser: Normaliser = field(default_factory=Normaliser)
    relation_starts: tuple[tuple[tuple[str, ...], str], ...] = ()

    @cached_property
    def forms(self) -> Mapping[tuple[str, ...], list[str]]:
        """Each target's normal form (as words) -> the targets it names, in target order."""
        return self._forms(self.targets)

    @cached_property
    def forms_by_verb(self) -> Mapping[str, Mapping[tuple[str, ...], list[str]]]:
        """The forms of the targets an answer may name after a relation's verb, the first word
        it starts with: those of every relation that starts with it (`have`: `has` and `has
        a`, which answers confuse; `be`: `is`, `is a`, and `made of` as `is made of`)."""
        verbs: dict[str, set[str]] = {}
        for start, relation in self.relation_starts:
            verbs.setdefault(start[0], set()).add(relation)
        return {
            verb: self._forms([t for t in self.targets if t.relation in relations])
            for verb, relations in verbs.items()
        }

    def _forms(self, targets: Iterable[Target]) -> dict[tuple[str, ...], list[str]]:
        by_form: dict[tuple[str, ...], list[str]] = {}
        for target in targets:
            for text in target.texts:
                form = tuple(self.normaliser.words(text))
                if form and target.name not in by_form.setdefault(form, []):
                    by_form[form].append(target.name)
        return by_form

    @cached_property
    def longest(self) -> int:
        """The most words of any target's normal form."""
        return max(map(len, self.forms), default=0)

    def words(self, answer: str) -> list[str]:
        """The answer's normal form as words, its relation taken off."""
        return self.stated(answer)[0]

    def stated(self, answer: str) -> tuple[list[str], str | None]:
        """The answer's normal form as words, its relation taken off, and the verb the
        relation it stated starts with (None: it stated none)."""
        words = self.normaliser.words(answer)
        for start, _ in self.relation_starts:
            if len(words) > len(start) and tuple(words[: len(start)]) == start:
                rest = without_articles(words[len(start) :], self.normaliser.every_article)
                return rest, start[0]
        return words, None

    def match(self, answer: str) -> Match:
        """What `answer` names, by the first rule that gives a target.

        Examples:
            >>> matcher = concept_matcher(["bear", "bat_(animal)", "mouse"])
            >>> [matcher.match(a).name for a in ["Bears", "a bat", "mice", "wolf"]]
            ['bear', 'bat_(animal)', 'mouse', '']
            >>> matcher.match("a big brown bear").rule
            'head'
        """
        words, verb = self.stated(answer)
        forms = self.forms if verb is None else self.forms_by_verb[verb]
        normal = " ".join(words)
        exact = forms.get(tuple(words))
        if exact:
            return Match(tuple(exact), EXACT, normal)
        whole = self.normaliser.words(answer)  # a target may begin with the relation's word
        if whole != words and tuple(whole) in self.forms:
            return Match(tuple(self.forms[tuple(whole)]), EXACT, " ".join(whole))
        if not NEGATIONS.intersection(words):
            for size in range(min(len(words) - 1, self.longest), 0, -1):
                found = forms.get(tuple(words[-size:]))
                if found:
                    return Match(tuple(found), HEAD, normal)
        return Match((), "", normal)

    def senses(self) -> dict[str, str]:
        """Each target's sense, where its name has one."""
        return {t.name: t.sense for t in self.targets if t.sense}


_SENSE = re.compile(r"[_ ]\((.*)\)\s*$")


def concept_target(concept: str) -> Target:
    """A concept as retrieval's target: the text its name reads as (tacit.lexicon: no sense
    label, spaces for underscores), and its sense label.

    Examples:
        >>> concept_target("bat_(animal)")
        Target(name='bat_(animal)', texts=('bat',), sense='animal', relation='')
    """
    sense = _SENSE.search(concept)
    return Target(
        concept, (concept_text(concept),), sense.group(1).replace("_", " ") if sense else ""
    )


def concept_matcher(concepts: Iterable[str], normaliser: Normaliser | None = None) -> Matcher:
    """Retrieval's matcher: every concept of the norms a target, so that an answer that names
    another concept says which (`wolf` for a bear's prompt)."""
    targets = tuple(concept_target(c) for c in dict.fromkeys(concepts))
    return Matcher(targets, normaliser or Normaliser())


def relation_starts(
    relations: Iterable[str], normaliser: Normaliser
) -> tuple[tuple[tuple[str, ...], str], ...]:
    """How an answer may begin with each of `relations` (the norms' prefixes of it, normalised
    without dropping articles: `is a` -> `be a`), longest first. `does` and `other` features
    are matched by their whole phrase: nothing is taken off for them."""
    prefixes = dict(ANSWER_PREFIXES)
    forms = {
        (tuple(normaliser.lemmas(prefix)), relation)
        for relation in relations
        for prefix in prefixes.get(relation, ())
    }
    return tuple(sorted(forms, key=lambda start: (-len(start[0]), start)))


def feature_matcher(
    features: Sequence[str],
    answers: Sequence[str],
    relation: str | Sequence[str],
    normaliser: Normaliser | None = None,
    *,
    phrases: Sequence[str] | None = None,
) -> Matcher:
    """Elicitation's matcher for one concept and relation: each feature (its name as the norms
    write it, `has fur_hair`) named by every reading of its answer (`fur`, `hair`; the NormSet's
    `answer` column), answers beginning with the relation taken off first.

    `relation` may instead give each feature's relation (a concept's features of every
    relation, for a listing of all its properties): an answer that states a relation's verb
    (`is big`, `has fur`) names only the features of the relations that start with it; one
    that states none (`fur`) names any. A feature without an answer (`does` and `other`: CSLB
    `does eat fish`) is named by its phrase (`eats fish`), given `phrases` (the NormSet's
    `phrase` column); without, by nothing.

    Examples:
        >>> features = ["has fur_hair", "has four legs"]
        >>> matcher = feature_matcher(features, ["fur_hair", "four legs"], "has")
        >>> [matcher.match(a).name for a in ["hair", "has 4 legs", "thick fur", "no fur"]]
        ['has fur_hair', 'has four legs', 'has fur_hair', '']
    """
    relations = [relation] * len(features) if isinstance(relation, str) else list(relation)
    if not len(features) == len(answers) == len(relations) == len(phrases or features):
        raise ValueError("one answer, relation and phrase per feature")
    normaliser = normaliser or Normaliser()
    targets = tuple(
        Target(
            feature,
            tuple(every_alternative(answer) if answer else [phrases[i]] if phrases else []),
            relation=relations[i],
        )
        for i, (feature, answer) in enumerate(zip(features, answers))
    )
    starts = relation_starts(dict.fromkeys(relations), normaliser)
    return Matcher(targets, normaliser, starts)
