"""The questions a model is asked by generation, from a file: JSON lines, one question a line,
`{"asks": KEY, "question": TEXT}` and, optionally, `"answers": "list"` (a demonstration is
answered as a numbered list, the default) or `"sentence"` (`It is a fruit, it has a stem and
it grows on trees.`). KEY: what is asked (QUESTION_KEYS); TEXT's placeholders: `{cloze}` the
prompt with its blank written ___, `{rest}` what follows a blank the prompt starts at,
`{concept}` the concept with its article (`a bear`), `{k}` the answers asked for, `{options}`
an item's options, a lettered line each (`A. a bear`), `{statement}` a feature stated of
a concept (`a bear has fur or hair`). A file
gives the keys it names; tacit's own wordings (`tacit`) give the others. Shipped: `tacit`
and `hansen-hebart` (questions/ beside this module; docs/probes/generation.md cites them).
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, shorten
from tacit.core.files import read_utf8, sha256_bytes
from tacit.core.option_names import option
from tacit.core.params import Param

SHIPPED_QUESTIONS = Path(__file__).parent / "questions"
DEFAULT_QUESTIONS = "tacit"
# what a question asks, and the placeholders it may use
QUESTION_KEYS: Mapping[str, frozenset[str]] = {
    "concept": frozenset({"rest", "k"}),  # retrieval, a prompt that starts at its blank
    "concept-one": frozenset({"rest"}),
    "concept-blank": frozenset({"cloze", "k"}),  # retrieval, any other prompt
    "concept-blank-one": frozenset({"cloze"}),
    "answers": frozenset({"cloze", "k"}),  # elicitation of one relation
    "listing": frozenset({"concept", "k"}),  # a free listing: every property of a concept
    "choice": frozenset({"cloze", "options"}),  # an item's options as lettered choices
    "verify": frozenset({"statement"}),  # a feature verified: `a bear has fur or hair`
}
ANSWER_FORMS = ("list", "sentence")


@dataclass(frozen=True)
class Questions:
    """The questions of a run: per key its text and how a demonstration answers it."""

    source: str
    texts: Mapping[str, str]
    answers: Mapping[str, str] = field(default_factory=dict)
    sha256: str | None = None  # a file of one's own: its bytes' digest

    def text(self, key: str, **values: Any) -> str:
        """Question `key` with its placeholders filled."""
        return self.texts[key].format(**values)

    def answer_form(self, key: str) -> str:
        return self.answers.get(key, "list")

    def record(self, keys: list[str]) -> dict[str, Any]:
        """The manifest's record of the questions asked (`keys`): their texts, where they
        came from, and how a demonstration answers those not answered as a list."""
        found: dict[str, Any] = {
            "questions": {key: self.texts[key] for key in keys},
            "questions_from": self.source,
        }
        if self.sha256:
            found["questions_sha256"] = self.sha256
        forms = {key: self.answers[key] for key in keys if key in self.answers}
        if forms:
            found["answered_as"] = forms
        return found


def _questions(value: Any, label: str) -> Any:
    if not isinstance(value, str | Path | Questions):
        raise TacitError(f"{label} {shorten(repr(value))}: expected a questions file or a name")
    return value


QUESTIONS = Param(
    "questions",
    DEFAULT_QUESTIONS,
    kind="any",
    check=_questions,
    help="With --by generation: the questions' wording, a JSON lines file (one question a "
    "line: other wordings, other languages) or a shipped set: `tacit` or `hansen-hebart` "
    "(the free listing as 'What are the properties of a bear?'). See "
    "docs/probes/generation.md.",
)


def load_questions(value: str | Path | Questions | None = None) -> Questions:
    """A run's questions: a shipped set by name, or a file's over tacit's own."""
    if isinstance(value, Questions):
        return value
    value = DEFAULT_QUESTIONS if value is None else value
    shipped = SHIPPED_QUESTIONS / f"{value}.jsonl"
    if isinstance(value, str) and "/" not in value and shipped.is_file():
        return _shipped(value)
    path = Path(value)
    if not path.exists():
        names = ", ".join(sorted(p.stem for p in SHIPPED_QUESTIONS.glob("*.jsonl")))
        raise TacitError(f"{option('--questions')} {value}: no such file (shipped: {names})")
    text, data = read_utf8(path, f"{option('--questions')} {value}")
    texts, answers = _read(text, str(path))
    base = _shipped(DEFAULT_QUESTIONS)
    return Questions(
        str(value), {**base.texts, **texts}, {**base.answers, **answers}, sha256_bytes(data)
    )


@lru_cache(maxsize=8)
def _shipped(name: str) -> Questions:
    path = SHIPPED_QUESTIONS / f"{name}.jsonl"
    texts, answers = _read(path.read_text(encoding="utf-8"), str(path))
    if name != DEFAULT_QUESTIONS:
        base = _shipped(DEFAULT_QUESTIONS)
        texts, answers = {**base.texts, **texts}, {**base.answers, **answers}
    return Questions(name, texts, answers)


def _read(text: str, where: str) -> tuple[dict[str, str], dict[str, str]]:
    """A questions file's texts and answer forms by key; one line per problem, naming it."""
    texts: dict[str, str] = {}
    answers: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{where}:{number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise TacitError(f"{at}: not JSON ({err.msg})") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("question"), str):
            raise TacitError(f'{at}: expected {{"asks": KEY, "question": TEXT}}')
        key = entry.get("asks")
        if not isinstance(key, str) or key not in QUESTION_KEYS:
            raise TacitError(f"{at}: asks {key!r}: expected one of {', '.join(QUESTION_KEYS)}")
        if key in texts:
            raise TacitError(f"{at}: a second question for {key!r}")
        _check_placeholders(entry["question"], QUESTION_KEYS[key], at)
        form = entry.get("answers", "list")
        if form not in ANSWER_FORMS:
            raise TacitError(f"{at}: answers {form!r}: expected one of {', '.join(ANSWER_FORMS)}")
        texts[key] = entry["question"]
        if "answers" in entry:
            answers[key] = form
    return texts, answers


def _check_placeholders(text: str, allowed: frozenset[str], at: str) -> None:
    """Every `{name}` of a question is one its key fills."""
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as err:
        raise TacitError(f"{at}: {err} (a literal brace is written {{{{ or }}}})") from None
    unknown = names - allowed
    if unknown:
        raise TacitError(
            f"{at}: placeholder {{{sorted(unknown)[0]}}}: this question takes "
            f"{', '.join('{' + n + '}' for n in sorted(allowed))}"
        )
