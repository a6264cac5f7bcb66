"""Recorded completions read from a file (tacit.models.recorded), and the scorer that answers
with them: a request gets every completion recorded for what it asks about
(GenerationRequest.about), in draw order, whatever `--samples` says; none where nothing is
recorded (counted). The layouts, the rule for a missing finish reason and the reading of a
row with unescaped quotes are in docs/models.md ('Recorded answers'); every row left out is
counted with its reason and lines.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.core.errors import TacitError, shorten
from tacit.core.files import read_utf8, sha256_bytes
from tacit.core.option_names import option
from tacit.lexicon import concept_text
from tacit.models.answers import Completion, GenerationRequest, Sampling
from tacit.models.base import Scorer, progress_bar

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.recorded_record import RecordedRecord

ANSWERS_CSV = "answers.csv"  # a tacit run's: a row per answer, its completion and draw
TABLE = "table"  # a header with `concept` and `answer`
RELEASED = "released"  # no header: concept, answer, concept id, run number (Hansen & Hebart)
# answers.csv's columns that are no key of a prompt (tacit.matching.read.ANSWER_COLUMNS)
NOT_KEYS = frozenset(
    {"model", "draw", "position", "completion", "reasoning", "finish_reason", "answer", "normal"}
    | {"matched", "rule", "status"}
)
# how a completion that ends a sentence ends (a table without finish reasons: the others
# were cut at their length)
SENTENCE_ENDS = (".", "!", "?", '."', '!"', '?"', ".)", ".”", "!”", "?”")
STOP, LENGTH = "stop", "length"
_EXAMPLES = 10  # requests without an answer named in the record


@dataclass
class Recorded:
    """A file's completions: `keys` (the columns a request's `about` is matched on) -> per
    key's values, its completions in draw order; and what reading the file found."""

    path: Path
    sha256: str
    layout: str
    keys: tuple[str, ...]
    completions: dict[tuple[str, ...], list[Completion]]
    rows: int
    repaired: list[int] = field(default_factory=list)
    finish_inferred: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, list[int]] = field(default_factory=dict)
    model: str | None = None
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def answers(self, about: Mapping[str, str]) -> list[Completion] | None:
        """The completions recorded for a request's key columns (None: none). A table's
        concept is looked up by its name (`bat_(animal)`), then by its text (`bat`) where
        one concept of the file has that text."""
        if not set(self.keys) <= set(about):
            return None
        found = self.completions.get(tuple(about[k] for k in self.keys))
        if found is None and self.layout != ANSWERS_CSV:
            named = self.aliases.get(concept_text(about["concept"]).casefold(), ())
            found = self.completions.get((named[0],)) if len(named) == 1 else None
        return found

    def record(self) -> dict[str, Any]:
        """What the manifest says of the file and what was read of it."""
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "layout": self.layout,
            "keys": list(self.keys),
            **({"model": self.model} if self.model is not None else {}),
            "rows": self.rows,
            "completions": sum(len(c) for c in self.completions.values()),
            "keys_recorded": len(self.completions),
            "lines_repaired": self.repaired,
            "finish_reasons_inferred": dict(sorted(self.finish_inferred.items())),
            "rows_left_out": {
                reason: {"rows": len(lines), "lines": lines[:_EXAMPLES]}
                for reason, lines in self.left_out.items()
            },
            "texts_of_several_concepts": sorted(t for t, n in self.aliases.items() if len(n) > 1),
        }


def read_recorded(path_text: str, model: str) -> Recorded:
    """The completions a file records, for `model` where it records several (answers.csv's
    `model` column: the rows of `model`, or of the one model there)."""
    path = Path(path_text).expanduser()
    text, data = read_utf8(path, f"{option('--model')} ...,recorded={path_text}")
    rows = _rows(text, path)
    if not rows:
        raise TacitError(f"{path}: empty: no recorded answers")
    header = [c.strip().casefold() for c in rows[0][2]]
    digest = sha256_bytes(data)
    if "completion" in header and "draw" in header:
        return _answers_csv(path, digest, header, rows[1:], model)
    lines = text.splitlines()
    if "concept" in header and "answer" in header:
        return _table(path, digest, lines, rows[1:], header)
    return _table(path, digest, lines, rows, None)


def _rows(text: str, path: Path) -> list[tuple[int, int, list[str]]]:
    """The file's CSV rows that hold anything, each with its first and last line (from 1)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    found = []
    last = 0
    try:
        for fields in reader:
            if any(f.strip() for f in fields):
                found.append((last + 1, reader.line_num, fields))
            last = reader.line_num
    except csv.Error as err:
        raise TacitError(f"{path}:{reader.line_num}: not CSV ({err})") from None
    return found


def _answers_csv(
    path: Path, digest: str, header: list[str], rows: list[tuple[int, int, list[str]]], model: str
) -> Recorded:
    """A tacit run's answers.csv: per key columns and draw, its completion (its first row)."""
    at = {name: i for i, name in enumerate(header)}
    keys = tuple(c for c in header[: at["draw"]] if c not in NOT_KEYS)
    chosen = _chosen_model(path, [f[at["model"]] for *_, f in rows] if "model" in at else [], model)
    recorded = Recorded(path, digest, ANSWERS_CSV, keys, {}, len(rows), model=chosen)
    draws: dict[tuple[str, ...], dict[int, Completion]] = {}
    for first, _, fields in rows:
        if len(fields) != len(header):
            raise TacitError(f"{path}:{first}: {len(fields)} fields, the header has {len(header)}")
        if chosen is not None and fields[at["model"]] != chosen:
            recorded.left_out.setdefault("another model's", []).append(first)
            continue
        try:
            draw = int(fields[at["draw"]])
        except ValueError:
            raise TacitError(f"{path}:{first}: draw {fields[at['draw']]!r}, not a number") from None
        thinking = (fields[at["reasoning"]] or None) if "reasoning" in at else None
        said = Completion(
            fields[at["completion"]], fields[at["finish_reason"]] or STOP, reasoning=thinking
        )
        draws.setdefault(tuple(fields[at[k]] for k in keys), {}).setdefault(draw, said)
    recorded.completions = {key: [d[n] for n in sorted(d)] for key, d in draws.items()}
    return recorded


def _chosen_model(path: Path, models: list[str], model: str) -> str | None:
    """The model whose rows a file of several models' answers gives: the one named, or the
    only one; a one-line error where neither."""
    names = list(dict.fromkeys(models))
    if not names:
        return None
    for name in names:
        if model in (name, name.split(",", 1)[0]):
            return name
    if len(names) == 1:
        return names[0]
    raise TacitError(
        f"{path}: answers of {len(names)} models ({shorten(', '.join(names), 120)}); name one "
        f"as {option('--model')} NAME,recorded={path}"
    )


def _table(
    path: Path,
    digest: str,
    lines: list[str],
    rows: list[tuple[int, int, list[str]]],
    header: list[str] | None,
) -> Recorded:
    """A table of concepts and answers (with a header, or Hansen & Hebart's released layout),
    a completion per row, each concept's rows its draws in file order (or by `draw`)."""
    width = len(header) if header else len(rows[0][2])
    at = {name: i for i, name in enumerate(header or [])}
    answer_at = at.get("answer", 1)
    concept_at, id_at = at.get("concept", 0), (at.get("concept_id") if header else 2)
    if not header and width < 2:
        raise TacitError(f"{path}:1: one column; expected {RELEASED}, or a header")
    recorded = Recorded(path, digest, RELEASED if header is None else TABLE, ("concept",), {}, 0)
    draws: dict[str, list[tuple[float, int, Completion]]] = {}
    for first, last, fields in rows:
        recorded.rows += 1
        if len(fields) != width:
            fields = _repaired(path, first, "\n".join(lines[first - 1 : last]), width, answer_at)
            recorded.repaired.append(first)
        name = fields[id_at].strip() if id_at is not None and id_at < width else ""
        text = fields[concept_at].strip()
        if not (name or text):
            recorded.left_out.setdefault("no concept", []).append(first)
            continue
        answer = fields[answer_at].strip()
        finish = fields[at["finish_reason"]].strip() if "finish_reason" in at else ""
        if not finish:
            finish = STOP if answer.endswith(SENTENCE_ENDS) else LENGTH
            recorded.finish_inferred[finish] = recorded.finish_inferred.get(finish, 0) + 1
        order = float(fields[at["draw"]]) if "draw" in at and fields[at["draw"]].strip() else 0.0
        key = name or text
        draws.setdefault(key, []).append(
            (order, len(draws.get(key, [])), Completion(answer, finish))
        )
        recorded.aliases.setdefault(concept_text(text).casefold(), ())
        if key not in recorded.aliases[concept_text(text).casefold()]:
            recorded.aliases[concept_text(text).casefold()] += (key,)
    recorded.completions = {(k,): [c for *_, c in sorted(d)] for k, d in draws.items()}
    return recorded


def _repaired(path: Path, line: int, raw: str, width: int, answer_at: int) -> list[str]:
    """A row whose answer holds unescaped quotes, read from its line as a person would: the
    fields before and after the answer split at commas, the answer between them whole (its
    outer quotes off, doubled quotes single); a one-line error where that does not give the
    row's fields."""
    before = raw.split(",", answer_at)[:answer_at]
    rest = raw.split(",", answer_at)[answer_at:] if answer_at else [raw]
    after_n = width - answer_at - 1
    parts = rest[0].rsplit(",", after_n) if rest else []
    if len(before) != answer_at or len(parts) != after_n + 1:
        raise TacitError(
            f"{path}:{line}: {shorten(raw, 60)!r} does not split into {width} fields, even "
            "with the answer read whole"
        )
    answer = parts[0].strip()
    if len(answer) >= 2 and answer[0] == answer[-1] == '"':
        answer = answer[1:-1].replace('""', '"')
    return [*before, answer, *parts[1:]]


class RecordedScorer(Scorer):
    """A model whose completions a file holds (see the module docstring)."""

    kind: ClassVar[str] = "recorded"
    capabilities: ClassVar[frozenset[str]] = frozenset({"generate"})

    def __init__(self, name: str, recorded: Recorded, *, batch_size: int = 1) -> None:
        """`batch_size`: as asked (nothing is batched: a file is read, not a device run)."""
        self.name, self.recorded, self.tokenizer, self.batch_size = name, recorded, None, batch_size
        self.answered = 0
        self.unanswered: list[str] = []

    def chats(self) -> bool:
        """Asked as a chat (the recorded answers do not depend on how)."""
        return True

    def record(self) -> RecordedRecord:
        return {
            "name": self.name,
            "source": self.name.split(",", 1)[0],
            "kind": self.kind,
            "class": type(self).__name__,
            "revision": None,
            "device": "cpu",
            "recorded": {
                **self.recorded.record(),
                "requests_answered": self.answered,
                "requests_without_answers": len(self.unanswered),
                "without_answers": self.unanswered[:_EXAMPLES],
            },
        }

    def _generate(
        self, requests: list[GenerationRequest], sampling: Sampling, progress: bool | tqdm
    ) -> list[list[Completion]]:
        """Each request's recorded completions (none where the file has none for it)."""
        said = []
        with progress_bar(progress, len(requests), f"reading {self.name}", "request") as bar:
            for request in requests:
                about = dict(request.about)
                found = self.recorded.answers(about)
                if found is None:
                    shown = {k: v for k, v in about.items() if k in ("concept", "relation")}
                    self.unanswered.append(", ".join(f"{k}={v}" for k, v in shown.items()))
                else:
                    self.answered += 1
                said.append(list(found or []))
                bar.update(1)
        return said
