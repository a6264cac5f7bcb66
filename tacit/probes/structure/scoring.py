"""The matrix by scoring: for each concept and relation, elicitation's prompt asked once, and
every feature of that relation scored at its blank: its one-word features read off the shared
vocabulary's distribution (one pass per prompt), or with `--candidates answers` every feature's
texts (tacit.norms.phrasing answer_spans) scored as exact spans, each distinct text once per
prompt (a pass per prompt and candidate; a causal LM's `sum` is its whole sentence's).

Either way a feature's cell is the log-sum-exp of its texts' scores (`has fur_hair`:
log(P(fur) + P(hair))), each text's score the mean over the relation's templates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Column
from tacit.norms.phrasing import answer_spans, one_word_answers
from tacit.probes.elicit.prompts import fill
from tacit.ranking import CandidateSet
from tacit.structure import ConceptFeatureMatrix, Provenance

if TYPE_CHECKING:
    from tacit.ask.base import Ask
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet

MULTI_WORD = "features of more than one word (by scoring over the shared vocabulary)"
NOT_IN_VOCABULARY = "features with no word in the shared vocabulary"
NO_TEXT = "features with no text to score (by scoring spans)"
NOT_READ_WHOLE = "features no model's tokenizer reads whole (by scoring spans)"
NOT_CANDIDATES = "features with no text among the candidates (--candidates FILE)"
SCORES = "scores"  # the rows' column of every text's log-probability, in Features.words order


@dataclass(frozen=True)
class Features:
    """The features a run scores, and those it cannot.

    words: relation -> the distinct words (or spans) its prompts read, in order: every kept
        feature's words, or the relation's candidate spans.
    of_feature: feature -> (its relation, its words or spans kept), in the norms' order.
    left_out: reason -> the features left out for it.
    unread: spans no model's tokenizer reads whole, with why (by scoring spans).
    """

    words: dict[str, list[str]]
    of_feature: dict[str, tuple[str, list[str]]]
    left_out: dict[str, list[str]] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)


def scored_features(norms: NormSet, relations: Sequence[str], ask: Ask) -> Features:
    """Each relation's one-word features whose words the Ask can read (the shared
    vocabulary's), and the others with why."""
    table = norms.table.drop_duplicates("feature")
    words: dict[str, dict[str, None]] = {}
    of_feature: dict[str, tuple[str, list[str]]] = {}
    left: dict[str, list[str]] = {MULTI_WORD: [], NOT_IN_VOCABULARY: []}
    for feature, relation, answer in zip(table["feature"], table["relation"], table["answer"]):
        if relation not in relations:
            continue
        given = one_word_answers(answer)
        if given is None:
            left[MULTI_WORD].append(feature)
            continue
        kept = [w for w in dict.fromkeys(given) if ask.has(w)]
        if not kept:
            left[NOT_IN_VOCABULARY].append(feature)
            continue
        of_feature[feature] = (relation, kept)
        words.setdefault(relation, {}).update(dict.fromkeys(kept))
    return Features(
        {r: list(w) for r, w in words.items()},
        of_feature,
        {k: v for k, v in left.items() if v},
    )


def span_features(norms: NormSet, relations: Sequence[str], ask: Ask) -> Features:
    """Every feature of each relation as the spans its answer gives (`fur_hair`: fur, hair;
    `four legs_feet`: four legs), a candidate set per relation of every distinct span (those
    no model's tokenizer reads whole left out), or a FILE's spans; the features with no span
    left, with why."""
    table = norms.table.drop_duplicates("feature")
    table = table[table["relation"].isin(relations)]
    texts = {
        feature: [t for t in dict.fromkeys(answer_spans(answer)) if t.strip()]
        for feature, answer in zip(table["feature"], table["answer"])
    }

    def own(unread: Sequence[str] | dict[str, str] = ()) -> dict[str, CandidateSet]:
        spans: dict[str, set[str]] = {r: set() for r in relations}
        for feature, relation in zip(table["feature"], table["relation"]):
            spans[relation].update(t for t in texts[feature] if t not in unread)
        return {r: CandidateSet("answers", sorted(s)) for r, s in spans.items() if s}

    sets, unread = ask.candidate_sets(own, without=own)
    of_feature: dict[str, tuple[str, list[str]]] = {}
    left: dict[str, list[str]] = {NO_TEXT: [], NOT_READ_WHOLE: [], NOT_CANDIDATES: []}
    for feature, relation in zip(table["feature"], table["relation"]):
        readable = [t for t in texts[feature] if t not in unread]
        kept = [t for t in readable if relation in sets and ask.has(t, relation)]
        if kept:
            of_feature[feature] = (relation, kept)
            continue
        reason = NO_TEXT if not texts[feature] else NOT_READ_WHOLE if not readable else None
        left[reason or NOT_CANDIDATES].append(feature)
    asked = {relation for relation, _ in of_feature.values()}
    return Features(
        {r: list(sets[r].spans) for r in relations if r in asked},
        of_feature,
        {k: v for k, v in left.items() if v},
        dict(unread),
    )


def scoring_prompts(
    concepts: Sequence[str], features: Features, templates: TemplateSet
) -> pd.DataFrame:
    """A prompt per concept, relation with a feature kept, and template of the relation (with
    elicitation's prefix): `relation, concept, template, prompt`."""
    rows = [
        (relation, concept, template.id, fill(template, templates, concept, True))
        for relation in features.words
        for concept in concepts
        for template in templates.for_relation(relation)
    ]
    return pd.DataFrame(rows, columns=["relation", "concept", "template", "prompt"])


def score_columns(features: Features) -> tuple[Column, ...]:
    """The rows' columns: every word's log-probability (SCORES: numbers joined by spaces, in
    the relation's order) and the prompt's best word."""

    def scores(answered: Answered) -> list[str]:
        values = answered["scores"]
        return [
            " ".join(f"{x:.9g}" for x in values[row, : len(features.words[relation])])
            for row, relation in enumerate(answered.rows["relation"])
        ]

    return (Column(SCORES, ("scores",), scores), Column.field("top", "best"))


def asked_words(features: Features) -> Callable[[pd.DataFrame], list[list[str]]]:
    """Asking.answers: each row reads every word (or candidate span) of its relation."""
    return lambda rows: [features.words[r] for r in rows["relation"]]


def relation_sets(rows: pd.DataFrame) -> list[str]:
    """Asking.sets, by scoring spans: each row ranks its relation's candidate set."""
    return list(rows["relation"])


def scored_matrix(
    rows: pd.DataFrame, features: Features, reference: ConceptFeatureMatrix, options: dict[str, Any]
) -> ConceptFeatureMatrix:
    """One model's rows as a matrix on the reference's concepts and the features scored: each
    cell the log-probability of the feature's words (or spans) at its relation's blank (their
    log-sum-exp), each one's the mean over templates; by either way of scoring (the module
    docstring)."""
    concepts = [c for c in reference.concepts if c in set(rows["concept"])]
    kept = [f for f in reference.features if f in features.of_feature]
    per_relation: dict[str, pd.DataFrame] = {}
    for relation, group in rows.groupby("relation", sort=False):
        values = np.array([np.array(s.split(), dtype=np.float64) for s in group[SCORES]])
        frame = pd.DataFrame(values, columns=features.words[str(relation)])
        frame["concept"] = group["concept"].to_numpy()
        per_relation[str(relation)] = frame.groupby("concept").mean()  # over templates
    values = np.empty((len(concepts), len(kept)))
    for j, feature in enumerate(kept):
        relation, words = features.of_feature[feature]
        logs = per_relation[relation].loc[concepts, words].to_numpy()
        values[:, j] = np.logaddexp.reduce(logs, axis=1)
    base = reference.select(concepts=concepts, features=kept)
    left_out = {reason: tuple(items) for reason, items in features.left_out.items()}
    not_scored = [f for f in reference.features if f not in set(kept) and not _listed(f, features)]
    if not_scored:
        left_out["features of a relation not asked"] = tuple(not_scored)
    return replace(
        base,
        values=values,
        provenance=Provenance("scores", options=options),
        left_out=left_out,
    )


def _listed(feature: str, features: Features) -> bool:
    return any(feature in items for items in features.left_out.values())
