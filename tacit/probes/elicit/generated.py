"""Elicitation by generation, the norming task itself: a model lists a concept's features N
times (N draws, as N participants), its answers are read and matched to the norms
(tacit.matching), and each concept and relation is scored against the features people listed.

Per prompt (a concept and relation; or `all`: a listing of every property, against all of the
concept's features given), over the norms' features F of that concept and relation
(pf: how many people listed each) and the `ok` answers of every draw (tacit.matching.read):

- `listed_by[f]`: how many draws gave an answer that matched feature f (once per draw).
- `recall_pf`: sum of pf over the features listed (listed_by > 0) / sum of pf over F: recall
  of the human features weighted by production frequency.
- `recall`: the features listed / |F|.
- `precision`: the model's distinct answers (by normal form, over every draw) that matched a
  feature of F / its distinct answers; NaN where it gave none (`n_distinct` 0).
- `spearman`: Spearman's rho between listed_by and pf over F (0 for a feature not listed);
  NaN where undefined (fewer than 2 features, or either side constant: a model that lists
  every feature or none), as scoring's rho (tacit.probes.elicit.scoring.rank_correlation).
- `novel`: the distinct answers no person listed for the concept and relation (matched
  nothing), each with the draws that gave it (`answer:draws | ...`, most first), and
  `n_novel` how many: kept, counted and shown, for a reader to judge (a model's new feature
  is not always wrong; the norms are what people thought of first).
- `listed`: the features listed, each with its draws (`feature:draws | ...`).

Refusals, empty and truncated draws give no answers (their counts are columns), so a concept
the model refused every time has recall 0 and no precision.

Chance: a model's words are open, so recall and precision have no chance level; rho has 0
(answers that ignore the norms are listed as often whatever a feature's pf).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.matching.match import SEPARATOR
from tacit.matching.parse import OK
from tacit.matching.read import answers_by_prompt
from tacit.probes.elicit.scoring import rank_correlation
from tacit.probes.elicit.summary import ALL, concept_intervals

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
# summary metric -> the per-prompt column it averages
_LISTING_METRICS = {
    "recall_pf": "recall_pf",
    "recall": "recall",
    "precision": "precision",
    "spearman_mean": "spearman",
}
LISTING_GROUPS = ["model", "relation", "prefix"]  # prefix: where the prompts have one
LISTING_SUMMARY_COLUMNS = [
    *LISTING_GROUPS,
    "n_prompts",
    "n_concepts",
    *(f"{name}{part}" for name in _LISTING_METRICS for part in ("", "_ci_low", "_ci_high")),
    "spearman_chance",
    "n_precision",
    "n_spearman",
    "n_draws",
    "n_answers",
    "n_refusal",
    "n_empty",
    "n_truncated",
    "n_novel",
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


def summarize_feature_lists(
    scored: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean recall (weighted by pf and not), precision and Spearman's rho by model x relation
    (x prefix, where the prompts have one), and by model over every relation (`all`, where
    there are several), each with a percentile bootstrap interval over concepts
    (tacit.probes.elicit.summary.concept_intervals), seeded by `seed`, the relation and the
    prefix, not the model (the resamples are paired across models). A mean
    is over the prompts where the metric is defined (`n_precision`, `n_spearman`); the draws,
    answers, refusals, empty and truncated draws and novel answers are totals. `spearman_chance`
    is 0; recall and precision have no chance level (the module docstring)."""
    # a free listing's rows are relation `all` already: nothing more is pooled
    several = scored["relation"].nunique() > 1 and ALL not in set(scored["relation"])
    prefixed = "prefix" in scored
    rows = []
    for key, by_model in scored.groupby(["model", "prefix"] if prefixed else ["model"], sort=False):
        model, prefix = key if prefixed else (key[0], None)
        parts = list(by_model.groupby("relation", sort=False))
        if several:
            parts.append((ALL, by_model))
        for relation, group in parts:
            stream = (relation, prefix) if prefixed else (relation,)
            rng = np.random.default_rng([seed, zlib.crc32(repr(stream).encode())])
            columns = list(_LISTING_METRICS.values())
            low, high, defined = concept_intervals(group, columns, rng, n_resamples, confidence)
            row: dict[str, object] = {
                "model": model,
                "relation": relation,
                "prefix": prefix,
                "n_prompts": len(group),
                "n_concepts": group["concept"].nunique(),
            }
            for i, (name, column) in enumerate(_LISTING_METRICS.items()):
                row |= {
                    name: group[column].mean(),
                    f"{name}_ci_low": low[i],
                    f"{name}_ci_high": high[i],
                }
            row |= {
                "spearman_chance": 0.0,
                "n_precision": int(defined["precision"]),
                "n_spearman": int(defined["spearman"]),
            }
            totals = ["n_draws", "n_answers", "n_refusal", "n_empty", "n_truncated", "n_novel"]
            row |= {column: int(group[column].sum()) for column in totals}
            rows.append(row)
    columns = [c for c in LISTING_SUMMARY_COLUMNS if prefixed or c != "prefix"]
    return pd.DataFrame(rows, columns=LISTING_SUMMARY_COLUMNS)[columns]


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
