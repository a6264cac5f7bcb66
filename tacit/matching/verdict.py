"""Reading a yes/no reply (a judge's verdict, a feature verified by generation): its first
word, `yes` or `no` in any case; anything else is `unreadable`, counted and never guessed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tacit.matching.match import Match, Matcher, Target

YES, NO, UNREADABLE = "yes", "no", "unreadable"
VERDICT = "verdict"  # the rule of an answer read as a verdict
_FIRST_WORD = re.compile(r"\s*([A-Za-z]+)")


def verdict(reply: str) -> str:
    """A reply's verdict: its first word, `yes` or `no` in any case, else `unreadable`.

    Examples:
        >>> [verdict(r) for r in ["Yes.", " no, it does not", "Maybe", "", "yesterday"]]
        ['yes', 'no', 'unreadable', 'unreadable', 'unreadable']
    """
    first = _FIRST_WORD.match(reply)
    word = first.group(1).lower() if first else ""
    return word if word in (YES, NO) else UNREADABLE


@dataclass(frozen=True)
class VerdictMatcher(Matcher):
    """Matches an answer (as the parser leaves it: `1. Yes` is `Yes`) to `yes` or `no` by its
    verdict, so answers.csv shows what each draw said."""

    @classmethod
    def of(cls) -> VerdictMatcher:
        """The matcher of the two verdicts."""
        return cls((Target(YES, (YES,)), Target(NO, (NO,))))

    def match(self, answer: str) -> Match:
        """The verdict `answer` gives, `yes` or `no`, else no match.

        Examples:
            >>> [VerdictMatcher.of().match(a).name for a in ["Yes, it does", "NO", "Perhaps"]]
            ['yes', 'no', '']
        """
        said = verdict(answer)
        if said == UNREADABLE:
            return Match((), "", self.normaliser(answer))
        return Match((said,), VERDICT, said)
