"""Matching two lists of names (concepts of two norm sets, features written in two notations,
a category table's concepts): pairs given first, then the same name, then the same normal form
(tacit.matching.Normaliser: `bat_(animal)` and `bat (animal)`, `has_4_legs` and `has four
legs`) where it names one thing on each side; the rest is left out, and the reasons said."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tacit.lexicon import concept_text
from tacit.matching import Normaliser

NO_MATCH = "no match"
AMBIGUOUS = "normal form shared with another name"


@dataclass(frozen=True)
class NameMatch:
    """pairs: first's name -> second's, in the first's order; rules: how each pair was made
    (`given`, `same name`, `normal form`); left_first, left_second: reason (NO_MATCH,
    AMBIGUOUS) -> the names of that side left out for it."""

    pairs: dict[str, str]
    rules: dict[str, str]
    left_first: dict[str, tuple[str, ...]] = field(default_factory=dict)
    left_second: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """rule -> pairs made by it."""
        found: dict[str, int] = {}
        for rule in self.rules.values():
            found[rule] = found.get(rule, 0) + 1
        return found


Key = Callable[[str], str]


def _normal() -> Key:
    return Normaliser()


def concept_keys() -> tuple[tuple[str, Key], ...]:
    """How concept names are compared after the same name: their normal form (`bat_(animal)`
    and `bat (animal)`), then that of the name without its sense label (tacit.lexicon:
    `seal_(animal)` and `seal`), each where it names one concept on each side."""
    normal = _normal()
    return (("normal form", normal), ("without sense label", lambda n: normal(concept_text(n))))


def match_names(
    first: Sequence[str],
    second: Sequence[str],
    *,
    keys: Sequence[tuple[str, Key]] | None = None,
    given: Mapping[str, str] | None = None,
) -> NameMatch:
    """Pair the names of `first` with those of `second`, each used once: the pairs `given`,
    then the same name, then each of `keys` in turn on the names still unpaired.

    Args:
        keys: (rule, normal form) pairs, tried in order (default: `normal form`, the
            tacit.matching.Normaliser of the name); a normal form that two unpaired names of
            one side share pairs none of them by that rule.
        given: first's name -> second's, taken before any rule (a pair whose names are not in
            the lists, or reuse a name, is ignored).
    """
    first_set, second_set = set(first), set(second)
    pairs: dict[str, str] = {}
    rules: dict[str, str] = {}
    taken: set[str] = set()

    def pair(a: str, b: str, rule: str) -> None:
        pairs[a], rules[a] = b, rule
        taken.add(b)

    for a, b in (given or {}).items():
        if a in first_set and b in second_set and a not in pairs and b not in taken:
            pair(a, b, "given")
    for a in first:
        if a not in pairs and a in second_set and a not in taken:
            pair(a, a, "same name")
    ambiguous: set[str] = set()
    for rule, key in keys or (("normal form", _normal()),):
        by_key_first: dict[str, list[str]] = {}
        by_key_second: dict[str, list[str]] = {}
        for a in first:
            if a not in pairs:
                by_key_first.setdefault(key(a), []).append(a)
        for b in second:
            if b not in taken:
                by_key_second.setdefault(key(b), []).append(b)
        for k in by_key_first.keys() & by_key_second.keys():
            names_first, names_second = by_key_first[k], by_key_second[k]
            if len(names_first) == 1 and len(names_second) == 1:
                pair(names_first[0], names_second[0], rule)
            else:
                ambiguous.update(names_first + names_second)

    def left(names: Sequence[str], used: Callable[[str], bool]) -> dict[str, tuple[str, ...]]:
        rest = [n for n in names if not used(n)]
        found = {
            NO_MATCH: tuple(n for n in rest if n not in ambiguous),
            AMBIGUOUS: tuple(n for n in rest if n in ambiguous),
        }
        return {reason: items for reason, items in found.items() if items}

    ordered = {a: pairs[a] for a in first if a in pairs}
    return NameMatch(
        ordered,
        {a: rules[a] for a in ordered},
        left(first, lambda a: a in pairs),
        left(second, lambda b: b in taken),
    )
