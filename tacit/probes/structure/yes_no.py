"""Feature verification asked yes/no by generation (`--by generation --verification yes-no`):
each verification item (tacit.structure.verification_items: a concept's listed features and as
many it lacks, drawn from its own category and from others) asked as a question, `Is it true
that a bear has fur?`, `--samples` draws each; a draw's verdict is its first answer's first
word (tacit.matching.verdict), and an item's probability of yes the share of its readable
draws that said yes. Those probabilities are verified and calibrated as a matrix's scores
are (tacit.structure.verify_answers); an item with no readable draw is left out, counted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Column
from tacit.matching.parse import OK
from tacit.matching.verdict import NO, YES
from tacit.structure import (
    ConceptFeatureMatrix,
    reliability_bins,
    verification_items,
    verify_answers,
)
from tacit.structure.matrix import Grouping

VERDICT_COLUMNS = ("said", "n_yes", "n_no", "n_unreadable", "p_yes")
NO_VERDICT = "items with no readable yes or no"
NONE_READ = "no item had a readable yes or no: nothing to verify"
KEYS = ["concept", "feature"]


def statement(concept: str, phrase: str) -> str:
    """A feature stated of a concept, as the question asks it: the concept with its article
    and the norms' phrase of the feature (its first alternative).

    Examples:
        >>> statement("bear", "has fur"), statement("apple", "is eaten")
        ('a bear has fur', 'an apple is eaten')
    """
    from tacit.probes.elicit.free_listing import listed

    return f"{listed(concept)} {phrase}"


def yes_no_items(
    reference: ConceptFeatureMatrix, phrases: dict[str, str], seed: int
) -> tuple[pd.DataFrame, dict[str, tuple[str, ...]]]:
    """The verification items of the reference (its features some concept has), each a row
    with its question's statement in `prompt`; and what verification_items left out."""
    had = np.flatnonzero(np.any(reference.values > 0, axis=0))
    kept = reference.select(features=[reference.features[j] for j in had])
    by: Grouping = "category" if any(g is not None for g in kept.categories) else "domain"
    items, left_out = verification_items(kept, by=by, seed=seed)
    prompts = [statement(c, phrases[f]) for c, f in zip(items["concept"], items["feature"])]
    return items.assign(prompt=prompts), left_out


def verdicts(answered: Answered) -> pd.DataFrame:
    """Of each row, from its answers: each draw's verdict (`said`: `yes`, `no` or empty where
    unreadable, joined by `,`), the yes, no and unreadable draws, and P(yes) = yes / (yes +
    no), NaN where no draw was readable."""
    answers: pd.DataFrame = answered["answers"]
    first = answers[(answers["status"] == OK) & (answers["position"] == 1)]
    said = dict(zip(zip(first["concept"], first["feature"], first["draw"]), first["matched"]))
    draws = answers.groupby(KEYS, sort=False)["draw"].agg(lambda d: sorted(set(d)))
    found = []
    for concept, feature in zip(answered.rows["concept"], answered.rows["feature"]):
        told = [said.get((concept, feature, d), "") for d in draws.get((concept, feature), [])]
        yes, no = told.count(YES), told.count(NO)
        p = yes / (yes + no) if yes + no else np.nan
        found.append((",".join(told), yes, no, len(told) - yes - no, p))
    return pd.DataFrame(found, columns=list(VERDICT_COLUMNS))


VERDICT_FIELDS = (Column(VERDICT_COLUMNS, ("answers",), of=verdicts),)


def readable(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One model's items with a verdict, and what was left out (the items no draw of which
    said yes or no, by concept and feature)."""
    kept = rows["p_yes"].notna()
    gone = rows.loc[~kept, KEYS]
    left = {NO_VERDICT: [f"{c}: {f}" for c, f in zip(gone["concept"], gone["feature"])]}
    return rows[kept].reset_index(drop=True), {k: v for k, v in left.items() if v}


# summary.csv's columns of a yes/no run after `model`: each verification metric per kind
YES_NO_SUMMARY = (
    "n_concepts",
    "n_items",
    "n_items_left_out",
    "yes_rate",
    "auc_other_categories",
    "auc_other_categories_ci_low",
    "auc_other_categories_ci_high",
    "auc_other_categories_chance",
    "auc_own_category",
    "auc_own_category_ci_low",
    "auc_own_category_ci_high",
    "f1_selectivity_other_categories",
    "f1_selectivity_own_category",
    "brier_other_categories",
    "brier_own_category",
    "ece_other_categories",
    "ece_own_category",
)


@dataclass
class Verified:
    """The yes/no analyses of a run's models: summary rows, tables, figures, and the models
    with no readable verdict (`unreadable`; `any_left`: some model had one)."""

    summary: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    figures: dict[str, Callable[[], bytes]]
    left_out: dict[str, dict[str, list[str]]]
    unreadable: list[str] = field(default_factory=list)
    any_left: bool = False


def _metric_row(table: pd.DataFrame) -> dict[str, float]:
    """A model's verification table as summary columns (`auc_other_categories`, ...)."""
    row: dict[str, float] = {}
    for kind, rows in table.groupby("negatives", sort=False):
        end = str(kind).replace(" ", "_")
        for r in rows.itertuples(index=False):
            row[f"{r.metric}_{end}"] = float(r.value)
            row[f"{r.metric}_{end}_ci_low"] = float(r.ci_low)
            row[f"{r.metric}_{end}_ci_high"] = float(r.ci_high)
            row[f"{r.metric}_{end}_chance"] = float(r.chance)
    return row


def verified(rows: pd.DataFrame, draws: dict[str, Any]) -> Verified:
    """Each model's items verified (verify_answers) and calibrated (reliability_bins), with
    the verification and reliability figures (`-SLUG` beside other models')."""
    from tacit.probes.structure.outcome import slug
    from tacit.structure.figures import reliability_figure, verification_figure

    models = list(dict.fromkeys(rows["model"]))
    found = Verified(pd.DataFrame(), {}, {}, {})
    summary, verification, calibration = [], [], []
    for model in models:
        mine, left = readable(rows[rows["model"] == model])
        found.left_out[str(model)] = left
        base = {"model": model, "n_items_left_out": sum(len(v) for v in left.values())}
        if mine.empty:
            found.unreadable.append(str(model))
            summary.append({**base, "n_concepts": 0, "n_items": 0})
            continue
        p = mine["p_yes"].to_numpy(dtype=np.float64)
        table = verify_answers(
            mine,
            p,
            seed=draws["seed"],
            n_resamples=draws["n_resamples"],
            n_permutations=draws["n_permutations"],
        )
        bins = reliability_bins(mine, p)
        wanted = {k: v for k, v in _metric_row(table).items() if k in YES_NO_SUMMARY}
        summary.append(
            {
                **base,
                "n_concepts": mine["concept"].nunique(),
                "n_items": len(mine),
                "yes_rate": float((mine["n_yes"].sum()) / (mine["n_yes"] + mine["n_no"]).sum()),
                **wanted,
            }
        )
        verification.append(table.assign(model=model))
        calibration.append(bins.assign(model=model))
        end = "" if len(models) == 1 else f"-{slug(str(model))}"
        title = f"{model}'s yes/no answers"
        found.figures[f"verification{end}.png"] = _png(
            verification_figure, table, f"{title} verifying the features"
        )
        found.figures[f"reliability{end}.png"] = _png(
            reliability_figure, bins, f"{title}: reliability"
        )
    found.any_left = len(found.unreadable) < len(models)
    found.summary = pd.DataFrame(summary, columns=["model", *YES_NO_SUMMARY])
    for name, tables in (("verification", verification), ("calibration", calibration)):
        if tables:
            table = pd.concat(tables, ignore_index=True)
            found.tables[name] = table[["model", *[c for c in table if c != "model"]]]
    return found


def _png(draw: Callable[..., Any], table: pd.DataFrame, title: str) -> Callable[[], bytes]:
    """A figure of a table, drawn as a .png file's bytes when the run is saved."""
    from tacit.structure.figures import figure_png

    return lambda: figure_png(draw(table, title))
