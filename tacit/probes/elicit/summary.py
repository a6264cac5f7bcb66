"""Summaries of elicitation runs (mAP over the vocabulary or the candidates and over the
sensible answers, Spearman's rho, by model, relation and prefix, each with a bootstrap interval
over concepts; `all` pools the relations), and their printed form (the paper's Table 1, a row
per model and relation, so that it fits a terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tacit.ask.paraphrase import ensemble_rows
from tacit.ask.vocabulary import BOUNDED_HEADER, bounded_columns
from tacit.core.display import Table
from tacit.probes.elicit.metrics import MAP_SENS, MAP_VOCAB, SPEARMAN
from tacit.probes.elicit.options import ALL
from tacit.probes.report import CHANCE as CHANCE_ROW
from tacit.probes.report import with_chance
from tacit.probes.summary import Summary, count, defined, pooled_parts, summarise

ELICITATION_GROUPS = ["model", "relation", "prefix"]


def _in_order(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Models, relations (`all` last) and prefixes in the order of the prompts."""
    order = {
        "model": list(dict.fromkeys(rows["model"])),
        "prefix": list(dict.fromkeys(rows["prefix"])),
        "relation": [*dict.fromkeys(rows["relation"]), ALL],
    }
    return summary.sort_values(
        ["model", "relation", "prefix"],
        key=lambda col: col.map(order[col.name].index),
        kind="stable",
    ).reset_index(drop=True)


# mAP over the candidates and over the relation's answers and mean Spearman's rho, by model x
# relation x prefix and over every relation (`all`, where several), each interval over
# concepts (a mean over the prompts where the metric is defined: `n_spearman`), seeded by the
# condition; with several templates a row per template and one for their ensemble
SUMMARY = Summary(
    tuple(ELICITATION_GROUPS),
    (MAP_VOCAB, MAP_SENS, SPEARMAN),
    counts=(count("n_prompts"), count("n_concepts", "concept")),
    after=(defined("n_spearman", "spearman"),),
    by=("model", "prefix"),
    parts=pooled_parts("relation", ALL),
    pooled="relation",
    stream=lambda key, relation: repr((relation, bool(key[1]), *key[2:])),
    order=_in_order,
)
# each metric with a chance level -> its chance column
CHANCE = {m.column: m.chance for m in SUMMARY.metrics if m.chance is not None}


def summarize_elicitation(
    prompts: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    n_candidates: int | None = None,
    n_sensible: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """The summary (SUMMARY), each mAP beside its chance level: the mean over the prompts of
    the exact expected AP of a uniformly random ranking of N candidates with the prompt's
    `n_gold` answers among them, N its `n_candidates` (spans) or `n_candidates` (the shared
    vocabulary's size), for `map_sens` the answers to its relation (`n_sensible`)."""
    context = {"n_candidates": n_candidates, "n_sensible": n_sensible}
    return summarise(
        prompts,
        SUMMARY,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        context=context,
    )


def elicitation_tables(
    summary: pd.DataFrame,
    paper_counts: dict[str, int] | None,
    over: str = "the shared vocabulary",
    prefixes: Sequence[str] | None = None,
    answers: bool = False,
) -> list[Table]:
    """The paper's Table 1 a row per model and relation, one table per prefix: prompts (and
    the paper's count, for the paper's norms), mAP with its interval, mAP over the answers to
    the relation, Spearman's rho; with and without the prefix, Table 2's changes for the
    models and relations that have both. `summary`'s models are already labelled. With
    several templates: their ensemble's. `over`: what the answers were ranked among (Ask.over).
    `prefixes`: the templates' prefixes, named in the title (None: not known). `answers`: the
    candidates are the relation's answers (`--candidates answers`), so that mAP over them is
    mAP sens: shown once, and said why."""
    summary = ensemble_rows(summary)
    if answers:
        over = "the candidates, every answer to the relation: mAP sens is the same number"
        sens = ""
    else:
        sens = "; mAP sens: over the answers to the relation"
    if not prefixes:
        named = "with the prefix"
    elif len(prefixes) == 1:
        named = f"with the prefix '{prefixes[0]}'"
    else:
        named = "with the templates' prefixes (" + ", ".join(f"'{p}'" for p in prefixes) + ")"
    tables = []
    for prefix, rows in summary.groupby(summary["prefix"].astype(str) == "True", sort=False):
        shown = rows.reset_index(drop=True)
        columns = [
            "model",
            "relation",
            "n_prompts",
            "map_vocab",
            "map_vocab_ci_low",
            "map_vocab_ci_high",
            *([] if answers else ["map_sens"]),
            "spearman_mean",
            *bounded_columns(shown),
        ]
        if paper_counts:
            shown = shown.assign(paper_n_prompts=shown["relation"].map(paper_counts))
            columns.insert(3, "paper_n_prompts")
        title = named if prefix else "without the prefix"
        # a run saved before the chance columns: none; answers mode shows no mAP sens
        chance = [c for m, c in CHANCE.items() if c in shown and m in columns]
        tables.append(
            Table(
                with_chance(shown[columns + chance], CHANCE, by=["relation"]),
                f"Elicitation {title} (mAP over {over}{sens}; rho: Spearman; {CHANCE_ROW}: a "
                "uniformly random ranking of the candidates, whose rho is 0)",
                intervals={"map_vocab": ("map_vocab_ci_low", "map_vocab_ci_high")},
                headers={
                    "n_prompts": "prompts",
                    "paper_n_prompts": "paper's",
                    "map_vocab": "mAP [95% CI]",
                    "map_sens": "mAP sens",
                    "spearman_mean": "rho",
                    **BOUNDED_HEADER,
                },
            )
        )
    change = prefix_change(summary, answers=answers)
    if change is not None:
        tables.append(change)
    return tables


def prefix_change(summary: pd.DataFrame, *, answers: bool = False) -> Table | None:
    """Table 2: what dropping the prefix changes (without - with), for every model and
    relation that has both; None where none has (`answers`: mAP sens, the same as mAP, once)."""
    metrics = ["map_vocab", *([] if answers else ["map_sens"]), "spearman_mean"]
    keyed = summary.assign(prefix=summary["prefix"].astype(str) == "True")
    both = keyed.pivot_table(
        index=["model", "relation"], columns="prefix", values=metrics, sort=False, dropna=False
    )
    if True not in both.columns.get_level_values(1) or False not in both.columns.levels[1]:
        return None
    # equal but for float32 rounding (scores are computed in float32) reads as no change
    delta = pd.DataFrame(
        {
            m: (both[(m, False)] - both[(m, True)]).where(
                ~np.isclose(both[(m, False)], both[(m, True)], rtol=1e-6, atol=0), 0.0
            )
            for m in metrics
        }
    )
    paired = keyed.groupby(["model", "relation"], sort=False)["prefix"].nunique() == 2
    delta = delta[paired.reindex(delta.index).fillna(False).to_numpy(bool)].reset_index()
    if delta.empty:
        return None
    return Table(
        delta,
        "Change when the prefix is dropped (without - with)",
        signed=metrics,
        headers={"map_vocab": "mAP", "map_sens": "mAP sens", "spearman_mean": "rho"},
    )
