"""Elicitation by generation, the norming task itself: a model lists a concept's features N
times (N draws, as N participants), its answers are read and matched to the norms
(tacit.matching), and each concept and relation is scored against the features people listed:
`recall_pf` (recall weighted by production frequency), `recall`, `precision`, `spearman`
(rho between draws and pf), the `novel` answers no person gave, and what was `listed`.
docs/probes/generation.md defines each column. Refused, empty and cut draws give no answers
(counted); the words are open, so only rho has a chance level (0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.core.metrics import rank_correlation
from tacit.matching.match import SEPARATOR
from tacit.matching.parse import OK
from tacit.matching.read import answers_by_prompt
from tacit.probes.elicit.metrics import LISTING_METRICS, LISTING_PRIMARY
from tacit.probes.elicit.options import ALL
from tacit.probes.summary import Summary, count, defined, pooled_parts, summarise, total

if TYPE_CHECKING:
    from tacit.matching.match import Matcher
    from tacit.norms import NormSet

LISTING_COLUMNS = [
    "n_draws",
    "n_answers",
    "n_refusal",
    "n_empty",
    "n_truncated",
    "n_features",
    "n_listed",
    "recall_pf",
    "recall",
    "n_distinct",
    "precision",
    "spearman",
    "n_novel",
    "novel",
    "listed",
]


def score_feature_lists(
    prompts: pd.DataFrame,
    answers: pd.DataFrame,
    features: pd.DataFrame,
    keys: Sequence[str],
) -> pd.DataFrame:
    """Each prompt's features listed against the norms (the module docstring's metrics).

    prompts: a row per prompt, its `keys` (with `concept` and `relation`; relation `all`: a
        listing of every property, scored against all of the concept's `features`, matched
        by feature_matcher given every feature's relation).
    answers: the answers frame (tacit.matching.answers_frame) with the same `keys`, matched to
        each prompt's features by their names (tacit.matching.feature_matcher).
    features: the norms' rows (NormSet.table: `concept`, `relation`, `feature`, `pf`).

    Returns `prompts` with LISTING_COLUMNS after its own.
    """
    norms = dict(iter(features.groupby(["concept", "relation"], sort=False)))
    norms |= {(c, ALL): rows for c, rows in features.groupby("concept", sort=False)}
    asked = list(zip(prompts["concept"], prompts["relation"]))
    records = [
        _score_one(rows, norms.get(asked[i], features.iloc[:0]))
        for i, rows in answers_by_prompt(prompts, answers, keys)
    ]
    table = pd.DataFrame.from_records(records, columns=LISTING_COLUMNS, index=prompts.index)
    return pd.concat([prompts, table], axis=1)


def _score_one(rows: pd.DataFrame, people: pd.DataFrame) -> dict[str, object]:
    """One prompt's metrics from its answers and its concept's features of the relation (in
    plain Python over the rows' columns: a prompt has a few dozen rows)."""
    draws, statuses = rows["draw"].tolist(), rows["status"].tolist()
    matched, normals, answers = rows["matched"].tolist(), rows["normal"].tolist(), rows["answer"]
    first_status: dict[int, str] = {}
    truncated: set[int] = set()
    listed_by: dict[str, set[int]] = {}
    first: dict[str, int] = {}  # each distinct answer (normal form): its first row
    novel_draws: dict[str, set[int]] = {}
    n_read = 0
    for i, (draw, status) in enumerate(zip(draws, statuses)):
        first_status.setdefault(draw, status)
        truncated.update([draw] if status == "truncated" else [])
        if status != OK:
            continue
        n_read += 1
        first.setdefault(normals[i], i)
        for feature in matched[i].split(SEPARATOR) if matched[i] else ():
            listed_by.setdefault(feature, set()).add(draw)
        if not matched[i]:
            novel_draws.setdefault(normals[i], set()).add(draw)
    counts = np.array([len(listed_by.get(f, ())) for f in people["feature"]], float)
    pf = people["pf"].to_numpy(float)
    said = answers.tolist()
    novel = [i for i in first.values() if not matched[i]]
    novel_listed = sorted(
        ((said[i], len(novel_draws[normals[i]])) for i in novel), key=lambda item: -item[1]
    )
    features_listed = sorted(
        ((f, len(d)) for f, d in sorted(listed_by.items())), key=lambda item: -item[1]
    )
    listed = counts > 0
    kinds = list(first_status.values())
    return {
        "n_draws": len(first_status),
        "n_answers": n_read,
        "n_refusal": kinds.count("refusal"),
        "n_empty": kinds.count("empty"),
        "n_truncated": len(truncated),
        "n_features": len(people),
        "n_listed": int(listed.sum()),
        "recall_pf": float(pf[listed].sum() / pf.sum()) if pf.sum() > 0 else np.nan,
        "recall": float(listed.mean()) if len(people) else np.nan,
        "n_distinct": len(first),
        "precision": float(np.mean([bool(matched[i]) for i in first.values()]))
        if first
        else np.nan,
        "spearman": rank_correlation(pf, counts),
        "n_novel": len(novel),
        "novel": " | ".join(f"{a}:{n}" for a, n in novel_listed),
        "listed": " | ".join(f"{f}:{n}" for f, n in features_listed),
    }


# recall (pf-weighted and not), precision and Spearman's rho by model x relation (x prefix,
# where the prompts have one) and over every relation (`all`, where several), each interval
# over concepts (a mean over the prompts where it is defined: `n_precision`, `n_spearman`),
# seeded by the relation and prefix; the draws, answers and novel answers are totals
LISTING_SUMMARY = Summary(
    ("model", "relation", "prefix"),
    (LISTING_PRIMARY, *LISTING_METRICS),
    counts=(count("n_prompts"), count("n_concepts", "concept")),
    after=(
        defined("n_precision", "precision"),
        defined("n_spearman", "spearman"),
        *(total(c) for c in ("n_draws", "n_answers", "n_refusal", "n_empty", "n_truncated")),
        total("n_novel"),
    ),
    by=("model", "prefix"),
    parts=pooled_parts("relation", ALL),
    pooled="relation",
    stream=lambda key, relation: repr((relation, *key[1:])),
    templates=False,
)


def summarize_feature_lists(
    scored: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The norming task's summary (LISTING_SUMMARY); recall and precision have no chance
    level, rho's is 0 (the module docstring)."""
    return summarise(
        scored, LISTING_SUMMARY, seed=seed, n_resamples=n_resamples, confidence=confidence
    )


OTHER = "other relation"  # an answer's status in another relation's rows (never read)


def relation_scores(
    prompts: pd.DataFrame,
    answers: pd.DataFrame,
    norms: NormSet,
    matchers: Mapping[tuple[str, str], Matcher],
    keys: Sequence[str],
) -> pd.DataFrame:
    """A free listing scored per relation: for each concept and each relation of its
    features, the listing's answers of that relation against its features of that relation
    (tacit.probes.elicit.generated's metrics). An answer's relation: that of the features
    it matched; one that matched none, the relation its start states (`is a tool`: `is a`,
    Matcher.relation_stated); one of neither counts in relation `all` alone."""
    relation_of = dict(zip(norms.table["feature"], norms.table["relation"]))
    said = _relations_said(answers, matchers, relation_of)
    table = norms.table
    parts = []
    for relation in dict.fromkeys(table["relation"]):
        having = set(table.loc[table["relation"] == relation, "concept"])
        asked = prompts[prompts["concept"].isin(having)].assign(relation=relation)
        if asked.empty:
            continue
        mine = pd.Series([relation in r for r in said], index=answers.index)
        kept = answers.assign(
            relation=relation,
            status=answers["status"].where(~answers["status"].eq(OK) | mine, OTHER),
            matched=[
                SEPARATOR.join(n for n in m.split(SEPARATOR) if relation_of.get(n) == relation)
                if m
                else ""
                for m in answers["matched"]
            ],
        )
        columns = [c for c in prompts.columns if c not in LISTING_COLUMNS]
        parts.append(score_feature_lists(asked[columns], kept, table, keys))
    return pd.concat(parts, ignore_index=True) if parts else prompts.iloc[:0]


def _relations_said(
    answers: pd.DataFrame,
    matchers: Mapping[tuple[str, str], Matcher],
    relation_of: Mapping[str, str],
) -> list[set[str]]:
    """Each answer row's relations (relation_scores' rule)."""
    found: list[set[str]] = []
    for concept, answer, matched in zip(answers["concept"], answers["answer"], answers["matched"]):
        if matched:
            found.append({relation_of[n] for n in matched.split(SEPARATOR) if n in relation_of})
            continue
        stated = matchers[(concept, ALL)].relation_stated(answer) if answer else None
        found.append({stated} if stated else set())
    return found
