"""Feature verification asked yes/no by generation (`--by generation --verification yes-no`):
each verification item (tacit.structure.verification_items: a concept's listed features and as
many it lacks, drawn from its own category and from others) asked as a question, `Is it true
that a bear has fur?`, `--samples` draws each; a draw's verdict is its first answer's first
word (tacit.matching.verdict), and an item's probability of yes the share of its readable
draws that said yes. Those probabilities are verified and calibrated as a matrix's scores
are (tacit.structure.verify_answers); an item with no readable draw is left out, counted."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Asking, Column
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.matching.parse import OK
from tacit.matching.verdict import NO, YES
from tacit.probes.base import Outcome, Plan, Whole
from tacit.probes.structure.common import draws, options_record, reference_matrix, say_left_out
from tacit.structure import (
    ConceptFeatureMatrix,
    reliability_bins,
    verification_items,
    verify_answers,
)
from tacit.structure.matrix import Grouping

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.norms import NormSet
    from tacit.probes.structure.options import StructureOptions

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
    reference: ConceptFeatureMatrix, phrases: dict[str, str], seed: int, concepts: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, tuple[str, ...]]]:
    """The verification items of `concepts`, each a row with its question's statement in
    `prompt`, and what verification_items left out of them. The items are drawn over every
    concept of the reference (its features some concept has), so a concept's items, and its
    own category's negatives, are the same whichever concepts a run asks (`--limit`)."""
    had = np.flatnonzero(np.any(reference.values > 0, axis=0))
    kept = reference.select(features=[reference.features[j] for j in had])
    by: Grouping = "category" if any(g is not None for g in kept.categories) else "domain"
    items, left_out = verification_items(kept, by=by, seed=seed)
    asked = set(concepts)
    items = items[items["concept"].isin(asked)].reset_index(drop=True)
    left_out = {
        why: kept_of
        for why, gone in left_out.items()
        if (kept_of := tuple(g for g in gone if g in asked or g.split(":")[0] in asked))
    }
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


OTHER = "other categories"  # the kind of negative the primary metric reads


def whole(directory: Path, model: str) -> Whole | None:
    """A model's answers to the items of the primary metric (its positives and the
    other-category negatives, from the run's prompts.csv) and their AUC; None for a model
    with no readable answer."""
    from tacit.structure.stats import Codes, weighted_auc

    rows = pd.read_csv(directory / "prompts.csv", keep_default_na=False, na_values=[""])
    mine = rows[(rows["model"] == model) & ((rows["negatives"] == OTHER) | (rows["label"] == 1))]
    items = mine[[*KEYS, "label"]].assign(score=mine["p_yes"].astype(float)).dropna()
    y = items["label"].to_numpy().astype(bool)
    if items.empty or y.all() or not y.any():
        return None
    value = weighted_auc(Codes.of(items["score"].to_numpy()), y, np.ones(len(items)))
    return Whole(value, (model, items))


def compare_wholes(
    a: Whole, b: Whole, *, seed: int, n_resamples: int, confidence: float
) -> dict[str, Any]:
    """Two models' AUC on the items both answered, and its paired bootstrap."""
    from tacit.probes.structure.paired import comparison
    from tacit.structure import auc_difference

    (name_a, items_a), (name_b, items_b) = a.data, b.data
    try:
        found = auc_difference(
            items_a, items_b, seed=seed, n_resamples=n_resamples, confidence=confidence
        )
    except ValueError as err:
        raise TacitError(f"{name_a} and {name_b}: {err}") from None
    return comparison(found.auc_a, found.auc_b, found)


@dataclass
class YesNoState:
    norms: NormSet
    items: pd.DataFrame  # the verification items asked (yes_no_items)
    left_out: dict[str, tuple[str, ...]]  # what verification_items left out
    limited: list[str]  # concepts --limit left out


def plan_yes_no(
    models: Sequence[RunModel], values: StructureOptions, run: Planning, ask: Any
) -> Plan:
    """Each verification item of the (limited) concepts asked yes or no."""
    from tacit.matching.verdict import VerdictMatcher
    from tacit.probes.shared_options import (
        chosen_norms,
        limit_concepts,
        norms_record,
        requested_concepts,
    )

    if ask.name != "words":
        raise TacitError(
            f"structure: {option('--verification')} yes-no is asked by generation "
            f"({option('--by')} generation); by scoring, the matrix's log-probabilities "
            "verify the features"
        )
    if values.write_norms is not None:
        raise TacitError(
            f"structure: {option('--write-norms')} writes a free listing's norms; "
            f"{option('--verification')} yes-no lists nothing"
        )
    norms = chosen_norms(values)
    reference = reference_matrix(norms, values)
    wanted = set(requested_concepts(norms, values.concepts))
    asked = pd.DataFrame({"concept": [c for c in reference.concepts if c in wanted]})
    asked, limited = limit_concepts(asked, run)
    phrases = dict(zip(norms.table["feature"], norms.table["phrase"]))
    items, left_out = yes_no_items(reference, phrases, run.seed, list(asked["concept"]))
    if items.empty:
        raise TacitError(
            "structure: no feature to verify: no concept asked has a category (or domain) "
            "with a feature it lacks"
        )
    ask.prepare(models, ask.needs([], ""), run)
    matcher = VerdictMatcher.of()
    asking = Asking(
        answers=lambda rows: [[f] for f in rows["feature"]],
        asks="verify",
        matchers=lambda rows: matcher,
        keys=lambda rows: KEYS,
    )
    work = ask.work(items, asking, VERDICT_FIELDS)
    state = YesNoState(norms, items, left_out, limited)
    return Plan(work, values, ask=ask, manifest={"norms": norms_record(norms)}, state=state)


def finish_yes_no(plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
    """Each model's readable answers verified and calibrated (verified), with the counts."""
    values: StructureOptions = plan.values
    state: YesNoState = plan.state
    done = plan.asked.finish(rows, manifest["models"], keys=KEYS)
    found = verified(done.rows, draws(values, run))
    say_left_out(found.unreadable, NONE_READ, found.any_left)
    added: dict[str, Any] = dict(done.record)
    added["options"] = {**options_record(values, None), **done.options}
    added["options"].update(samples=values.samples, temperature=values.temperature)
    added["counts"] = {
        "items": len(state.items),
        "items_by_kind": {
            str(k): int(n) for k, n in state.items["negatives"].value_counts().items()
        },
        "concepts_left_out_by_limit": len(state.limited),
    }
    added["yes_no"] = {
        "left_out": {k: list(v) for k, v in state.left_out.items()},
        "left_out_by_model": found.left_out,
    }
    return Outcome(
        done.rows,
        found.summary,
        added,
        {**done.extra, **found.tables},
        done.files,
        found.figures,
    )
