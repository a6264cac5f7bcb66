"""mLAMA (Kassner et al. 2021) as cloze items: one language's released files turned into an
items file (tacit.probes.items.reading) that `probe items` runs.

mLAMA's release (mlama1.1.zip) holds a folder per language: `templates.jsonl`, one line per
relation (`{"relation": "P19", "template": "[X] wurde in [Y] geboren ."}`), and a file of triples
per relation, `P19.jsonl`, one line each (`{"sub_label": ..., "obj_label": ..., "lineid": ...}`).
Each triple becomes one item: the relation's template with the subject in [X] and the blank at
[Y]; its candidates are every object of that relation in that language (mLAMA's own candidate
set: the objects its evaluation ranks), its answer the triple's object, its group the relation.
Every triple left out is counted with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError
from tacit.core.files import read_utf8, write_atomic
from tacit.probes.records import json_lines

TEMPLATES = "templates.jsonl"
SUBJECT, OBJECT = "[X]", "[Y]"

# why a triple is left out -> how the conversion report says it
NO_TEMPLATE = "its relation has no template in templates.jsonl"
BAD_TEMPLATE = "its relation's template does not hold [X] and [Y] once each"
EMPTY = "an empty subject or object"
BRACKETED = "a subject or object holding [X] or [Y]"
REPEATED = "repeats a triple of its relation"
ONE_OBJECT = "its relation has fewer than two objects (nothing to rank)"


@dataclass
class Conversion:
    """One language's items and what was left out.

    Attributes:
        items: one per kept triple: id (`RELATION/LINE`, the triple's line in its file),
            group (the relation), text (the template, subject filled in, blank [Y]),
            candidates (the relation's objects) and answer.
        relations: relation -> number of items kept.
        dropped: reason -> triples left out for it.
        read: triples read.
    """

    items: list[dict[str, Any]] = field(default_factory=list)
    relations: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    read: int = 0

    def drop(self, reason: str, count: int = 1) -> None:
        if count:
            self.dropped[reason] = self.dropped.get(reason, 0) + count

    def report(self) -> list[str]:
        """The conversion in a few lines: what was kept, then each reason for leaving out."""
        candidates = sum(len(item["candidates"]) for item in self.items)
        lines = [
            f"{len(self.items)} items of {self.read} triples, {len(self.relations)} relations, "
            f"{candidates} candidates in all"
        ]
        lines += [f"dropped {n} triples: {reason}" for reason, n in self.dropped.items()]
        return lines


def mlama_items(
    directory: str | Path, language: str, *, relations: Sequence[str] | None = None
) -> Conversion:
    """Read one language of mLAMA's release (DIRECTORY/LANGUAGE/templates.jsonl and a file per
    relation) as cloze items; `relations` keeps only those (default: every relation file)."""
    folder = Path(directory) / language
    if not folder.is_dir():
        found = sorted(p.name for p in Path(directory).glob("*/") if (p / TEMPLATES).is_file())
        known = f" (languages there: {', '.join(found)})" if found else ""
        raise TacitError(f"{directory}: no folder {language}/ of mLAMA's release{known}")
    templates = {
        str(entry.get("relation")): entry.get("template")
        for _, entry in _lines(folder / TEMPLATES, ("relation", "template"))
    }
    files = sorted(p for p in folder.glob("*.jsonl") if p.name != TEMPLATES)
    if relations:
        missing = sorted(set(relations) - {p.stem for p in files})
        if missing:
            raise TacitError(f"{folder}: no triples of relation {missing[0]} ({missing[0]}.jsonl)")
        files = [p for p in files if p.stem in set(relations)]
    conversion = Conversion()
    for path in files:
        _relation(path, templates.get(path.stem), conversion)
    if not conversion.items:
        raise TacitError(f"{folder}: no triple could be made an item ({_why(conversion)})")
    return conversion


def convert_mlama(
    directory: str | Path,
    language: str,
    out: str | Path,
    *,
    relations: Sequence[str] | None = None,
) -> Conversion:
    """Write one language of mLAMA as an items file (JSON lines, whole or not at all) for
    `probe items OUT` / tacit.items(OUT); returns what was kept and left out."""
    conversion = mlama_items(directory, language, relations=relations)
    text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in conversion.items)
    write_atomic(out, text)
    return conversion


def _relation(path: Path, template: Any, conversion: Conversion) -> None:
    """The items of one relation's triples, added to `conversion`."""
    triples = list(_lines(path, ("sub_label", "obj_label")))
    conversion.read += len(triples)
    if template is None:
        conversion.drop(NO_TEMPLATE, len(triples))
        return
    if not isinstance(template, str) or any(template.count(p) != 1 for p in (SUBJECT, OBJECT)):
        conversion.drop(BAD_TEMPLATE, len(triples))
        return
    kept: list[tuple[int, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for number, triple in triples:
        subject, answer = (" ".join(str(triple[key] or "").split()) for key in _KEYS)
        if not subject or not answer:
            conversion.drop(EMPTY)
        elif any(p in label for p in (SUBJECT, OBJECT) for label in (subject, answer)):
            conversion.drop(BRACKETED)
        elif (subject, answer) in seen:
            conversion.drop(REPEATED)
        else:
            seen.add((subject, answer))
            kept.append((number, subject, answer))
    objects = list(dict.fromkeys(answer for _, _, answer in kept))
    if len(objects) < 2:
        conversion.drop(ONE_OBJECT, len(kept))
        return
    for number, subject, answer in kept:
        conversion.items.append(
            {
                "id": f"{path.stem}/{number}",
                "group": path.stem,
                "text": " ".join(template.replace(SUBJECT, subject).split()),
                "candidates": objects,
                "answer": answer,
            }
        )
    conversion.relations[path.stem] = len(kept)


_KEYS = ("sub_label", "obj_label")


def _lines(path: Path, keys: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of one of mLAMA's files (none for an empty file), each with the keys it
    must hold; a line that is not one is an error naming the file and line."""
    text, _ = read_utf8(path, str(path))
    records = list(json_lines(path, text, "record"))
    for number, entry in records:
        if any(key not in entry for key in keys):
            raise TacitError(f"{path}, line {number}: expected the keys " + ", ".join(keys))
    return records


def _why(conversion: Conversion) -> str:
    if not conversion.read:
        return "no triples read"
    return "; ".join(f"{n} {reason}" for reason, n in conversion.dropped.items())
