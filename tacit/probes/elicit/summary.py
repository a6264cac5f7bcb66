"""Summaries of elicitation runs (mAP over the vocabulary or the candidates and over the
sensible answers, Spearman's rho, by model, relation and prefix, each with a bootstrap interval
over concepts; `all` pools the relations), and their printed form (the paper's Table 1, a row
per model and relation, so that it fits a terminal)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tacit.ask.paraphrase import TEMPLATE, ensemble_rows, paraphrase_columns, paraphrased
from tacit.ask.suffix_top import BOUNDED_HEADER, bounded_columns, bounded_sum
from tacit.core.display import Table
from tacit.core.metrics import chance_average_precision
from tacit.core.stats import bootstrap_ratio_ci
from tacit.probes.report import CHANCE as CHANCE_ROW
from tacit.probes.report import with_chance

ELICITATION_GROUPS = ["model", "relation", "prefix"]
ALL = "all"  # the relation of the rows that pool every relation's prompts
_METRICS = {"map_vocab": "ap_vocab", "map_sens": "ap_sens", "spearman": "spearman"}
# each metric with a chance level -> its chance column
CHANCE = {
    "map_vocab": "map_vocab_chance",
    "map_sens": "map_sens_chance",
    "spearman_mean": "spearman_chance",
}
ELICITATION_SUMMARY_COLUMNS = [
    *ELICITATION_GROUPS,
    "n_prompts",
    "n_concepts",
    "map_vocab",
    "map_vocab_ci_low",
    "map_vocab_ci_high",
    "map_vocab_chance",
    "map_sens",
    "map_sens_ci_low",
    "map_sens_ci_high",
    "map_sens_chance",
    "spearman_mean",
    "spearman_ci_low",
    "spearman_ci_high",
    "spearman_chance",
    "n_spearman",
]


def concept_intervals(
    group: pd.DataFrame,
    columns: Sequence[str],
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray, pd.Series]:
    """Per column of `group`, a percentile bootstrap interval over concepts for its mean over
    the prompts where it is defined (a concept's prompts resampled together), NaN where it is
    defined on none; and on how many prompts each column is defined."""
    values = group[list(columns)].astype(float)
    per_concept = values.fillna(0.0).groupby(group["concept"], sort=True).sum()
    counts = values.notna().groupby(group["concept"], sort=True).sum()
    low, high = bootstrap_ratio_ci(
        per_concept.to_numpy(),
        counts.to_numpy(),
        rng=rng,
        n_resamples=n_resamples,
        confidence=confidence,
    )
    defined = counts.sum().to_numpy() > 0
    return np.where(defined, low, np.nan), np.where(defined, high, np.nan), counts.sum()


def _summarize(
    group: pd.DataFrame, rng: np.random.Generator, n_resamples: int, confidence: float
) -> dict[str, float]:
    """One condition's means, each with a percentile bootstrap interval over concepts (a
    concept's prompts resampled together: the mean is over prompts)."""
    low, high, counts = concept_intervals(
        group, list(_METRICS.values()), rng, n_resamples, confidence
    )
    row: dict[str, float] = {"n_prompts": len(group), "n_concepts": group["concept"].nunique()}
    for i, (name, column) in enumerate(_METRICS.items()):
        mean = group[column].mean()
        row[name if name != "spearman" else "spearman_mean"] = mean
        row[f"{name}_ci_low"] = low[i]
        row[f"{name}_ci_high"] = high[i]
        row[f"{name}_chance"] = group[f"_{column}_chance"].mean() if name != "spearman" else 0.0
    row["n_spearman"] = int(group["spearman"].count())
    return row


def summarize_elicitation(
    prompts: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    n_candidates: int | None = None,
    n_sensible: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """mAP over the shared (or candidate) and the sensible vocabulary and mean Spearman's rho,
    by model x relation x prefix, and by model x prefix over every relation (`all`, where a run
    asks more than one). Each with a 95% percentile bootstrap interval over concepts, seeded by
    `seed` and the condition, not the model (the resamples are paired across models).
    `n_spearman` counts the prompts where rho is defined (the mean is over those only). Models,
    relations (`all` last) and prefixes in the order of the prompts (--model first). With
    several templates, a row per template and one for their ensemble, which carries the spread
    and consistency (tacit.ask.paraphrase).

    Beside each mAP, its chance level (`map_vocab_chance`, `map_sens_chance`): the mean over the
    prompts of the exact expected AP of a uniformly random ranking of N candidates with the
    prompt's `n_gold` answers among them (tacit.core.metrics.chance_average_precision). N: the
    prompt's `n_candidates` (candidate spans) or, where the rows have none, `n_candidates` (the
    shared vocabulary's size); for `map_sens`, the answers to the prompt's relation among them
    (`n_sensible`, by relation). NaN where a count is not given. `spearman_chance` is 0.
    """
    among = (
        prompts["n_candidates"].astype(float)
        if "n_candidates" in prompts
        else pd.Series(np.nan if n_candidates is None else float(n_candidates), index=prompts.index)
    )
    sensible = prompts["relation"].map(dict(n_sensible or {})).astype(float)
    prompts = prompts.assign(
        _ap_vocab_chance=chance_average_precision(prompts["n_gold"], among),
        _ap_sens_chance=chance_average_precision(prompts["n_gold"], sensible),
    )
    several = prompts["relation"].nunique() > 1
    by_template = paraphrased(prompts)
    rows = []
    keys = ["model", "prefix", *([TEMPLATE] if by_template else [])]
    for key, by_prefix in prompts.groupby(keys, sort=False):
        model, prefix, *template = key
        parts = list(by_prefix.groupby("relation", sort=False))
        if several:
            parts.append((ALL, by_prefix))
        for relation, group in parts:
            condition = repr((relation, bool(prefix), *template))
            rng = np.random.default_rng([seed, zlib.crc32(condition.encode())])
            rows.append(
                {
                    "model": model,
                    "relation": relation,
                    "prefix": prefix,
                    **({TEMPLATE: template[0]} if by_template else {}),
                    **_summarize(group, rng, n_resamples, confidence),
                    **bounded_sum(group),
                }
            )
    columns = [*ELICITATION_SUMMARY_COLUMNS, *bounded_columns(prompts)]
    if by_template:
        columns.insert(len(ELICITATION_GROUPS), TEMPLATE)
    summary = pd.DataFrame(rows, columns=columns)
    order = {
        "model": list(dict.fromkeys(prompts["model"])),
        "prefix": list(dict.fromkeys(prompts["prefix"])),
        "relation": [*dict.fromkeys(prompts["relation"]), ALL],
    }
    summary = summary.sort_values(
        ["model", "relation", "prefix"],
        key=lambda col: col.map(order[col.name].index),
        kind="stable",
    )
    summary = summary.reset_index(drop=True)
    if by_template:
        summary = paraphrase_columns(summary, prompts, ELICITATION_GROUPS, "map_vocab")
    return summary


def elicitation_tables(
    summary: pd.DataFrame,
    paper_counts: dict[str, int] | None,
    spans: bool = False,
    prefixes: Sequence[str] | None = None,
    answers: bool = False,
) -> list[Table]:
    """The paper's Table 1 a row per model and relation, one table per prefix: prompts (and
    the paper's count, for the paper's norms), mAP with its interval, mAP over the answers to
    the relation, Spearman's rho; with and without the prefix, Table 2's changes for the
    models and relations that have both. `summary`'s models are already labelled. With
    several templates: their ensemble's. `prefixes`: the templates' prefixes, named in the
    title (None: not known). `answers`: the candidates are the relation's answers
    (`--candidates answers`), so that mAP over them is mAP sens: shown once, and said why."""
    summary = ensemble_rows(summary)
    over = "the candidates" if spans else "the shared vocabulary"
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
