"""Completions read into the answers frame: every raw answer beside its normal form and match
(answers.csv), one row per answer, and one row for a completion that gives none, so that
every completion is counted. A row's `status`: `ok` (the only rows the metrics read),
`duplicate` (a normal form the completion gave before), `truncated` (the last answer of a
completion cut by its length), `refusal`, `empty`, and `beyond` (the answers past `at_most`,
counted on one row). `position` is the answer's place among the completion's distinct
answers, from 1. A thinking model's thinking is never read for answers: where any
completion thought, a `reasoning` column holds it. docs/probes/generation.md describes
answers.csv.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import pandas as pd

from tacit.matching.match import Matcher
from tacit.matching.parse import EMPTY, OK, REFUSAL, TRUNCATED, parse_completion

DUPLICATE = "duplicate"
BEYOND = "beyond"
ROW_STATUSES = (OK, DUPLICATE, TRUNCATED, REFUSAL, EMPTY, BEYOND)
# after the prompt's key columns; `draw`, not `sample`: retrieval's prompts already have a
# `sample` (the random baseline's), so each of a prompt's N completions is a draw
ANSWER_COLUMNS = [
    "draw",
    "position",
    "completion",
    "finish_reason",
    "answer",
    "normal",
    "matched",
    "rule",
    "status",
]
REASONING = "reasoning"  # the column of a completion's thinking, where any thought


class Completion(Protocol):
    """What a model said to one prompt: its text and why it stopped (`stop`, `length`, ...);
    a thinking model's also its `reasoning` (read where it has one)."""

    @property
    def text(self) -> str: ...

    @property
    def finish_reason(self) -> str | None: ...


def read_completion(
    text: str, finish_reason: str | None, matcher: Matcher, at_most: int | None = None
) -> list[dict[str, Any]]:
    """One completion's rows (`position` to `status` of ANSWER_COLUMNS; the module docstring),
    at most `at_most` distinct answers matched (None: every one).

    Examples:
        >>> from tacit.matching.match import concept_matcher
        >>> matcher = concept_matcher(["bear"])
        >>> rows = read_completion("1. Bears\\n2. bear\\n3. wolf", "stop", matcher)
        >>> [(r["position"], r["normal"], r["matched"], r["status"]) for r in rows]
        [(1, 'bear', 'bear', 'ok'), (1, 'bear', 'bear', 'duplicate'), (2, 'wolf', '', 'ok')]
    """
    parsed = parse_completion(text, finish_reason, about=matcher.about)
    base = {"completion": text, "finish_reason": finish_reason or ""}
    none = {"answer": "", "normal": "", "matched": "", "rule": ""}
    rows: list[dict[str, Any]] = []
    first: dict[str, int] = {}
    for i, answer in enumerate(parsed.answers):
        if at_most is not None and len(first) >= at_most:  # the rest: counted, never matched
            rows.append({**base, **none, "position": at_most + 1, "status": BEYOND})
            return rows
        readings = parsed.readings_of(i)
        match = matcher.match(answer) if len(readings) == 1 else matcher.match_readings(readings)
        seen = match.normal in first
        position = first.setdefault(match.normal, len(first) + 1)
        rows.append(
            {
                **base,
                "position": position,
                "answer": answer,
                "normal": match.normal,
                "matched": match.name,
                "rule": match.rule,
                "status": DUPLICATE if seen else OK,
            }
        )
    if parsed.cut is not None and at_most is not None and len(first) >= at_most:
        rows.append({**base, **none, "position": at_most + 1, "status": BEYOND})
    elif parsed.cut is not None:
        normal = " ".join(matcher.words(parsed.cut))
        cut = {"position": len(first) + 1, "answer": parsed.cut, "normal": normal}
        rows.append({**base, **none, **cut, "status": TRUNCATED})
    elif not rows:
        rows.append({**base, **none, "position": 0, "status": parsed.status})
    return rows


def answers_frame(
    prompts: pd.DataFrame,
    keys: Sequence[str],
    completions: Sequence[Sequence[Completion]],
    matchers: Matcher | Sequence[Matcher],
    at_most: int | None = None,
) -> pd.DataFrame:
    """The answers frame: per prompt (a row of `prompts`, its `keys` columns first), per draw
    (each of its completions, numbered from 0), the completion's rows (read_completion, at
    most `at_most` distinct answers each); columns `*keys, *ANSWER_COLUMNS`, with
    `reasoning` after `completion` where any completion thought (its thinking, never read).

    matchers: one for every prompt (retrieval: the concepts), or one per prompt (elicitation:
        the prompt's concept's features of its relation).
    """
    if len(completions) != len(prompts):
        raise ValueError(
            f"one list of completions per prompt ({len(completions)} for {len(prompts)})"
        )
    if not isinstance(matchers, Matcher) and len(matchers) != len(prompts):
        raise ValueError(f"one matcher per prompt ({len(matchers)} for {len(prompts)})")
    records = []
    thought = any(_reasoning(c) is not None for said in completions for c in said)
    for i, key in enumerate(prompts[list(keys)].itertuples(index=False)):
        matcher = matchers if isinstance(matchers, Matcher) else matchers[i]
        for draw, completion in enumerate(completions[i]):
            for row in read_completion(completion.text, completion.finish_reason, matcher, at_most):
                if thought:
                    row[REASONING] = _reasoning(completion) or ""
                records.append({**dict(zip(keys, key)), "draw": draw, **row})
    columns = list(ANSWER_COLUMNS)
    if thought:
        columns.insert(columns.index("completion") + 1, REASONING)
    return pd.DataFrame.from_records(records, columns=[*keys, *columns])


def _reasoning(completion: Completion) -> str | None:
    found: str | None = getattr(completion, "reasoning", None)
    return found


def answers_by_prompt(
    prompts: pd.DataFrame, answers: pd.DataFrame, keys: Sequence[str]
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Each prompt's position in `prompts` and its rows of the answers frame (none: an empty
    frame), matched by the `keys` columns, which must tell the prompts apart."""
    keys = list(keys)
    repeated = prompts[keys].duplicated()
    if repeated.any():
        first = prompts[keys][repeated].iloc[0].tolist()
        raise ValueError(f"the key columns {keys} do not tell the prompts apart: {first} repeats")
    by_prompt = dict(iter(answers.groupby(keys, sort=False, dropna=False)))
    for i, key in enumerate(prompts[keys].itertuples(index=False)):
        yield i, by_prompt.get(tuple(key), answers.iloc[:0])
