"""Reading a template file (tacit.templates): JSON lines, checked line by line; every
problem is one line naming the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tacit.core.blank import MASK
from tacit.core.errors import TacitError, shorten
from tacit.core.files import check_value, read_utf8, sha256_bytes
from tacit.templates.template import (
    BLANK_FORMS,
    CONCEPT_FORMS,
    ENSEMBLE,
    KNOWN,
    PLACEHOLDER,
    PREFIX,
    PROPERTIES,
    SETTINGS,
    Settings,
    Template,
    TemplateSet,
)


def read_templates(path: str | Path, *, source: str | None = None) -> TemplateSet:
    """Read and check a template file; every problem is one line naming the file and line."""
    path = Path(path)
    source = source or str(path)
    text, data = read_utf8(path, f"--templates {source}")
    settings: Settings | None = None
    templates: list[Template] = []
    seen: dict[tuple[str | None, str], int] = {}
    count: dict[str | None, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        entry = _json_object(line, where)
        if "settings" in entry:
            if settings is not None:
                raise TacitError(f"{where}: a second settings line (one at most)")
            settings = _settings(entry, where)
            continue
        template = _template(_pararel(entry, path, where), where, number, count)
        key = (template.relation, template.id)
        if key in seen:
            of = f"relation {template.relation!r}" if template.relation else "retrieval"
            raise TacitError(
                f"{where}: id {template.id!r} repeats line {seen[key]} ({of}: ids are unique "
                "within a relation)"
            )
        seen[key] = number
        templates.append(template)
    if not templates:
        raise TacitError(f"--templates {source}: no template in the file")
    settings = settings or Settings()
    if not settings.english and any(t.retrieval for t in templates) and settings.and_word == "":
        raise TacitError(f"{path}: settings: give `and`, the word before the last property")
    return TemplateSet(source, path, sha256_bytes(data), settings, tuple(templates))


def _json_object(line: str, where: str) -> dict[str, Any]:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as err:
        raise TacitError(f"{where}: not JSON ({err.msg}, column {err.colno})") from None
    if not isinstance(entry, dict):
        raise TacitError(f"{where}: expected a JSON object, one template a line")
    check_value(entry, where)
    return entry


def _settings(entry: dict[str, Any], where: str) -> Settings:
    given = entry["settings"]
    if not isinstance(given, dict):
        raise TacitError(f"{where}: settings must be an object")
    for key, value in given.items():
        if key not in SETTINGS:
            raise TacitError(f"{where}: unknown setting {key!r} (known: {', '.join(SETTINGS)})")
        if not isinstance(value, SETTINGS[key]):
            raise TacitError(f"{where}: setting {key!r} must be {SETTINGS[key].__name__}")
    articles = given.get("articles", {})
    for concept, value in articles.items():
        if not isinstance(value, str) or len(value.split()) > 1:
            raise TacitError(
                f"{where}: the article of {concept!r} must be one word or "
                f'"" (bare), not {shorten(repr(value))}'
            )
    language = given.get("language", "en")
    english = Settings(language=language).english
    return Settings(
        language=language,
        and_word=given.get("and", "and" if english else ""),
        serial_comma=given.get("serial_comma", english),
        pronoun=given.get("pronoun", "it" if english else ""),
        articles={k: v.strip() for k, v in articles.items()},
    )


def _pararel(entry: dict[str, Any], path: Path, where: str) -> dict[str, Any]:
    """A ParaRel pattern line (`{"pattern": "[X] is located in [Y] .", ...}`, in a file named by
    its relation, P17.jsonl) read as a template of that relation: `pattern` is `template`, and
    the relation, where the line gives none, is the file's name."""
    if "pattern" not in entry:
        return entry
    if "template" in entry:
        raise TacitError(
            f"{where}: both `template` and `pattern` (ParaRel's name for it): give one"
        )
    read = {k: v for k, v in entry.items() if k != "pattern"}
    read["template"] = entry["pattern"]
    read.setdefault("relation", path.name.split(".")[0])
    return read


def _template(
    entry: dict[str, Any], where: str, number: int, count: dict[str | None, int]
) -> Template:
    text, relation, given_id = entry.get("template"), entry.get("relation"), entry.get("id")
    if not isinstance(text, str) or not text.strip():
        raise TacitError(f"{where}: no `template` (the text, with [Y] for the blank)")
    if relation is not None and (not isinstance(relation, str) or not relation.strip()):
        raise TacitError(f"{where}: `relation` must be a name")
    if given_id is not None and (not isinstance(given_id, str | int) or not str(given_id).strip()):
        raise TacitError(f"{where}: `id` must be a name")
    relation = " ".join(relation.split()) if relation else None
    count[relation] = count.get(relation, 0) + 1
    template_id = str(given_id).strip() if given_id is not None else str(count[relation])
    if template_id == ENSEMBLE:
        raise TacitError(f"{where}: id {ENSEMBLE!r} names the ensemble of a run's templates")
    text = text.strip()
    quoted = shorten(repr(text))
    if MASK in text:
        raise TacitError(f"{where}: {quoted}: write the blank as [Y], not {MASK}")
    prefix, body = None, text
    match = PREFIX.match(text)
    if match:
        prefix, body = match.group(1).strip(), text[match.end() :]
    if "{" in body or "}" in body:
        raise TacitError(f"{where}: {quoted}: braces mark the optional prefix, at the start only")
    found = PLACEHOLDER.findall(body)
    unknown = [p for p in found if p not in KNOWN]
    if unknown:
        raise TacitError(
            f"{where}: {quoted}: unknown placeholder [{unknown[0]}] (known: "
            + ", ".join(f"[{k}]" for k in KNOWN)
            + ")"
        )
    concepts = [p for p in found if p in CONCEPT_FORMS]
    blanks = [p for p in found if p in BLANK_FORMS]
    if len(blanks) != 1:
        raise TacitError(f"{where}: {quoted}: needs one blank ([Y]), found {len(blanks)}")
    if relation is None:
        _check_retrieval(found, concepts, prefix, where, quoted)
    else:
        if blanks != ["Y"]:
            raise TacitError(
                f"{where}: {quoted}: [{blanks[0]}] is retrieval's (the concept "
                "in the blank); an elicitation template's blank is [Y]"
            )
        if len(concepts) != 1:
            raise TacitError(
                f"{where}: {quoted}: needs the concept once ([X], [a X] or [A X]), "
                f"found {len(concepts)}"
            )
        if PROPERTIES in found:
            raise TacitError(f"{where}: {quoted}: [P] is retrieval's (a line without relation)")
    return Template(
        template_id,
        text,
        relation,
        number,
        prefix,
        body,
        concepts[0] if concepts else None,
        blanks[0],
    )


def _check_retrieval(
    found: list[str], concepts: list[str], prefix: str | None, where: str, quoted: str
) -> None:
    if found.count(PROPERTIES) != 1:
        raise TacitError(
            f"{where}: {quoted}: a retrieval template (no `relation`) needs the "
            "property list [P] once"
        )
    if concepts:
        raise TacitError(
            f"{where}: {quoted}: retrieval asks for the concept: it goes in the "
            "blank ([Y], [a Y] or [A Y]), not [X]"
        )
    if prefix is not None:
        raise TacitError(f"{where}: {quoted}: the optional prefix {{...}} is elicitation's")
