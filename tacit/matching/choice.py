"""Reading a multiple-choice answer: the options shown as lettered lines (`A. a bear`), an
answer names an option by its letter alone (`B`, `(B)`, `B.`, `B) a bear`, `Answer: B`, as the
parser leaves it) or by the option's own text (the matcher's rules: `exact`, then `head`). A
completion chooses the one option its answers name; none, or two (`B or C`), is unreadable."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from tacit.matching.match import Match, Matcher, Target

LETTER = "letter"  # the rule of an answer read as an option's letter
LETTERS = string.ascii_uppercase
_LETTER = re.compile(r"^\s*\(?([A-Za-z])\)?\s*(?:[.):]\s*(.*))?$", re.DOTALL)


def letters(n: int) -> str:
    """The letters of `n` options, from A.

    Examples:
        >>> letters(3)
        'ABC'
    """
    if n > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} options can be lettered, not {n}")
    return LETTERS[:n]


def lettered(options: Sequence[str]) -> str:
    """The options as a question shows them, a lettered line each.

    Examples:
        >>> print(lettered(["a bear", "a table"]))
        A. a bear
        B. a table
    """
    return "\n".join(f"{letter}. {text}" for letter, text in zip(letters(len(options)), options))


@dataclass(frozen=True)
class ChoiceMatcher(Matcher):
    """Matches an answer to the letter of the option it names (the module docstring)."""

    @classmethod
    def of(cls, options: Sequence[str]) -> ChoiceMatcher:
        """The matcher of options shown in this order, each named by its letter."""
        return cls(
            tuple(Target(letter, (text,)) for letter, text in zip(letters(len(options)), options))
        )

    def match(self, answer: str) -> Match:
        """The letter `answer` gives, alone or before its option's text, else the option whose
        text it names.

        Examples:
            >>> matcher = ChoiceMatcher.of(["a bear", "a table"])
            >>> [matcher.match(a).name for a in ["B", "(a)", "B) a table", "A table", "Z"]]
            ['B', 'A', 'B', 'B', '']
        """
        found = _LETTER.match(answer)
        names = {t.name for t in self.targets}
        if found and found.group(1).upper() in names:
            return Match((found.group(1).upper(),), LETTER, found.group(1).upper())
        return super().match(answer)


def chosen(matched: Sequence[str]) -> str:
    """The one option a completion's answers name (their `matched` cells), or empty where
    they name none or two.

    Examples:
        >>> chosen(["B", "", "B"]), chosen(["B", "C"]), chosen([""])
        ('B', '', '')
    """
    named = {name for cell in matched for name in cell.split(" | ") if name}
    return next(iter(named)) if len(named) == 1 else ""
