"""Property elicitation over candidate spans: "Everyone knows that a bear has <mask>." ranks
every answer of any length ("fur", "four legs", "sharp teeth") that people gave to the relation
for any concept (`--candidates answers`), or the spans of a FILE.

A concept's gold answers are its own answers to the relation that are candidates, weighted by
production frequency; AP is computed over the candidate set (`ap_vocab`) and over the
candidates that answer the relation for some concept (`ap_sens`; the two are equal for
`answers`), Spearman's rho between pf and the gold spans' scores, as in vocabulary mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.core.metrics import average_precision
from tacit.probes.candidates import CandidateSet, SpanRanker, relation_answers, top_spans
from tacit.probes.elicit import (
    PREFIX,
    PROMPT_COLUMNS,
    RELATION_WORDS,
    build_elicitation_prompts,
    rank_correlation,
)

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer
    from tacit.norms.reader import NormSet

SPAN_RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, "n_candidates", "ap_vocab", "ap_sens",
                       "spearman", "top5"]  # fmt: skip
GOLD_SEPARATOR = " | "  # spans hold spaces: 'fur:20 | four legs:3'


def concept_free(relation: str) -> Callable[[str], str]:
    """template -> the prompt with "it" for the concept, for `--normalize pmi`."""
    sentence = f"it {RELATION_WORDS[relation]} <mask>."

    def free(template: str) -> str:
        prefixed = template.startswith(PREFIX)
        return f"{PREFIX} {sentence}" if prefixed else sentence[0].upper() + sentence[1:]

    return free


def span_golds(
    norms: NormSet, relations: Sequence[str], candidates: CandidateSet | None
) -> tuple[dict[str, CandidateSet], pd.DataFrame, pd.DataFrame]:
    """Per relation: the candidate set (`answers` when `candidates` is None), the gold
    `relation, concept, span, pf` rows among them, and per relation how many answers were
    left out because they are not candidates."""
    sets, golds, report = {}, [], []
    for relation in relations:
        answers = relation_answers(norms, relation)
        chosen = candidates or CandidateSet("answers", sorted(set(answers["span"])))
        kept = answers[answers["span"].isin(set(chosen.spans))]
        sets[relation] = chosen
        golds.append(kept.assign(relation=relation))
        report.append({"relation": relation, "answers": len(answers), "kept": len(kept),
                       "not_candidates": len(answers) - len(kept)})  # fmt: skip
    gold = pd.concat(golds, ignore_index=True)[["relation", "concept", "span", "pf"]]
    return sets, gold, pd.DataFrame(report)


def build_span_prompts(
    gold: pd.DataFrame,
    relations: Sequence[str],
    prefixes: Sequence[bool],
    concepts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One prompt per relation x prefix x concept with at least one gold span (`gold` lists
    them by pf, highest first, as `span:pf` separated by ` | `)."""
    ordered = gold.sort_values(["relation", "concept", "pf", "span"],
                               ascending=[True, True, False, True])  # fmt: skip
    return build_elicitation_prompts(ordered, relations, prefixes, concepts, column="span",
                                     separator=GOLD_SEPARATOR)  # fmt: skip


def parse_span_gold(gold: str) -> list[tuple[str, float]]:
    """'fur:20 | four legs:3' -> [('fur', 20.0), ('four legs', 3.0)]."""
    items = (item.rpartition(":") for item in gold.split(GOLD_SEPARATOR))
    return [(span, float(pf)) for span, _, pf in items]


def score_span_elicitation(
    rows: pd.DataFrame,
    scorer: Scorer,
    rankers: dict[str, SpanRanker],
    answering: dict[str, set[str]],
    progress: tqdm | bool,
) -> pd.DataFrame:
    """AP over the candidates and over those answering the relation, rho, top 5, per prompt."""
    parts = []
    for relation, group in rows.groupby("relation", sort=False):
        ranker = rankers[relation]
        spans = ranker.candidates.spans
        templates = list(dict.fromkeys(group["prompt"]))
        scores = ranker.scores(scorer, templates, progress)
        row_of = {t: n for n, t in enumerate(templates)}
        per_row = scores[[row_of[p] for p in group["prompt"]]]
        index = ranker.candidates.index()
        sensible = np.array([s in answering[relation] for s in spans])
        table = group.copy()
        ap_vocab, ap_sens, rho = [], [], []
        for row, gold_text in zip(per_row, group["gold"]):
            gold = parse_span_gold(gold_text)
            relevant = np.zeros(len(spans), dtype=bool)
            relevant[[index[s] for s, _ in gold]] = True
            ap_vocab.append(average_precision(row, relevant))
            ap_sens.append(average_precision(row[sensible], relevant[sensible]))
            rho.append(rank_correlation([p for _, p in gold], [row[index[s]] for s, _ in gold]))
        table.insert(0, "model", scorer.name)
        table["n_candidates"] = len(spans)
        table["ap_vocab"], table["ap_sens"], table["spearman"] = ap_vocab, ap_sens, rho
        table["top5"] = top_spans(per_row, spans)
        parts.append(table)
    return pd.concat(parts).loc[rows.index, SPAN_RESULT_COLUMNS]
