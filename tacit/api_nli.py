"""The Python API of the pragmatic inference suites: tacit.nli() runs IMPPRES, NOPE or IMPLI on
masked LMs (cloze), NLI classifiers or released predictions, and returns a ProbeResult like
every probe."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.files import file_sha256
from tacit.core.manifest import now
from tacit.core.options import (
    NLI_MODES,
    NLIMode,
    RunOptions,
    check_at_least,
    check_choice,
)
from tacit.engine.runner import ModelHandle, Work, run_manifest, run_models
from tacit.pragmatics import SUITES
from tacit.pragmatics.labels import ENTAILMENT, NON_ENTAILMENT, PROB_COLUMNS
from tacit.probes.nli import ClozeSetup
from tacit.results.nli_figure import nli_figure, nli_panels
from tacit.results.result import ProbeResult

NLI_KINDS = {
    "auto": ("masked", "classifier", "causal"),
    "cloze": ("masked", "causal"),
    "classifier": ("classifier",),
}
NLI_MODE_OF_KIND = {"masked": "cloze", "causal": "cloze", "classifier": "classifier"}


def _nli_work(items: pd.DataFrame, mode: str, cloze: ClozeSetup, label_names: Any) -> Work:
    """Score each item with a model: cloze for masked LMs, classification for classifiers."""
    from tacit.models.classifier import NLIClassifier
    from tacit.probes.nli import classifier_scores, cloze_finish, cloze_prompts, cloze_scores

    rows = items[["item_id", "premise", "hypothesis"]].copy()
    rows["pair"] = rows["premise"] + "\t" + rows["hypothesis"]  # the same pair is scored once
    if mode != "classifier":
        rows["prompt"] = cloze_prompts(items, cloze)

    def score(scorer, chunk, bar):
        if isinstance(scorer, NLIClassifier):
            return classifier_scores(scorer, chunk, bar)
        return cloze_scores(scorer, chunk, cloze, bar)

    def finish(model: ModelHandle, table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
        scorer = model.scorer
        record: dict[str, Any] = {"seed": "", "mode": NLI_MODE_OF_KIND[scorer.kind]}
        if isinstance(scorer, NLIClassifier):
            record.update(labels=scorer.labels_record(), max_tokens=scorer.max_tokens)
            return table, record
        table, extra = cloze_finish(model.scorer, table, cloze)
        return table, {**record, **extra}

    return Work(rows, "pair", score, NLI_KINDS[mode], finish, unit="pair",
                load_options={"classifier": {"label_names": label_names}})  # fmt: skip


def nli(
    suite: str,
    data: str | Path,
    models: Sequence[str] = (),
    *,
    predictions: str | Path | None = None,
    mode: NLIMode = "auto",
    cloze: ClozeSetup = ClozeSetup(),  # noqa: B008 (frozen dataclass: a safe default)
    label_names: Sequence[str] | None = None,
    max_items: int | None = None,
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run a pragmatics suite (imppres, nope, impli) on models or on released predictions.

    Each model is asked in cloze mode (a masked LM: template + verbalizer) or classifier mode (a
    sequence classifier trained on NLI); `mode="auto"` tells them apart by the checkpoint's
    architecture. With `predictions`, a file or a folder of seed folders is read instead.
    Items are reported in the suite paper's breakdowns, per model, averaged over seeds.
    """
    from tacit.results.nli_report import nli_report

    check_choice("--suite", suite, SUITES)
    check_choice("--mode", mode, NLI_MODES)
    if bool(models) == (predictions is not None):
        raise TacitError("give either --model (one or more) or --predictions, not both or neither")
    check_at_least("--max-items", max_items, 1)
    run = RunOptions.build(options, run_options)
    started = now()
    data_path = Path(data)
    all_items = SUITES[suite].load(data_path)
    items, loaded = all_items, len(all_items)
    if max_items is not None and max_items < loaded:
        keep = np.random.default_rng(run.seed).choice(loaded, size=max_items, replace=False)
        items = items.iloc[np.sort(keep)].reset_index(drop=True)
    if predictions is not None:
        predicted, records = _released_predictions(predictions, suite, items)
    else:
        if mode != "classifier":
            cloze.check()
        work = _nli_work(items, mode, cloze, label_names)
        predicted, records = run_models(models, run, work, probe="nli",
                                        plan={"suite": suite, "cloze": cloze})  # fmt: skip
        predicted["seed"] = ""
    rows, dropped = _items_with_predictions(items, predicted)
    if rows.empty:
        raise TacitError(f"no item of {data_path} got a prediction: nothing to report")
    summary, by_seed, manifest = _nli_summary(rows, suite, predictions is not None)
    manifest = run_manifest(
        "nli", run, records, started, suite=suite, **manifest,
        data={
            "path": str(data_path),
            "files": _data_files_record(data_path, all_items, rows),
            "items_loaded": loaded,
            "items_sampled": len(items) if max_items is not None else None,
        },
        mode=mode if predictions is None else "predictions",
        cloze={"template": cloze.template, "verbalizer": cloze.verbalizer,
               "calibrate": cloze.calibrate},
        dropped={"not_sampled": loaded - len(items),
                 "without_prediction": dropped.to_dict("records")},
    )  # fmt: skip
    text, notes = nli_report(summary, manifest)
    paper = manifest["paper_column"]
    source = f"diamonds: the paper ({paper})" if paper else ""
    figures = {"nli.png": lambda: nli_figure(summary, source)} if nli_panels(summary)[0] else {}
    return ProbeResult(rows, summary, None, manifest, extra={"summary_by_seed": by_seed},
                       rows_file="items.csv", text=text, notes=notes, figures=figures)  # fmt: skip


def _released_predictions(
    predictions: str | Path, suite: str, items: pd.DataFrame
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Released prediction files instead of a model: one table and record per seed."""
    from tacit.probes.nli import prediction_runs, read_predictions

    tables, records = [], []
    for seed, files in prediction_runs(predictions, suite):
        table, record = read_predictions(files, items)
        tables.append(table.assign(model=str(predictions), seed=seed))
        records.append({"name": str(predictions), "seed": seed, "mode": "predictions", **record})
    return pd.concat(tables, ignore_index=True), records


def _items_with_predictions(
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


def _nli_summary(
    rows: pd.DataFrame, suite: str, from_predictions: bool
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The suite's breakdowns (beside NOPE's paper numbers for its released predictions)."""
    from tacit.pragmatics.nope import PAPER_LABEL, PAPER_ROBERTA_LARGE
    from tacit.results.nli_report import summarize_nli

    paper = PAPER_ROBERTA_LARGE if suite == "nope" and from_predictions else None
    summary, by_seed = summarize_nli(rows, SUITES[suite].summarize, paper)
    return summary, by_seed, {"paper_column": PAPER_LABEL if paper is not None else None}


def _data_files_record(root: Path, loaded: pd.DataFrame, rows: pd.DataFrame) -> list[dict]:
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
