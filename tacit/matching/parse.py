"""A completion's text as an ordered list of answers, and its status.

The rules, in the order they apply (docs/probes/generation.md shows each with an example):

1. **Empty.** Nothing but whitespace, quotes and markdown: status `empty`, no answers.
2. **Refusal.** The text starts (after quotes, markdown and whitespace) with one of
   `REFUSALS` ("I'm sorry", "I cannot", "As an AI", ...), any case, straight or curly
   apostrophes: status `refusal`, no answers. Only the start counts: a list that says "sorry"
   in its fifth line is a list.
3. **Lists.** Where lines start with a list marker, a number (`1.`, `1)`, `(1)`) or a bullet
   (`-`, `*`, `•`, `·`, `–`, `—`), each marked line is one answer and unmarked lines (a preface,
   "Here are some features:", or a closing remark) are left out (`Parsed.ignored`). An
   item keeps what comes before an explanation: a colon (`**Fur**: thick and brown` -> `Fur`)
   or a spaced dash (`Fur - thick` -> `Fur`). A numbered list on one line (`1. bear 2. wolf`) is
   a list too.
   Markdown headings (`### Answer`) are left out too.
4. **Lines.** Otherwise each line is read as one line is (rule 5, without its preface rule),
   a line that ends with a colon (a preface) left out.
5. **One line.** A preface up to a colon is dropped (`The answer is: bear` -> `bear`), and the
   rest split at commas and semicolons; where it was split, its last part is split again at a
   final ` and ` or ` or ` (`fur, claws and teeth` -> three answers; an Oxford comma's `and`
   goes: `fur, claws, and teeth`). `and` alone joins one answer (`salt and pepper`, `black and
   white`); ` or ` always separates two guesses (`a bear or a wolf` -> two answers), so that a
   hedge is not read as its last word.
6. **Each answer** loses a parenthesis (`bear (a mammal)` -> `bear`), markdown emphasis
   (`**bear**`, `_bear_`), quotes, trailing punctuation, and the words a sentence puts around a
   single answer (`SENTENCE_STARTS`: "I think", "the answer is", "it is", "it's", "probably",
   ...: `I think it is a bear.` -> `a bear`; its article goes in the normaliser). Answers left
   empty are left out.
7. **Truncated.** With finish_reason `length` the model stopped mid-answer: the last answer may
   be cut, so it is taken off the answers (`Parsed.cut`, counted, never matched) and the
   status is `truncated`; the answers before it stay answers.

Duplicates are found after normalisation, where the answers are read (tacit.matching.read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OK = "ok"
EMPTY = "empty"
REFUSAL = "refusal"
TRUNCATED = "truncated"
STATUSES = (OK, EMPTY, REFUSAL, TRUNCATED)

# How completions that answer nothing begin (rule 2), lower case, straight apostrophes.
REFUSALS = (
    "i'm sorry",
    "i am sorry",
    "sorry,",
    "i apologize",
    "i apologise",
    "i cannot",
    "i can't",
    "i can not",
    "i'm unable",
    "i am unable",
    "i'm not able",
    "i am not able",
    "i won't",
    "i will not",
    "i don't know",
    "i do not know",
    "as an ai",
    "as a language model",
    "as an artificial intelligence",
)
# Words around a single answer (rule 6), removed from an answer's start, repeatedly, longest
# first: "I think the answer is probably a bear" -> "a bear".
SENTENCE_STARTS = tuple(
    sorted(
        (
            "i think",
            "i believe",
            "i guess",
            "i would say",
            "i'd say",
            "my answer is",
            "my guess is",
            "the answer is",
            "the answer would be",
            "the concept is",
            "the object is",
            "the animal is",
            "answer",
            "it is",
            "it's",
            "it must be",
            "it could be",
            "it might be",
            "it would be",
            "it may be",
            "this is",
            "that is",
            "that's",
            "that would be",
            "they are",
            "they're",
            "probably",
            "perhaps",
            "maybe",
            "likely",
            "that",
            "it",
            "they",
        ),
        key=len,
        reverse=True,
    )
)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'"})
_NUMBERED = re.compile(r"^\s*#?(?:\(?\d{1,3}[.)]|\d{1,3}\s*[:\-–])\s+")
_HEADING = re.compile(r"^#{1,6}\s")  # a markdown heading: no answer
_BULLET = re.compile(r"^\s*[-*•·–—]\s+")
_INLINE_NUMBERS = re.compile(r"(?:^|\s)\d{1,3}[.)]\s+")
_LEADING_AND = re.compile(r"^(?:and|or)\s+", re.IGNORECASE)
_FINAL_AND = re.compile(r"\s+(?:and|or)\s+", re.IGNORECASE)
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
_EXPLANATION = re.compile(r"\s*(?::|\s[-–—]\s).*$")
_PARENTHESIS = re.compile(r"\s*[(\[][^)\]]*[)\]]")
_EDGES = " \t\"'“”‘’`*_#>.,;:!?…"
_STARTS = re.compile(
    r"^(?:" + "|".join(re.escape(s) for s in SENTENCE_STARTS) + r")(?:\s+|\s*:\s*|$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Parsed:
    """A completion read: its answers in order, its status, and what was left out.

    answers: the answers as written (rule 6 applied), in order; none unless status is `ok` or
        `truncated`.
    status: `ok`, `empty`, `refusal` or `truncated`.
    cut: the last answer of a truncated completion, taken off (None otherwise).
    ignored: lines that are no answer: a list's unmarked lines, a preface ending in a colon.
    """

    answers: tuple[str, ...]
    status: str
    cut: str | None = None
    ignored: tuple[str, ...] = ()


def parse_completion(text: str, finish_reason: str | None = None) -> Parsed:
    """Read a completion into answers (the module docstring's rules).

    Examples:
        >>> parse_completion("1. Bear\\n2. **Wolf**\\n3. lion.").answers
        ('Bear', 'Wolf', 'lion')
        >>> parse_completion("I think it is a bear.").answers
        ('a bear',)
        >>> parse_completion("fur, claws and sharp teeth").answers
        ('fur', 'claws', 'sharp teeth')
        >>> parse_completion("I'm sorry, I can't help with that.").status
        'refusal'
        >>> parsed = parse_completion("bear, wolf, li", "length")
        >>> parsed.answers, parsed.status, parsed.cut
        (('bear', 'wolf'), 'truncated', 'li')
    """
    if not text.strip(_EDGES + "\n\r"):
        return Parsed((), TRUNCATED if finish_reason == "length" else EMPTY)
    start = text.translate(_APOSTROPHES).lstrip(_EDGES + "\n\r").lower()
    if start.startswith(REFUSALS):
        return Parsed((), REFUSAL)
    items, ignored = _items(text)
    answers = [a for a in (clean(item) for item in items) if a]
    if finish_reason == "length":
        cut = answers.pop() if answers else None
        return Parsed(tuple(answers), TRUNCATED, cut, tuple(ignored))
    return Parsed(tuple(answers), OK if answers else EMPTY, None, tuple(ignored))


def _items(text: str) -> tuple[list[str], list[str]]:
    """The raw answers of a completion (rules 3 to 5), and the lines left out (markdown
    headings first: `### Answer` is no answer)."""
    lines = [line for line in (raw.strip() for raw in text.splitlines()) if line]
    headings = [line for line in lines if _HEADING.match(line)]
    items, ignored = _from_lines([line for line in lines if not _HEADING.match(line)] or [""])
    return items, [*headings, *ignored]


def _from_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """The raw answers of a completion's lines (rules 3 to 5), and the lines left out."""
    marked = [_marker(line) for line in lines]
    if len(lines) == 1 and len(_INLINE_NUMBERS.findall(lines[0])) > 1:
        parts = [p for p in _INLINE_NUMBERS.split(lines[0]) if p.strip()]
        return [_EXPLANATION.sub("", p) for p in parts], []
    if any(m is not None for m in marked):
        items = [_EXPLANATION.sub("", m) for m in marked if m is not None]
        return items, [line for line, m in zip(lines, marked) if m is None]
    if len(lines) > 1:
        preface = [line for line in lines if line.rstrip(" *_").endswith(":")]
        return [part for line in lines if line not in preface for part in _split(line)], preface
    line = lines[0]
    ignored = []
    before, colon, after = line.partition(":")
    if colon and after.strip():
        line, ignored = after, [before + colon]
    return _split(line), ignored


def _marker(line: str) -> str | None:
    """A list item's text without its number or bullet, or None for an unmarked line."""
    for pattern in (_NUMBERED, _BULLET):
        found = pattern.match(line)
        if found:
            return line[found.end() :]
    return None


def _split(line: str) -> list[str]:
    """One line's answers (rule 5): split at commas and semicolons, the last part at a final
    `and` or `or` where the line was split (an Oxford comma's `and` dropped), and every part at
    ` or `."""
    parts = [p.strip() for p in re.split(r"[,;]", line) if p.strip()]
    if len(parts) > 1:
        last = _LEADING_AND.sub("", parts[-1])
        parts = [*parts[:-1], *_FINAL_AND.split(last, maxsplit=1)]
    return [alternative for part in parts for alternative in _OR.split(part)]


def clean(item: str) -> str:
    """One answer without what surrounds it (rule 6): a parenthesis, markdown emphasis,
    quotes, trailing punctuation, and the words of a sentence around it.

    Examples:
        >>> [clean(t) for t in ['**Bear**', '"bear."', 'bear (a mammal)', 'The answer is: bear']]
        ['Bear', 'bear', 'bear', 'bear']
    """
    text = _PARENTHESIS.sub("", item.translate(_APOSTROPHES)).strip(_EDGES)
    while True:
        shorter = _STARTS.sub("", text, count=1).strip(_EDGES)
        if shorter == text or not shorter:
            return text
        text = shorter
