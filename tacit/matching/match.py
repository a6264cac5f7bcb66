"""Matching a model's answers to the norms: which target an answer names, and by which rule.

A `Matcher` is built from targets, each a name as the norms write it and the texts that name
it: the concepts for retrieval, a concept's features for elicitation (of one relation, or of
every relation for a free listing). Both sides are normalised by the one Normaliser. An
answer is matched by the first rule that gives a target, `exact` (its normal form is a
target's) then `head` (a target is the head of its noun phrase: `thick fur`, `fur on its
back`; never after `with`, as in `human beings with claws`; never in a negated answer or a
title, `The Maltese Falcon`). docs/probes/generation.md states every rule with examples.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from tacit.lexicon import concept_text
from tacit.matching.normal import Normaliser, without_articles
from tacit.norms.phrasing import (
    ANSWER_PREFIXES,
    every_alternative,
    feature_to_phrase,
    relation_and_answer,
)

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
# words that end a noun phrase's head and start what follows it (a preposition, a relative
# word), in normal form: the head of `human being with claw` is `being`
POST_MODIFIERS = frozenset(
    {"with", "of", "in", "on", "at", "for", "from", "by", "to", "into", "onto", "under"}
    | {"over", "near", "like", "about", "inside", "around", "behind", "between", "through"}
    | {"across", "along", "among", "against", "within", "during", "than", "such", "as"}
    | {"include", "including", "that", "which", "who", "whose", "where", "when", "while"}
)
# how an answer may state a relation beyond the norms' own prefixes (ANSWER_PREFIXES), as
# models write it: `is made from`, `does fly`
STATED = {
    "made of": ("is made from", "made from", "is made out of", "made out of"),
    "does": ("does", "do"),
}
# modal verbs and adverbs before or after a stated relation, dropped: `can be eaten` ->
# `be eaten`, `is often served hot` -> `be serve hot`
HEDGES = frozenset(
    {"can", "could", "may", "might", "will", "would", "often", "usually", "also", "typically"}
    | {"generally", "commonly", "sometimes", "mostly", "normally", "frequently", "always"}
    | {"either"}
)
SEPARATOR = " | "  # between the names of targets matched together
# why an answer matched nothing (Matcher.why_unmatched), in the order they are tried
UNMATCHED = {
    "negated": "it says a property is absent (a negation): never matched",
    "another relation": "its words are a feature's answer, but it states another relation",
    "not the head": "it holds a feature's words, but not as the head of its phrase",
    "other words": "no feature of the concept in its words",
}
_TITLE = re.compile(r"^\s*the\s+[A-Z]", re.IGNORECASE)


@dataclass(frozen=True)
class Target:
    """One thing an answer can name: `name` as the norms write it, the `texts` that name it,
    the `sense` its name carries (`bat_(animal)`: `animal`), for the record, the `relation` a
    feature states (an answer that states another relation does not name it; empty: any), and
    whether its texts are another wording of the feature (`alternative`: the norms' feature
    alternatives, whose forms give way to the features' own)."""

    name: str
    texts: tuple[str, ...]
    sense: str = ""
    relation: str = ""
    alternative: bool = False


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
        relation it states: taken off first, and the answer then names only targets of a
        relation of the same verb (elicitation; none for retrieval).
    about: the concept whose properties the answers list (elicitation), as the norms name it:
        the parser cuts its echo (`A bear has fur` -> `has fur`); None for retrieval.
    """

    targets: tuple[Target, ...]
    normaliser: Normaliser = field(default_factory=Normaliser)
    relation_starts: tuple[tuple[tuple[str, ...], str], ...] = ()
    about: str | None = None

    @cached_property
    def forms(self) -> Mapping[tuple[str, ...], list[str]]:
        """Each target's normal form (as words) -> the targets it names, in target order."""
        return self._forms(self.targets)

    @cached_property
    def forms_by_verb(self) -> Mapping[str, Mapping[tuple[str, ...], list[str]]]:
        """The forms of the targets an answer may name after a relation's verb, the first word
        it starts with: those of every relation that starts with it (`have`: `has` and `has
        a`, which answers confuse; `be`: `is`, `is a`, and `made of` as `is made of`), and of
        targets of no relation."""
        verbs: dict[str, set[str]] = {}
        for start, relation in self.relation_starts:
            verbs.setdefault(start[0], {""}).add(relation)
        return {
            verb: self._forms([t for t in self.targets if t.relation in relations])
            for verb, relations in verbs.items()
        }

    def _forms(self, targets: Iterable[Target]) -> dict[tuple[str, ...], list[str]]:
        """Normal forms -> target names; a form of a feature's own texts is never claimed by
        another feature's alternative wording."""
        targets = list(targets)
        own: dict[tuple[str, ...], list[str]] = {}
        others: dict[tuple[str, ...], list[str]] = {}
        for target in targets:
            by_form = others if target.alternative else own
            for text in target.texts:
                form = tuple(self.normaliser.words(text))
                if form and target.name not in by_form.setdefault(form, []):
                    by_form[form].append(target.name)
        return own | {form: names for form, names in others.items() if form not in own}

    @cached_property
    def longest(self) -> int:
        """The most words of any target's normal form."""
        return max(map(len, self.forms), default=0)

    def words(self, answer: str) -> list[str]:
        """The answer's normal form as words, its relation taken off."""
        return self.stated(answer)[0]

    def stated(self, answer: str) -> tuple[list[str], str | None]:
        """The answer's normal form as words, its relation taken off (and the hedges around
        it: `can`, `often`), and the verb the relation it stated starts with (None: none)."""
        words, start = self._stated(answer)
        return words, None if start is None else start[0][0]

    def relation_stated(self, answer: str) -> str | None:
        """The relation an answer states by its start (`is a tool`: `is a`; `has fur`: `has`;
        `is made from metal`: `made of`), or None where it states none.

        Examples:
            >>> every = feature_matcher(["has fur"], ["fur"], ["has"])
            >>> [every.relation_stated(a) for a in ["is a tool", "has a tail", "fur"]]
            ['is a', 'has a', None]
        """
        return (self._stated(answer)[1] or (None, None))[1]

    def _stated(self, answer: str) -> tuple[list[str], tuple[tuple[str, ...], str] | None]:
        return self._readings(answer)[0]

    def _readings(self, answer: str) -> list[tuple[list[str], tuple[tuple[str, ...], str] | None]]:
        """The answer's words after each relation start it begins with, longest first (`is
        made from wood`: `wood` after `is made from`, `made from wood` after `is`), or the
        words themselves where it begins with none."""
        words = self.normaliser.words(answer)
        if not self.relation_starts:
            return [(words, None)]
        words = _unhedged(words)
        found: list[tuple[list[str], tuple[tuple[str, ...], str] | None]] = [
            (_unhedged(without_articles(words[len(start) :], self.normaliser.every_article)), s)
            for s in self.relation_starts
            for start in [s[0]]
            if len(words) > len(start) and tuple(words[: len(start)]) == start
        ]
        return found or [(words, None)]

    def match(self, answer: str) -> Match:
        """What `answer` names, by the first rule that gives a target.

        Examples:
            >>> matcher = concept_matcher(["bear", "bat_(animal)", "mouse", "falcon"])
            >>> [matcher.match(a).name for a in ["Bears", "a bat", "mice", "wolf"]]
            ['bear', 'bat_(animal)', 'mouse', '']
            >>> matcher.match("a big brown bear").rule, matcher.match("The Maltese Falcon").name
            ('head', '')
        """
        whole = self.normaliser.words(answer)  # a target may begin with the relation's word
        readings = self._readings(answer)
        words = readings[0][0]
        normal = " ".join(words)
        if whole != words and tuple(whole) in self.forms:
            return Match(tuple(self.forms[tuple(whole)]), EXACT, " ".join(whole))
        for said, start in reversed(readings):  # the shortest start first: the most literal
            exact = self._forms_after(start).get(tuple(said))
            if exact:
                return Match(tuple(exact), EXACT, " ".join(said))
        if not NEGATIONS.intersection(words) and not _TITLE.match(answer):
            found = self._head(words, self._forms_after(readings[0][1]))
            if found:
                return Match(tuple(found), HEAD, normal)
        return Match((), "", normal)

    def _forms_after(
        self, start: tuple[tuple[str, ...], str] | None
    ) -> Mapping[tuple[str, ...], list[str]]:
        """The forms an answer may name after the relation start it began with (None: all)."""
        return self.forms if start is None else self.forms_by_verb.get(start[0][0], {})

    def match_readings(self, readings: Sequence[str]) -> Match:
        """What an answer of several readings names (`made of wood or plastic`): every
        target any reading names, in reading order, by the first matching reading's rule; its
        normal form, the readings' joined by ` or `.

        Examples:
            >>> made = feature_matcher(["made of wood"], ["wood"], "made of")
            >>> found = made.match_readings(["made of wood", "made of plastic"])
            >>> found.name, found.rule, found.normal
            ('made of wood', 'exact', 'wood or plastic')
        """
        found = [self.match(reading) for reading in readings]
        names = tuple(dict.fromkeys(n for m in found for n in m.targets))
        rule = next((m.rule for m in found if m.targets), "")
        normal = " or ".join(dict.fromkeys(m.normal for m in found))
        return Match(names, rule, normal)

    def _head(
        self, words: list[str], forms: Mapping[tuple[str, ...], list[str]]
    ) -> list[str] | None:
        """The longest target that is the head of the answer's noun phrase: it takes in the
        last word before the first preposition or relative word (`fur on its back`,
        `often used for cutting`) and ends there or at the end (not the whole answer: that is
        `exact`)."""
        end = next((i for i, w in enumerate(words) if i and w in POST_MODIFIERS), len(words))
        head = end - 1
        for size in range(min(self.longest, len(words)), 0, -1):
            for first in range(max(0, head - size + 1), head + 1):
                last = first + size
                if last > len(words) or (first, last) == (0, len(words)):
                    continue
                if last < len(words) and words[last] not in POST_MODIFIERS:
                    continue
                found = forms.get(tuple(words[first:last]))
                if found:
                    return found
        return None

    def why_unmatched(self, answer: str) -> str:
        """Why an answer that matched nothing did not (a key of UNMATCHED), for a reader of
        answers.csv.

        Examples:
            >>> has = feature_matcher(["has claws"], ["claws"], "has")
            >>> [has.why_unmatched(a) for a in ["no claws", "is claws", "beings with claws"]]
            ['negated', 'another relation', 'not the head']
        """
        words, _ = self.stated(answer)
        if NEGATIONS.intersection(words):
            return "negated"
        if tuple(words) in self.forms:
            return "another relation"
        for size in range(min(self.longest, len(words)), 0, -1):
            for first in range(len(words) - size + 1):
                if tuple(words[first : first + size]) in self.forms:
                    return "not the head"
        return "other words"

    def senses(self) -> dict[str, str]:
        """Each target's sense, where its name has one."""
        return {t.name: t.sense for t in self.targets if t.sense}


def _unhedged(words: list[str]) -> list[str]:
    """The words without the hedges they start with (`can`, `often`, ...)."""
    start = 0
    while start < len(words) - 1 and words[start] in HEDGES:
        start += 1
    return words[start:]


_SENSE = re.compile(r"[_ ]\((.*)\)\s*$")


def concept_target(concept: str) -> Target:
    """A concept as retrieval's target: the text its name reads as (tacit.lexicon: no sense
    label, spaces for underscores), and its sense label.

    Examples:
        >>> concept_target("bat_(animal)")
        Target(name='bat_(animal)', texts=('bat',), sense='animal', relation='', alternative=False)
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
    relations: Iterable[str] | None, normaliser: Normaliser
) -> tuple[tuple[tuple[str, ...], str], ...]:
    """How an answer may begin with each of `relations` (None: every relation; the norms'
    prefixes of it and STATED, normalised without dropping articles: `is a` -> `be a`),
    longest first. `does` and `other` features are matched by their whole phrase: an
    answer's `does` is taken off (`does fly` -> `fly`, a `does fly` feature's `flies`)."""
    prefixes = {r: (*p, *STATED.get(r, ())) for r, p in (*ANSWER_PREFIXES, ("does", ()))}
    wanted = prefixes if relations is None else dict.fromkeys(relations)
    forms = {
        (tuple(normaliser.lemmas(prefix)), relation)
        for relation in wanted
        for prefix in prefixes.get(relation, ())
    }
    return tuple(sorted(forms, key=lambda start: (-len(start[0]), start)))


def alternative_targets(feature: str, wordings: Iterable[str]) -> list[Target]:
    """A feature's other wordings as targets (CSLB's `feature alternatives`: `has fur; hair`,
    `is noisy; makes a loud noise`): a wording that states a relation names the feature after
    it (`is giant`: `giant`, under `is`; `does save time`: `saves time`); one that states none
    (`hair`, `makes a loud noise`), whole, under any.

    Examples:
        >>> [(t.texts, t.relation) for t in alternative_targets("has fur_hair", ["hair"])]
        [(('hair',), '')]
    """
    targets = []
    for wording in wordings:
        relation, answer = relation_and_answer(wording)
        texts: tuple[str, ...]
        if relation == "other":
            texts, relation = (wording,), ""
        elif relation == "does":
            texts = (feature_to_phrase(wording),)
        else:
            texts = tuple(every_alternative(answer))
        targets.append(Target(feature, texts, relation=relation, alternative=True))
    return targets


def feature_matcher(
    features: Sequence[str],
    answers: Sequence[str],
    relation: str | Sequence[str],
    normaliser: Normaliser | None = None,
    *,
    phrases: Sequence[str] | None = None,
    alternatives: Sequence[Sequence[str]] | None = None,
    about: str | None = None,
) -> Matcher:
    """Elicitation's matcher for one concept: each feature (its name as the norms write it,
    `has fur_hair`) named by every reading of its answer (`fur`, `hair`; the NormSet's
    `answer` column), answers beginning with a relation taken off first.

    `relation` may instead give each feature's relation (a concept's features of every
    relation, for a listing of all its properties): an answer that states a relation's verb
    (`is big`, `has fur`) names only the features of the relations that start with it; one
    that states none (`fur`) names any. A feature without an answer (`does` and `other`: CSLB
    `does eat fish`) is named by its phrase (`eats fish`), given `phrases` (the NormSet's
    `phrase` column); without, by nothing. `alternatives`: per feature, the norms' other
    wordings of it (NormSet.alternatives), which name it too (alternative_targets). `about`:
    the concept, whose echo the parser cuts (Matcher.about).

    Examples:
        >>> features = ["has fur_hair", "has four legs"]
        >>> matcher = feature_matcher(features, ["fur_hair", "four legs"], "has")
        >>> [matcher.match(a).name for a in ["hair", "has 4 legs", "thick fur", "no fur"]]
        ['has fur_hair', 'has four legs', 'has fur_hair', '']
    """
    relations = [relation] * len(features) if isinstance(relation, str) else list(relation)
    if not len(features) == len(answers) == len(relations) == len(phrases or features):
        raise ValueError("one answer, relation and phrase per feature")
    if alternatives is not None and len(alternatives) != len(features):
        raise ValueError("one list of alternatives per feature")
    normaliser = normaliser or Normaliser()
    targets = [
        Target(
            feature,
            tuple(every_alternative(answer) if answer else [phrases[i]] if phrases else []),
            relation=relations[i],
        )
        for i, (feature, answer) in enumerate(zip(features, answers))
    ]
    for feature, wordings in zip(features, alternatives or []):
        targets += alternative_targets(feature, wordings)
    return Matcher(tuple(targets), normaliser, relation_starts(None, normaliser), about)
