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
  every feature or none), as scoring's rho (tacit.core.metrics.rank_correlation).
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

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tacit.core.metrics import rank_correlation
from tacit.matching.match import SEPARATOR
from tacit.matching.parse import OK
from tacit.matching.read import answers_by_prompt
from tacit.probes.elicit.metrics import LISTING_METRICS, LISTING_PRIMARY
from tacit.probes.elicit.summary import ALL
from tacit.probes.summary import Summary, count, defined, pooled_parts, summarise, total

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
    """One prompt's metrics from its answers and its concept's features of the relation."""
    read = rows[rows["status"] == OK]
    draws = rows.drop_duplicates("draw")["status"].value_counts()
    named = read.assign(feature=read["matched"].str.split(SEPARATOR, regex=False)).explode(
        "feature"
    )
    named = named[named["feature"] != ""]
    listed_by = named.groupby("feature")["draw"].nunique()
    counts = listed_by.reindex(people["feature"]).fillna(0).to_numpy(float)
    pf = people["pf"].to_numpy(float)
    first = read.drop_duplicates("normal")
    novel = first[first["matched"] == ""]
    novel_draws = read[read["matched"] == ""].groupby("normal", sort=False)["draw"].nunique()
    novel_listed = sorted(
        zip(novel["answer"], novel["normal"].map(novel_draws)), key=lambda item: -item[1]
    )
    features_listed = sorted(listed_by.items(), key=lambda item: -item[1])
    listed = counts > 0
    return {
        "n_draws": int(rows["draw"].nunique()),
        "n_answers": len(read),
        "n_refusal": int(draws.get("refusal", 0)),
        "n_empty": int(draws.get("empty", 0)),
        "n_truncated": int(rows["status"].eq("truncated").groupby(rows["draw"]).any().sum()),
        "n_features": len(people),
        "n_listed": int(listed.sum()),
        "recall_pf": float(pf[listed].sum() / pf.sum()) if pf.sum() > 0 else np.nan,
        "recall": float(listed.mean()) if len(people) else np.nan,
        "n_distinct": len(first),
        "precision": float((first["matched"] != "").mean()) if len(first) else np.nan,
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
