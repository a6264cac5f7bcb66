"""Running the NLI suites: each item asked of every model (cloze or classifier) or read from
released predictions, matched back to the suite's items, and summarised in the paper's
breakdowns."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pandas as pd

from tacit.ask.base import Work
from tacit.ask.cloze import CLOZE_NEEDS
from tacit.core.files import file_sha256
from tacit.core.manifest import ModelRecord
from tacit.models.base import Needs
from tacit.pragmatics import SUITES
from tacit.pragmatics.labels import ENTAILMENT, NON_ENTAILMENT, PROB_COLUMNS
from tacit.probes.nli.predict import ClozeSetup

# what each --mode asks of a model: a classifier of premise-hypothesis pairs, or a language
# model asked in cloze form (auto: either)
NLI_NEEDS = {
    "auto": Needs(
        (frozenset({"classify"}), *CLOZE_NEEDS.any_of),
        asks="NLI pairs, classified or in cloze form",
    ),
    "cloze": CLOZE_NEEDS,
    "classifier": Needs.of("classify", asks="NLI pairs, classified"),
}


def nli_work(items: pd.DataFrame, mode: str, cloze: ClozeSetup, label_names: Any) -> Work:
    """Score each item with a model: cloze for masked and causal LMs, classification for NLI
    classifiers (a model that classifies pairs)."""
    from tacit.probes.nli.predict import (
        classifier_scores,
        cloze_finish,
        cloze_prompts,
        cloze_scores,
    )

    rows = items[["item_id", "premise", "hypothesis"]].copy()
    rows["pair"] = rows["premise"] + "\t" + rows["hypothesis"]  # the same pair is scored once
    if mode != "classifier":
        rows["prompt"] = cloze_prompts(items, cloze)

    def score(scorer: Any, chunk: pd.DataFrame, bar: Any) -> Any:
        if scorer.can("classify"):
            return classifier_scores(scorer, chunk, bar)
        return cloze_scores(scorer, chunk, cloze, bar)

    def finish(model: Any, table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
        scorer = model.scorer
        mode = "classifier" if scorer.can("classify") else "cloze"
        record: dict[str, Any] = {"seed": "", "mode": mode}
        if scorer.can("classify"):
            record.update(labels=scorer.labels_record(), max_tokens=scorer.max_tokens)
            return table, record
        table, extra = cloze_finish(model.scorer, table, cloze)
        return table, {**record, **extra}

    return Work(
        rows,
        "pair",
        score,
        NLI_NEEDS[mode],
        finish,
        unit="pair",
        load_options={"classify": {"label_names": label_names}},
    )


def released_predictions(
    predictions: str | Path, suite: str, items: pd.DataFrame
) -> tuple[pd.DataFrame, list[ModelRecord]]:
    """Released prediction files instead of a model: one table and record per seed."""
    from tacit.probes.nli.predict import prediction_runs, read_predictions

    tables, records = [], []
    for seed, files in prediction_runs(predictions, suite):
        table, record = read_predictions(files, items)
        tables.append(table.assign(model=str(predictions), seed=seed))
        model: dict[str, Any] = {"name": str(predictions), "seed": seed, "mode": "predictions"}
        records.append(cast(ModelRecord, {**model, **record}))
    return pd.concat(tables, ignore_index=True), records


def items_with_predictions(
    items: pd.DataFrame, predicted: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per item x model x seed with a prediction: the item's fields, then the
    prediction and whether it is correct; and per model and seed, how many items had none
    (left out)."""
    columns = ["item_id", "predicted", *PROB_COLUMNS]
    if "prompt" in predicted:
        columns.append("prompt")
    tables = []
    for (name, seed), table in predicted.groupby(["model", "seed"], sort=False):
        merged = items.merge(table[columns], on="item_id", how="left", validate="one_to_one")
        merged.insert(0, "seed", seed)
        merged.insert(0, "model", name)
        tables.append(merged)
    rows = pd.concat(tables, ignore_index=True)
    unscored = rows["predicted"].isna()
    dropped = rows[unscored].groupby(["model", "seed"], sort=False).size()
    rows = rows[~unscored].reset_index(drop=True)
    binary_gold = rows["gold"] == NON_ENTAILMENT  # IMPLI: neutral and contradiction both right
    correct = (rows["gold"] == rows["predicted"]) | (
        binary_gold & (rows["predicted"] != ENTAILMENT)
    )
    rows.insert(rows.columns.get_loc("predicted") + 1, "correct", correct)
    return rows, dropped.rename("items").reset_index()


def nli_summary(
    rows: pd.DataFrame, suite: str, from_predictions: bool
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The suite's breakdowns (beside NOPE's paper numbers for its released predictions)."""
    from tacit.pragmatics.nope import PAPER_LABEL, PAPER_ROBERTA_LARGE
    from tacit.probes.nli.report import summarize_nli

    paper = PAPER_ROBERTA_LARGE if suite == "nope" and from_predictions else None
    summary, by_seed = summarize_nli(rows, SUITES[suite].summarize, paper)
    return summary, by_seed, {"paper_column": PAPER_LABEL if paper is not None else None}


def data_files_record(root: Path, loaded: pd.DataFrame, rows: pd.DataFrame) -> list[dict]:
    """Each data file read: its path inside --data, sha256, items read and items scored."""
    scored = rows.drop_duplicates("item_id")["source"].value_counts()
    return [
        {
            "file": source,
            "sha256": file_sha256(root / source if root.is_dir() else root),
            "items": int(count),
            "scored": int(scored.get(source, 0)),
        }
        for source, count in loaded["source"].value_counts(sort=False).sort_index().items()
    ]
