"""The probes' own candidate spans, which the ranking layer ranks (tacit.ranking): every
concept of the norms with its article ("A bear", "An aardvark", "Scissors"; retrieval's
`concepts`), every answer people gave to a relation ("fur", "four legs"; elicitation's
`answers`), and what scoring them costs a model (a Work's cost)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.lexicon import noun_phrase, sentence_start
from tacit.norms.phrasing import answer_spans
from tacit.ranking import CandidateSet

if TYPE_CHECKING:
    from tacit.norms.reader import NormSet


def span_cost(
    key: str, spans: Callable[[pd.DataFrame], Any]
) -> Callable[[pd.DataFrame], pd.Series]:
    """A span probe's Work.cost: each distinct prompt text of a key costs a sentence per
    candidate in its blank (`spans`: rows -> how many candidates each row's blank takes)."""

    def cost(rows: pd.DataFrame) -> pd.Series:
        texts = rows.drop_duplicates([key, "prompt"])
        return texts.assign(_n=spans(texts)).groupby(key, sort=False)["_n"].sum()

    return cost


def concept_candidates(
    norms: NormSet, concepts: Sequence[str], articles: Mapping[str, str] | None = None
) -> tuple[CandidateSet, dict[str, str]]:
    """Every concept of the norms as a sentence-initial span ("A bear"), and each given
    concept's span. Two senses with one name read the same: one candidate, the target of
    both concepts' prompts."""
    span_of = {c: sentence_start(noun_phrase(c, articles)) for c in norms.concepts}
    spans = list(dict.fromkeys(span_of.values()))
    return CandidateSet("concepts", spans), {c: span_of[c] for c in concepts}


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
