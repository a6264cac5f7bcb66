"""A completion's text as an ordered list of answers, and its status (`ok`, `empty`, `refusal`,
`truncated`). The rules, in order (docs/probes/generation.md shows each with an example): an
empty text or a refusal's start gives no answers; an echoed question is left out and a run-on
into the next question cut; a numbered or bulleted list, also after a preamble, gives its
items; other lines are split at commas, semicolons and a final `and`; a part that counts or
announces the properties is no answer; each answer loses its surrounding words; a truncated
completion's last answer is cut. A listing of a concept's properties (`about`) is split into
its clauses, the echoed subject cut with the verb kept, a clause without a subject given the
frame before it, and ` or ` read as one answer's alternatives (`Parsed.readings`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tacit.lexicon import concept_text
from tacit.matching.normal import Normaliser

OK = "ok"
EMPTY = "empty"
REFUSAL = "refusal"
TRUNCATED = "truncated"
STATUSES = (OK, EMPTY, REFUSAL, TRUNCATED)

# How completions that answer nothing begin (rule 1), lower case, straight apostrophes.
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
# Subjects a listing's clause may start with (besides the concept itself): cut, the verb kept.
PRONOUNS = ("it", "they", "this", "these", "he", "she")
# Words around a single answer (rule 6), removed from an answer's start, repeatedly, longest
# first: "I think the answer is probably a bear" -> "a bear". In a listing (`about` given) the
# ones that start with a pronoun stay: the pronoun is cut as the subject, its verb kept.
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
_LISTING_STARTS = tuple(s for s in SENTENCE_STARTS if s.split()[0] not in (*PRONOUNS, "that"))
# A clause's verbs that take a subject of their own: a clause that starts with one gets only
# the subject of the clause before it, not its whole frame.
AUXILIARIES = frozenset(
    {"is", "are", "was", "were", "has", "have", "had", "can", "could", "may", "might", "will"}
    | {"would", "does", "do", "did", "should", "must"}
)
# where a frame ends: what a clause without a subject takes of the clause before it
JOINTS = AUXILIARIES | frozenset(
    {"be", "been", "being", "with", "of", "in", "on", "at", "for", "from", "by", "to", "into"}
    | {"onto", "under", "over", "like", "as", "than", "including", "about", "near", "inside"}
    | {"around"}
)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'"})
_QUOTES = str.maketrans("", "", '"“”')
_CONTRACTIONS = re.compile(r"\b(it|they|he|she)(?:'s|'re)\b", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*#?(?:\(?\d{1,3}[.)]|\d{1,3}\s*[:\-–])\s+")
_HEADING = re.compile(r"^#{1,6}\s")  # a markdown heading: no answer
_BULLET = re.compile(r"^\s*[-*•·–—]\s+")
_INLINE_NUMBERS = re.compile(r"(?:^|(?<=\s))\d{1,3}[.)]\s+")
# a preamble up to a colon, then a list's first marker on the same line
_PREAMBLE = re.compile(r"^([^:\n]*\S[^:\n]*:)\s*(?=\(?\d{1,3}[.)]\s|[-*•]\s)")
_LEADING_AND = re.compile(r"^(?:and|or)\s+", re.IGNORECASE)
_FINAL_AND = re.compile(r"\s+(?:and|or)\s+", re.IGNORECASE)
_FINAL_AND_ONLY = re.compile(r"\s+and\s+", re.IGNORECASE)
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
_EITHER = re.compile(r"\beither\s+", re.IGNORECASE)
_EXPLANATION = re.compile(r"\s*(?::|\s[-–—]\s).*$")
_PARENTHESIS = re.compile(r"\s*[(\[][^)\]]*[)\]]")
_BRACKETS = re.compile(r"[()\[\]]")
_EDGES = " \t\"'“”‘’`*_#>.,;:!?…"
_STARTS = re.compile(
    r"^(?:" + "|".join(re.escape(s) for s in SENTENCE_STARTS) + r")(?:\s+|\s*:\s*|$)",
    re.IGNORECASE,
)
_LISTING_STARTS_RE = re.compile(
    r"^(?:" + "|".join(re.escape(s) for s in _LISTING_STARTS) + r")(?:\s+|\s*:\s*|$)",
    re.IGNORECASE,
)
# rule 2: a question (a sentence that starts with a question word and ends with `?`), and the
# lines a base model's next demonstration starts with
_QUESTION = re.compile(
    r"(?:^|(?<=[.!?\n]))[ \t]*(?=(?:what|which|who|how|why|where|when|is|are|does|do|can|"
    r"could|would|name|list)\s+\S+\s+[^.!?\n]*\?)",
    re.IGNORECASE | re.MULTILINE,
)
_NEXT_TURN = re.compile(r"^[ \t]*(?:question|q|user|human)[ \t]*:", re.IGNORECASE | re.MULTILINE)
_A_QUESTION = re.compile(r"[^?\n]*\?")
# rule 5: what counts or announces the properties, in the plural (`its characteristic smell` is
# an answer)
_PROPERTIES = r"(?:properties|features|characteristics|attributes|traits)"
_COUNT_WORDS = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several|some|many|"
    r"a few|the following|following|these|the|its|main|key|common|basic)"
)
_PREFACE = re.compile(
    rf"\b{_COUNT_WORDS}\s+(?:\w+\s+)?{_PROPERTIES}\b|^\s*{_PROPERTIES}\s+of\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“])")
_SUBJECT_CLAUSE = re.compile(
    r"[,;]\s+(?:and\s+)?(?=(?:it|they|this|these)\s)|\s+and\s+(?=(?:it|they|this|these)\s)",
    re.IGNORECASE,
)
_DETERMINERS = frozenset({"every", "all", "most", "many", "some", "each", "any"})


@dataclass(frozen=True)
class Parsed:
    """A completion read: its answers in order, its status, and what was left out.

    answers: the answers as written (rule 6 applied, a listing's subject cut), in order; none
        unless status is `ok` or `truncated`.
    status: `ok`, `empty`, `refusal` or `truncated`.
    cut: the last answer of a truncated completion, taken off (None otherwise).
    ignored: what is no answer: a list's unmarked lines, a preamble, a preface, a question
        the completion starts with.
    readings: per answer, its alternatives as whole answers (`is made of wood or plastic`:
        `is made of wood`, `is made of plastic`); one reading, the answer, for most.
    ran_on: what was cut as a run-on into the next question (rule 2), else None.
    """

    answers: tuple[str, ...]
    status: str
    cut: str | None = None
    ignored: tuple[str, ...] = ()
    readings: tuple[tuple[str, ...], ...] = ()
    ran_on: str | None = None

    def readings_of(self, i: int) -> tuple[str, ...]:
        """Answer i's readings (the answer itself where there are no alternatives)."""
        return self.readings[i] if i < len(self.readings) else (self.answers[i],)


def parse_completion(
    text: str, finish_reason: str | None = None, *, about: str | None = None
) -> Parsed:
    """Read a completion into answers (the module docstring's rules); `about`: the concept
    whose properties it lists, as the norms name it (`bat_(animal)`), if it lists them.

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
        >>> parse_completion("The answer is: 1. A bear has no legs", about="bear").answers
        ('has no legs',)
        >>> parsed = parse_completion("It is red or green.", about="apple")
        >>> parsed.answers, parsed.readings
        (('is red or green',), (('is red', 'is green'),))
    """
    if not text.strip(_EDGES + "\n\r"):
        return Parsed((), TRUNCATED if finish_reason == "length" else EMPTY)
    start = text.translate(_APOSTROPHES).lstrip(_EDGES + "\n\r").lower()
    if start.startswith(REFUSALS):
        return Parsed((), REFUSAL)
    body, ran_on, asked = _run_on(text)
    items, ignored = _items(body, about is not None)
    answers: list[str] = []
    readings: list[tuple[str, ...]] = []
    for item, whole in items:
        for part in _parts(item, about, whole):
            if _PREFACE.search(part):
                ignored.append(part)
                continue
            read = _readings(part, about)
            answer = clean(part, about)
            kept = tuple(dict.fromkeys(r for r in (clean(r, about) for r in read) if r))
            if answer and kept:
                answers.append(answer)
                readings.append(kept)
    ignored = [*asked, *ignored]
    if finish_reason == "length" and ran_on is None:
        cut = answers.pop() if answers else None
        readings = readings[: len(answers)]
        return Parsed(tuple(answers), TRUNCATED, cut, tuple(ignored), tuple(readings))
    status = OK if answers else EMPTY
    return Parsed(tuple(answers), status, None, tuple(ignored), tuple(readings), ran_on)


def _run_on(text: str) -> tuple[str, str | None, list[str]]:
    """Rule 2: (the text without the questions it starts with and without a run-on into the
    next question, the run-on cut or None, the questions it started with)."""
    asked: list[str] = []
    while True:
        stripped = text.lstrip(_EDGES + "\n\r")
        found = _QUESTION.match(stripped) or _NEXT_TURN.match(stripped)
        question = _A_QUESTION.match(stripped) if found else None
        if question is None:
            break
        asked.append(question.group().strip())
        text = stripped[question.end() :]
    starts = [m.start() for m in (*_QUESTION.finditer(text), *_NEXT_TURN.finditer(text))]
    for at in sorted(starts):
        if text[:at].strip(_EDGES + "\n\r"):
            return text[:at], text[at:].strip(), asked
    return text, None, asked


def _items(text: str, listing: bool) -> tuple[list[tuple[str, bool]], list[str]]:
    """The raw answers of a completion (rules 3 and 4), each with whether it is a list's item
    (split no further at commas), and the lines left out (markdown headings first)."""
    lines: list[str] = []
    ignored: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _HEADING.match(line):
            ignored.append(line)
            continue
        preamble = _PREAMBLE.match(line)
        if preamble and _marker(line) is None:
            ignored.append(preamble.group(1))
            line = line[preamble.end() :]
        lines.extend(_inline_list(line))
    items, left = _from_lines(lines or [""], listing)
    return items, [*ignored, *left]


def _inline_list(line: str) -> list[str]:
    """A line that holds a numbered list (`1. wolf 2. bear`) as one line per item (what comes
    before the first number, a line of its own)."""
    found = [m.start() for m in _INLINE_NUMBERS.finditer(line)]
    if len(found) < 2:
        return [line]
    bounds = [*found, len(line)]
    head = [line[: found[0]].strip()] if line[: found[0]].strip() else []
    return [*head, *(line[a:b].strip() for a, b in zip(bounds[:-1], bounds[1:]))]


def _from_lines(lines: list[str], listing: bool) -> tuple[list[tuple[str, bool]], list[str]]:
    """The raw answers of a completion's lines (rules 3 and 4), and the lines left out."""
    marked = [_marker(line) for line in lines]
    if any(m is not None for m in marked):
        items = [(_EXPLANATION.sub("", m), True) for m in marked if m is not None]
        return items, [line for line, m in zip(lines, marked) if m is None]
    if len(lines) > 1:
        preface = [line for line in lines if line.rstrip(" *_").endswith(":")]
        return [(line, False) for line in lines if line not in preface], preface
    line = lines[0]
    ignored = []
    before, colon, after = line.partition(":")
    if (
        colon
        and after.strip()
        and (not listing or len(before.split()) <= 6 or _PREFACE.search(before))
    ):
        line, ignored = after, [before + colon]
    return [(line, False)], ignored


def _marker(line: str) -> str | None:
    """A list item's text without its number or bullet, or None for an unmarked line."""
    for pattern in (_NUMBERED, _BULLET):
        found = pattern.match(line)
        if found:
            return line[found.end() :]
    return None


def _parts(item: str, about: str | None, whole: bool) -> list[str]:
    """One item's answers before cleaning: a list's item whole, a line split at commas,
    semicolons and a final `and`/`or` (rule 4; without `about`, every part at ` or ` too). In a
    listing, sentences and clauses with a subject of their own are split first, and a clause
    without one takes the frame of the clause before it."""
    if about is None:
        return [item] if whole else _split(item)
    parts: list[str] = []
    text = _CONTRACTIONS.sub(_expanded, item.translate(_APOSTROPHES))
    for sentence in _SENTENCES.split(text):
        for clause in _SUBJECT_CLAUSE.split(sentence):
            parts += [clause.strip()] if whole else _split(clause, alternatives=True)
    return _framed(parts, about)


def _expanded(found: re.Match[str]) -> str:
    """`it's` -> `it is`, `they're` -> `they are`."""
    pronoun = found.group(1)
    return f"{pronoun} {'are' if found.group().lower().endswith('re') else 'is'}"


def _split(line: str, *, alternatives: bool = False) -> list[str]:
    """One line's answers (rule 4): split at commas and semicolons, the last part at a final
    `and` (or `or`, for guesses) where the line was split (an Oxford comma's `and` dropped),
    and, for guesses (not `alternatives`), every part at ` or `."""
    parts = [p.strip() for p in re.split(r"[,;]", line) if p.strip()]
    if len(parts) > 1:
        last = _LEADING_AND.sub("", parts[-1])
        final = _FINAL_AND_ONLY if alternatives else _FINAL_AND
        parts = [*parts[:-1], *final.split(last, maxsplit=1)]
    if alternatives:
        return parts
    return [alternative for part in parts for alternative in _OR.split(part)]


def _framed(parts: list[str], about: str) -> list[str]:
    """A listing's clauses, each without a subject given the frame of the last one with a
    subject: its words up to its last preposition or verb (`it has toppings such as | whipped
    cream`), or its subject alone before a clause that starts with a verb of its own."""
    framed: list[str] = []
    frame: list[str] = []
    subject = 0
    for part in parts:
        words = part.split()
        n = subject_words(words, about)
        if n or not frame or not words:
            frame, subject = (words, n) if n else (frame, subject)
            framed.append(part)
        elif words[0].lower() in AUXILIARIES:
            framed.append(" ".join([*frame[:subject], *words]))
        else:
            joints = [i + 1 for i, w in enumerate(frame) if i >= subject and w.lower() in JOINTS]
            framed.append(" ".join([*frame[: max([subject + 1, *joints])], *words]))
    return framed


def _with_frame(frame: list[str], subject: int, words: list[str]) -> list[str]:
    """An alternative's `words` in the place of as many of the frame's last words, never of
    its subject and first verb nor of a preposition or verb it ends with: `it can be eaten
    raw` or `cooked` -> `it can be eaten cooked`; `it is used for privacy` or `security` ->
    `it is used for security`."""
    lower = [w.lower() for w in frame]
    first = words[0].lower() if words else ""
    if first in JOINTS and first in lower[subject:]:  # `made from scratch` or `from a mix`
        return [*frame[: len(lower) - 1 - lower[::-1].index(first)], *words]
    joints = [i + 1 for i, w in enumerate(lower) if i >= subject and w in JOINTS]
    keep = max(subject + 1 if subject else 0, len(frame) - len(words), *joints[-1:])
    return [*frame[:keep], *words]


def _readings(part: str, about: str | None) -> list[str]:
    """A listing's answer's alternatives (` or `), each a whole answer: the words before the
    first alternative shared (`made of wood or plastic` -> `made of wood`, `made of
    plastic`). Without `about`, the part is its one reading (guesses were split already)."""
    if about is None:
        return [part]
    first, *others = _OR.split(_EITHER.sub("", part))
    if not others:
        return [part]
    words = first.split()
    subject = subject_words(words, about)
    readings = [first]
    for other in others:
        more = other.split()
        if subject_words(more, about):
            readings.append(other)
        else:
            readings.append(" ".join(_with_frame(words, subject, more)))
    return readings


def subject_words(words: list[str], about: str | None) -> int:
    """How many of a clause's first words (as written) name its subject: a pronoun, or the
    concept with a determiner or none, in any number (`A bear`, `Bears`, `The apple`); 0 for
    none, or where nothing follows it.

    Examples:
        >>> subject_words("A bear has no legs".split(), "bear")
        2
        >>> subject_words("Bears have fur".split(), "bear"), subject_words(["It"], "bear")
        (1, 0)
    """
    if not words:
        return 0
    first = words[0].strip(_EDGES).lower()
    found = 1 if first in PRONOUNS else _concept_words(tuple(words[:8]), about) if about else 0
    return found if len(words) > found else 0


@lru_cache(maxsize=65536)
def _concept_words(words: tuple[str, ...], about: str) -> int:
    """How many of `words` name the concept `about` (with its articles or a determiner)."""
    normal = Normaliser()
    wanted = normal(concept_text(about))
    start = 1 if words and words[0].lower() in _DETERMINERS else 0
    for n in range(start + 1, len(words) + 1):
        if normal(" ".join(words[start:n])) == wanted:
            return n
    return 0


def clean(item: str, about: str | None = None) -> str:
    """One answer without what surrounds it (rule 6): a parenthesis, markdown emphasis,
    quotes, trailing punctuation, the words of a sentence around it, and a listing's subject.
    A parenthesis that is all the answer holds ("(B)", "The answer is (B).") is the answer.

    Examples:
        >>> [clean(t) for t in ['**Bear**', '"bear."', 'bear (a mammal)', 'The answer is: bear']]
        ['Bear', 'bear', 'bear', 'bear']
        >>> clean("A bear has claws.", about="bear"), clean("it can climb", about="bear")
        ('has claws', 'can climb')
        >>> clean("(B)"), clean("**(B)**"), clean("The answer is (B)."), clean("The answer is")
        ('B', 'B', 'B', 'The answer is')
    """
    text = item.translate(_APOSTROPHES).translate(_QUOTES)
    found, said = _without_starts(_PARENTHESIS.sub("", text).strip(_EDGES), about)
    if said and _PARENTHESIS.search(text):
        inside, said = _without_starts(_BRACKETS.sub(" ", text).strip(_EDGES), about)
        found = found if said else inside
    return found


def _without_starts(text: str, about: str | None) -> tuple[str, bool]:
    """`text` without the sentence starts before an answer and, in a listing about a concept,
    its subject; and whether nothing but such a start was there (then it is kept, as said)."""
    starts = _STARTS if about is None else _LISTING_STARTS_RE
    while True:
        shorter = starts.sub("", text, count=1).strip(_EDGES)
        if not shorter:
            return text, True
        if shorter == text:
            break
        text = shorter
    if about is not None:
        words = text.split()
        text = " ".join(words[subject_words(words, about) :]).strip(_EDGES)
    return text, False
