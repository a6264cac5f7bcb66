"""The matrix by scoring: for each concept and relation, elicitation's prompt asked once, and
every one-word feature of that relation read off the same distribution at its blank.

A feature's score is the log-probability that its blank holds one of its words
(`has fur_hair`: log(P(fur) + P(hair))), the mean over the relation's templates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Column
from tacit.norms.phrasing import one_word_answers
from tacit.probes.elicit.prompts import fill
from tacit.structure import ConceptFeatureMatrix, Provenance

if TYPE_CHECKING:
    from tacit.ask.base import Ask
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet

MULTI_WORD = "features of more than one word (by scoring over the shared vocabulary)"
NOT_IN_VOCABULARY = "features with no word in the shared vocabulary"
SCORES = "scores"  # the rows' column of every word's log-probability, in Features.words order


@dataclass(frozen=True)
class Features:
    """The features a run scores, and those it cannot.

    words: relation -> the distinct words its prompts read (every kept feature's), in order.
    of_feature: feature -> (its relation, its words kept), in the norms' order.
    left_out: reason -> the features left out for it.
    """

    words: dict[str, list[str]]
    of_feature: dict[str, tuple[str, list[str]]]
    left_out: dict[str, list[str]] = field(default_factory=dict)


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
    """Asking.answers: each row reads every word of its relation."""
    return lambda rows: [features.words[r] for r in rows["relation"]]


def scored_matrix(
    rows: pd.DataFrame, features: Features, reference: ConceptFeatureMatrix, options: dict[str, Any]
) -> ConceptFeatureMatrix:
    """One model's rows as a matrix on the reference's concepts and the features scored: each
    cell the log-probability of the feature's words at its relation's blank (their
    log-sum-exp), the mean over templates."""
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
