"""Elicitation's prompts and gold answers: "Everyone knows that a bear has <mask>." for every
concept with an answer to the relation, scored against the answers people wrote.

Over the shared vocabulary (the paper's), the gold answers are a concept's one-word answers that
are in it (gold_answers); over candidate spans, its answers of any length that are candidates
(span_golds: `--candidates answers` ranks every answer any concept gave to the relation).
"""

from __future__ import annotations

from collections.abc import Collection, Container, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.ask.paraphrase import with_items
from tacit.core.errors import TacitError
from tacit.lexicon import sentence_start
from tacit.norms.phrasing import answer_spans, one_word_answers
from tacit.ranking import CandidateSet
from tacit.templates import Template, TemplateSet, load_templates

if TYPE_CHECKING:
    from tacit.ask.base import Ask
    from tacit.ask.shots import Demonstrations
    from tacit.matching.match import Matcher
    from tacit.norms import NormSet

# Prompts per relation in Weir et al. (2020), Table 1, for comparison.
PAPER_PROMPTS = {"is": 583, "is a": 506, "has": 564, "has a": 537, "made of": 495}
PROMPT_COLUMNS = ["relation", "prefix", "concept", "prompt", "gold", "n_gold"]
QUESTION = ["relation", "prefix", "concept"]  # what one prompt asks, whatever its template


def fill(
    template: Template, templates: TemplateSet, concept: str, prefix: bool, *, pronoun: bool = False
) -> str:
    """The template asking about the concept (or, `pronoun`, about "it": the prompt without its
    concept, `--normalize pmi`'s baseline)."""
    if pronoun:
        if not templates.settings.pronoun:
            raise TacitError(
                f"--templates {templates.source}: --normalize pmi puts a pronoun "
                "for the concept: give `pronoun` in the settings"
            )
        text = templates.settings.pronoun
        text = sentence_start(text) if template.concept == "A X" else text
    else:
        text = templates.concept_text(concept, template.concept)
    return template.fill(concept=text, prefix=prefix)


def elicitation_prompt(
    concept: str, relation: str, *, prefix: bool = True, templates: TemplateSet | None = None
) -> str:
    """'Everyone knows that a bear has <mask>.' (or 'A bear has <mask>.' without the prefix):
    the relation's first template (the paper's by default)."""
    templates = templates or load_templates()
    return fill(templates.for_relation(relation)[0], templates, concept, prefix)


@dataclass(frozen=True)
class GoldSet:
    """Gold answers and what was left out.

    answers: `relation, concept, word, pf`, one row per answer (a word produced by several
        features of a concept keeps the highest pf).
    excluded: per relation, features that answer it, and how many were left out and why.
    """

    answers: pd.DataFrame
    excluded: pd.DataFrame


def gold_answers(norms: NormSet, vocab: Container[str], relations: Sequence[str]) -> GoldSet:
    """One-word answers per relation and concept, restricted to the shared vocabulary (or
    what else holds the words kept: an Ask).

    A feature answers the relation in its `relation` column with the text in its `answer`
    column (tacit.norms.NormSet): the probe reads no format's own syntax.
    """
    rows: list[tuple[str, str, str, float]] = []
    report = []
    table = norms.table
    for relation in relations:
        counts = {"features": 0, "multi_word": 0, "out_of_vocabulary": 0, "alternatives_oov": 0}
        answering = table[table["relation"] == relation]
        for concept, answer, pf in zip(
            answering["concept"], answering["answer"], answering["pf"].tolist()
        ):
            counts["features"] += 1
            words = one_word_answers(answer)
            if words is None:
                counts["multi_word"] += 1
                continue
            kept = [w for w in words if w in vocab]
            counts["alternatives_oov"] += len(words) - len(kept)
            if not kept:
                counts["out_of_vocabulary"] += 1
            rows.extend((relation, concept, word, pf) for word in kept)
        counts["kept"] = counts["features"] - counts["multi_word"] - counts["out_of_vocabulary"]
        report.append({"relation": relation, **counts})
    answers = pd.DataFrame(rows, columns=["relation", "concept", "word", "pf"])
    answers = (
        answers.sort_values("pf", ascending=False, kind="stable")
        .drop_duplicates(["relation", "concept", "word"])
        .sort_values(["relation", "concept", "pf", "word"], ascending=[True, True, False, True])
        .reset_index(drop=True)
    )
    return GoldSet(answers, pd.DataFrame(report))


def build_elicitation_prompts(
    answers: pd.DataFrame,
    relations: Sequence[str],
    prefixes: Sequence[bool],
    concepts: Sequence[str] | None = None,
    *,
    column: str = "word",
    separator: str = " ",
    templates: TemplateSet | None = None,
) -> pd.DataFrame:
    """One prompt per relation x prefix x concept with at least one gold answer, and per
    template of the relation (the paper's by default: one per relation); `gold` lists the
    concept's answers (`answers[column]`, in the table's order) as `answer:pf`."""
    templates = templates or load_templates()
    check_prefixes(templates, relations, prefixes)
    if concepts is not None:  # those without an answer get no prompt (unasked says why)
        answers = answers[answers["concept"].isin(concepts)]
    records = []
    for relation in relations:
        for concept, rows in answers[answers["relation"] == relation].groupby("concept"):
            gold = separator.join(f"{w}:{p}" for w, p in zip(rows[column], rows["pf"]))
            for prefix in prefixes:
                for template in templates.for_relation(relation):
                    prompt = fill(template, templates, concept, prefix)
                    records.append(
                        (relation, prefix, concept, template.id, prompt, gold, len(rows))
                    )
    columns = [*QUESTION, "template", *PROMPT_COLUMNS[3:]]
    return with_items(pd.DataFrame.from_records(records, columns=columns), QUESTION)


# Why a concept gets no prompt for a relation (unasked), as dropped.csv and the report say it.
NO_ANSWER = "no answer to the relation in the norms"
NO_WORD_IN_VOCABULARY = "no one-word answer in the shared vocabulary"
NO_CANDIDATE = "no answer among the candidates"
DROPPED_COLUMNS = ["concept", "relation", "reason"]


def unasked(
    norms: NormSet,
    relations: Sequence[str],
    concepts: Sequence[str],
    prompts: pd.DataFrame | None = None,
    why: str = NO_WORD_IN_VOCABULARY,
) -> pd.DataFrame:
    """Each of the `concepts` that gets no prompt for a relation, and why (`concept, relation,
    reason`): no feature of it answers the relation in the norms, or (given the `prompts`
    built) none of its answers was kept, for the reason `why`."""
    table = norms.table
    rows = []
    for relation in relations:
        answering = set(table.loc[table["relation"] == relation, "concept"])
        asked = (
            set()
            if prompts is None
            else set(prompts.loc[prompts["relation"] == relation, "concept"])
        )
        for concept in concepts:
            if concept not in answering:
                rows.append((concept, relation, NO_ANSWER))
            elif prompts is not None and concept not in asked:
                rows.append((concept, relation, why))
    return pd.DataFrame(rows, columns=DROPPED_COLUMNS)


def dropped_by_reason(dropped: pd.DataFrame) -> dict[str, int]:
    """How many concepts each relation left out for each reason: `{"has: REASON": n}`."""
    labels = dropped["relation"] + ": " + dropped["reason"]
    return {str(k): int(v) for k, v in labels.value_counts(sort=False).items()}


def asking_about(relations: Sequence[str]) -> str:
    """`ask about has` / `ask about has, is a`: what an elicitation run asks, for its errors."""
    return f"ask about {', '.join(relations)}"


def check_prefixes(
    templates: TemplateSet, relations: Sequence[str], prefixes: Sequence[bool]
) -> None:
    """Without the prefix (`--no-prefix`, `--prefix-ablation`), every template must have one
    to drop: a prompt that would read the same both ways is refused, not scored twice."""
    if all(prefixes):
        return
    for relation in relations:
        for template in templates.for_relation(relation):
            if template.prefix is None:
                raise TacitError(
                    f"--no-prefix/--prefix-ablation: template {template.id!r} of {relation!r} "
                    f"(--templates {templates.source}) has no optional prefix {{...}} to drop"
                )


def parse_gold(gold: str) -> list[tuple[str, int | float]]:
    """'fur:20 claws:2.5' -> [('fur', 20), ('claws', 2.5)] (a generic table's pf can be any
    number: whole ones read back as ints, others as the floats they were written from)."""
    items = (item.rpartition(":") for item in gold.split())
    return [(word, int(pf) if pf.isdigit() else float(pf)) for word, _, pf in items]


GOLD_SEPARATOR = " | "  # spans hold spaces: 'fur:20 | four legs:3'


def concept_free(prompts: pd.DataFrame, templates: TemplateSet) -> dict[str, str]:
    """Each prompt -> the same prompt with "it" (the settings' pronoun) for the concept, for
    `--normalize pmi`."""
    free = {}
    for row in prompts.itertuples():
        chosen = templates.for_relation(row.relation)
        template = (
            chosen[0] if len(chosen) == 1 else next(t for t in chosen if t.id == row.template)
        )
        free[row.prompt] = fill(template, templates, row.concept, row.prefix, pronoun=True)
    return free


def span_golds(
    norms: NormSet, relations: Sequence[str], ask: Ask
) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, str]]:
    """The gold `relation, concept, span, pf` rows, every answer to the relation that the Ask
    can rank; where it ranks candidate sets (every answer people gave to the relation, one set
    per relation, or a FILE's spans), per relation how many answers were left out because
    they are not candidates or not read whole (None where there are no sets), and the answers
    no model reads whole (why)."""
    answers = {r: relation_answers(norms, r) for r in relations}

    def own(unread: Collection[str] = ()) -> dict[str, CandidateSet]:
        return {
            r: CandidateSet("answers", sorted(set(answers[r]["span"]) - set(unread)))
            for r in relations
        }

    sets, unread = ask.candidate_sets(own, without=own)
    golds, report = [], []
    for relation in relations:
        readable = answers[relation][~answers[relation]["span"].isin(set(unread))]
        kept = readable[[ask.has(span, relation) for span in readable["span"]]]
        golds.append(kept.assign(relation=relation))
        report.append(
            {
                "relation": relation,
                "answers": len(answers[relation]),
                "kept": len(kept),
                "not_candidates": len(readable) - len(kept),
                "not_read_whole": len(answers[relation]) - len(readable),
            }
        )
    gold = pd.concat(golds, ignore_index=True)[["relation", "concept", "span", "pf"]]
    return gold, pd.DataFrame(report) if sets else None, unread


def build_span_prompts(
    gold: pd.DataFrame,
    relations: Sequence[str],
    prefixes: Sequence[bool],
    concepts: Sequence[str] | None = None,
    templates: TemplateSet | None = None,
) -> pd.DataFrame:
    """One prompt per relation x prefix x concept with at least one gold span (`gold` lists
    them by pf, highest first, as `span:pf` separated by ` | `), per template."""
    ordered = gold.sort_values(
        ["relation", "concept", "pf", "span"], ascending=[True, True, False, True]
    )
    return build_elicitation_prompts(
        ordered,
        relations,
        prefixes,
        concepts,
        column="span",
        separator=GOLD_SEPARATOR,
        templates=templates,
    )


def parse_span_gold(gold: str) -> list[tuple[str, float]]:
    """'fur:20 | four legs:3' -> [('fur', 20.0), ('four legs', 3.0)]."""
    items = (item.rpartition(":") for item in gold.split(GOLD_SEPARATOR))
    return [(span, float(pf)) for span, _, pf in items]


def demonstrations(
    norms: NormSet,
    relations: Sequence[str],
    prefixes: Sequence[bool],
    templates: TemplateSet,
    *,
    k: int,
    seed: int,
) -> Demonstrations:
    """Elicitation's pool: per relation, template and prefix, every concept of the norms with
    an answer to the relation, its prompt filled with its answer of highest pf (its answers
    by pf, ties alphabetically)."""
    from tacit.ask.shots import Demonstrations, Shot, categories

    def kind_of(row: Any) -> Hashable:
        """An elicitation prompt's kind: its relation, template and prefix."""
        template = getattr(row, "template", None) or templates.for_relation(row.relation)[0].id
        return (str(row.relation), str(template), bool(row.prefix))

    pool: dict[Hashable, list[Shot]] = {}
    for relation in relations:
        answers = relation_answers(norms, relation).assign(negative=lambda f: -f["pf"])
        answers = answers.sort_values(["concept", "negative", "span"], kind="stable")
        by_concept = {str(c): tuple(rows["span"]) for c, rows in answers.groupby("concept")}
        for template in templates.for_relation(relation):
            for prefix in prefixes:
                pool[(relation, template.id, bool(prefix))] = [
                    Shot(c, fill(template, templates, c, prefix), spans, spans)
                    for c, spans in by_concept.items()
                ]
    return Demonstrations(k, seed, pool, categories(norms), kind_of)


def relation_answers(norms: NormSet, relation: str) -> pd.DataFrame:
    """`concept, span, pf` of every answer to the relation (a span given by several features
    of a concept keeps the highest pf)."""
    table = norms.table[norms.table["relation"] == relation]
    rows = [
        (concept, span, pf)
        for concept, answer, pf in zip(table["concept"], table["answer"], table["pf"])
        for span in answer_spans(answer)
    ]
    answers = pd.DataFrame(rows, columns=["concept", "span", "pf"])
    return (
        answers.sort_values("pf", ascending=False, kind="stable")
        .drop_duplicates(["concept", "span"])
        .reset_index(drop=True)
    )


KEYS = ["relation", "prefix", "concept", "template", "prompt"]  # what tells prompts apart


def prompt_keys(rows: pd.DataFrame) -> list[str]:
    """KEYS that the prompts have (`template` only where a relation has several)."""
    return [k for k in KEYS if k in rows]


def feature_matchers(norms: NormSet, prompts: pd.DataFrame) -> dict[tuple[str, str], Matcher]:
    """Per concept and relation asked, a matcher of its features of the relation (by the
    norms' names, each named by every reading of its answer)."""
    from tacit.matching import feature_matcher

    table = norms.table
    asked = set(zip(prompts["concept"], prompts["relation"]))
    chosen = table[[pair in asked for pair in zip(table["concept"], table["relation"])]]
    return {
        (concept, relation): feature_matcher(list(rows["feature"]), list(rows["answer"]), relation)
        for (concept, relation), rows in chosen.groupby(["concept", "relation"], sort=False)
    }
