"""The Python API for the pragmatics suites: tacit.nli() (IMPPRES, NOPE, IMPLI) and
tacit.pragmeval(); each returns a ProbeResult like the norms-based probes."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from tacit import paths
from tacit.api import ProbeResult, RunOptions
from tacit.errors import TacitError
from tacit.files import file_sha256
from tacit.pragmatics import SUITES
from tacit.pragmatics.labels import ENTAILMENT, NON_ENTAILMENT
from tacit.pragmatics.nope import PAPER_LABEL as NOPE_PAPER_LABEL
from tacit.pragmatics.nope import PAPER_ROBERTA_LARGE as PAPER_NOPE
from tacit.pragmatics.pragmeval import (
    PAPER_BERT_AVERAGE,
    Config,
    load_config,
    select_configs,
)
from tacit.probes.cloze import check_template as check_fields
from tacit.probes.nli import (
    ClozeSetup,
    NLIClassifier,
    check_template,
    cloze_predictions,
    model_kind,
    parse_verbalizer,
    prediction_runs,
    read_predictions,
)
from tacit.probes.pragmeval import (
    C_GRID,
    CLOZE_DEFAULTS,
    FEATURE_TEMPLATES,
    FeatureCache,
    FrozenEncoder,
    cloze_config,
    cloze_setup,
    linear_config,
    model_fingerprint,
    results_table,
    texts_to_encode,
)
from tacit.results.manifest import command_line, now, software
from tacit.results.nli_report import summarize_nli
from tacit.results.pragmeval_report import read_reference, summarize_pragmeval
from tacit.scorer import MaskedLMScorer, resolve_revision


def nli(
    suite: str,
    data: str | Path,
    models: Sequence[str] = (),
    *,
    predictions: str | Path | None = None,
    mode: str = "auto",
    cloze: ClozeSetup = ClozeSetup(),  # noqa: B008 (frozen dataclass: a safe default)
    label_names: Sequence[str] | None = None,
    max_items: int | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run a pragmatics suite (imppres, nope, impli) on models or on released predictions.

    Each model is asked in cloze mode (a masked LM: template + verbalizer) or classifier mode (a
    sequence classifier trained on NLI); `mode="auto"` tells them apart by the checkpoint's
    architecture. With `predictions`, a file or a folder of seed folders is read instead.
    Items are reported in the suite paper's breakdowns, per model, averaged over seeds.
    """
    if suite not in SUITES:
        raise TacitError(f"--suite {suite!r}: expected one of {', '.join(SUITES)}")
    if mode not in ("auto", "cloze", "classifier"):
        raise TacitError(f"--mode {mode!r}: expected auto, cloze or classifier")
    if bool(models) == (predictions is not None):
        raise TacitError("give either --model (one or more) or --predictions, not both or neither")
    if max_items is not None and max_items < 1:
        raise TacitError(f"--max-items {max_items}: must be at least 1")
    options = RunOptions(**run_options)
    started = now()
    data_path = Path(data)
    all_items = SUITES[suite].load(data_path)
    items, loaded = all_items, len(all_items)
    if max_items is not None and max_items < loaded:
        keep = np.random.default_rng(options.seed).choice(loaded, size=max_items, replace=False)
        items = items.iloc[np.sort(keep)].reset_index(drop=True)
    runs, records = [], []
    if predictions is not None:
        for seed, files in prediction_runs(predictions, suite):
            table, record = read_predictions(files, items)
            runs.append((str(predictions), seed, table))
            records.append({"model": str(predictions), "seed": seed, "mode": "predictions",
                            **record})  # fmt: skip
    else:
        if mode == "cloze" or mode == "auto":
            check_template(cloze.template)
            parse_verbalizer(cloze.verbalizer)
        for name in dict.fromkeys(models):
            kind = model_kind(name, options.revision) if mode == "auto" else mode
            loader = dict(revision=options.revision, device=options.device, dtype=options.dtype,
                          batch_size=options.batch_size, compile=options.compile)  # fmt: skip
            if kind == "classifier":
                model: Any = NLIClassifier(name, label_names=label_names, **loader)
                table, record = model.predictions(items, progress=options.progress)
            else:
                model = MaskedLMScorer(name, **loader)
                table, record = cloze_predictions(model, items, cloze, progress=options.progress)
            device = str(model.device)
            records.append({"model": name, "seed": "", "mode": kind, "device": device,
                            "revision": options.revision,
                            "resolved_revision": resolve_revision(name, options.revision),
                            "batch_size_used": model.batch_size,  # smaller if memory ran out
                            **record})  # fmt: skip
            runs.append((name, "", table))
            del model
            gc.collect()
    tables = []
    for name, seed, table in runs:
        merged = items.merge(table, on="item_id", how="left", validate="one_to_one")
        merged.insert(0, "seed", seed)
        merged.insert(0, "model", name)
        tables.append(merged)
    rows = pd.concat(tables, ignore_index=True)
    unscored = rows["predicted"].isna()
    dropped = (
        rows[unscored].groupby(["model", "seed"], sort=False).size().rename("items").reset_index()
    )
    rows = rows[~unscored].reset_index(drop=True)
    if rows.empty:
        raise TacitError(f"no item of {data_path} got a prediction: nothing to report")
    binary_gold = rows["gold"] == NON_ENTAILMENT  # IMPLI: neutral and contradiction both right
    correct = (rows["gold"] == rows["predicted"]) | (
        binary_gold & (rows["predicted"] != ENTAILMENT)
    )
    rows.insert(rows.columns.get_loc("predicted") + 1, "correct", correct)
    paper = PAPER_NOPE if suite == "nope" and predictions is not None else None
    summary, by_seed = summarize_nli(rows, SUITES[suite].summarize, paper)
    manifest = {
        "probe": "nli",
        "suite": suite,
        "command": command_line(),
        "software": software(),
        "data": {
            "path": str(data_path),
            "files": _data_files_record(data_path, all_items, rows),
            "items_loaded": loaded,
            "items_sampled": len(items) if max_items is not None else None,
        },
        "models": records,
        "mode": mode if predictions is None else "predictions",
        "cloze": {
            "template": cloze.template,
            "verbalizer": cloze.verbalizer,
            "calibrate": cloze.calibrate,
        },  # fmt: skip
        "dtype": options.dtype,
        "batch_size": options.batch_size,
        "compile": options.compile,
        "seed": options.seed,
        "dropped": {
            "not_sampled": loaded - len(items),
            "without_prediction": dropped.to_dict("records"),
        },
        "paper_column": NOPE_PAPER_LABEL if paper is not None else None,
        "started": started,
        "finished": now(),
    }
    return ProbeResult(
        rows, summary, None, manifest, extra={"summary_by_seed": by_seed}, rows_file="items.csv"
    )


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


def pragmeval(
    data: str | Path,
    models: Sequence[str],
    *,
    tasks: Sequence[str] | None = None,
    mode: str = "linear",
    pooling: str = "mask",
    template: str | None = None,
    verbalizer: str | None = None,
    max_train: int | None = None,
    cache_dir: str | Path | None = None,
    reference: str | Path | None = None,
    **run_options: Any,
) -> ProbeResult:
    """PragmEval on frozen models: a linear probe per configuration, or zero-shot cloze.

    Linear: each text's hidden state at the `<mask>` of `template` (default `{sentence1}
    <mask> {sentence2}` or `{sentence} <mask>`), or the mean over its tokens (`pooling="mean"`),
    cached under `cache_dir`; a logistic regression with C chosen on dev; test accuracy (macro-F1
    for SwitchBoard and MRDA). Cloze: the configuration's template and verbalizer (defaults in
    tacit.probes.pragmeval.CLOZE_DEFAULTS), for configurations with 2 or 3 labels.
    """
    if mode not in ("linear", "cloze"):
        raise TacitError(f"--mode {mode!r}: expected linear or cloze")
    if not models:
        raise TacitError("no --model given")
    if max_train is not None and max_train < 2:
        raise TacitError(f"--max-train {max_train}: must be at least 2")
    if pooling not in ("mask", "mean"):
        raise TacitError(f"--pooling {pooling!r}: expected mask or mean")
    if verbalizer is not None and mode != "cloze":
        raise TacitError("--verbalizer is for --mode cloze")
    options = RunOptions(**run_options)
    started = now()
    ref = read_reference(reference) if reference is not None else None
    names = select_configs(data, list(tasks) if tasks else None)
    configs = {name: load_config(data, name) for name in names}
    skipped = {}
    if mode == "cloze" and (template is None or verbalizer is None):
        for name, config in list(configs.items()):
            if name not in CLOZE_DEFAULTS:
                skipped[name] = (
                    f"{len(config.labels)} labels: no default cloze template and verbalizer "
                    "(cloze defaults cover the 2- and 3-label tasks; give --template and "
                    "--verbalizer)"
                )
                del configs[name]
    if not configs:
        reasons = "; ".join(f"{k}: {v}" for k, v in skipped.items())
        raise TacitError(f"no configuration left to run ({reasons})")
    for config in configs.values():  # bad templates fail before any model loads
        if mode == "cloze":
            cloze_setup(config, template, verbalizer)
        elif template is not None and pooling == "mask":
            check_fields(template_for(config, template), config.fields)
    rows, predictions, records = [], [], []
    cache_root = paths.cache_dir(cache_dir)
    total = sum(texts_to_encode(c, max_train) for c in configs.values())
    for name in dict.fromkeys(models):
        bar = tqdm(
            total=total, desc=f"encoding {name}", unit="text",
            disable=not options.progress or mode != "linear",
        )  # fmt: skip
        encoder = FrozenEncoder(
            lambda name=name: MaskedLMScorer(
                name, revision=options.revision, device=options.device, dtype=options.dtype,
                batch_size=options.batch_size, compile=options.compile,
            ),
            FeatureCache(
                cache_root, model_fingerprint(name, resolve_revision(name, options.revision)),
                options.dtype, pooling,
            ),
            pooling,
            bar,
        )  # fmt: skip
        outcomes = {}
        for config_name, config in configs.items():
            if mode == "linear":
                outcomes[config_name] = linear_config(
                    config, encoder, template_for(config, template, pooling), max_train,
                    options.seed,
                )  # fmt: skip
            else:
                chosen, words = cloze_setup(config, template, verbalizer)
                outcomes[config_name] = cloze_config(
                    config, encoder.scorer, chosen, words, options.progress
                )
            test = config.splits["test"]
            predictions.append(
                pd.DataFrame({"model": name, "config": config_name, "row": np.arange(len(test)),
                              "label": test["label"].to_numpy(),
                              "predicted": outcomes[config_name].predicted})
            )  # fmt: skip
        bar.close()
        table = results_table(outcomes)
        table.insert(0, "model", name)
        rows.append(table)
        records.append({
            "model": name,
            "revision": options.revision,
            "resolved_revision": resolve_revision(name, options.revision),
            "device": encoder.device,
            "batch_size_used": encoder.batch_size_used,
            "feature_cache": {"directory": str(encoder.cache.directory),
                              "hits": encoder.cache.hits,
                              "misses": encoder.cache.misses} if mode == "linear" else None,
            "texts_cut_to_fit": encoder.cut
            + sum(o.record.get("texts_cut_to_fit", 0) for o in outcomes.values()),
            "configs": {k: {"setting": o.setting, **o.record} for k, o in outcomes.items()},
        })  # fmt: skip
        del encoder
        gc.collect()
    per_config = pd.concat(rows, ignore_index=True)
    summary = summarize_pragmeval(per_config, ref)
    manifest = {
        "probe": "pragmeval",
        "command": command_line(),
        "software": software(),
        "data": {
            "path": str(data),
            "files": [
                {
                    "file": f"{c.name}/{split}.tsv",
                    "sha256": file_sha256(path),
                    "rows": len(c.splits[split]),
                }
                for c in configs.values()
                for split, path in c.files.items()
            ],
        },  # fmt: skip
        "mode": mode,
        "pooling": pooling if mode == "linear" else None,
        "template": template,
        "max_train": max_train,
        "c_grid": list(C_GRID) if mode == "linear" else None,
        "models": records,
        "skipped_configs": skipped,
        "reference": str(reference) if reference is not None else None,
        "paper_bert_average": PAPER_BERT_AVERAGE,
        "dtype": options.dtype,
        "batch_size": options.batch_size,
        "compile": options.compile,
        "seed": options.seed,
        "started": started,
        "finished": now(),
    }
    return ProbeResult(
        per_config, summary, None, manifest, extra={"predictions": pd.concat(predictions)},
        rows_file="configs.csv",
    )  # fmt: skip


def template_for(config: Config, template: str | None, pooling: str = "mask") -> str:
    """The features template of a configuration: the user's, or the default for its fields;
    mean pooling reads the texts alone, joined by a space."""
    if pooling == "mean":
        return " ".join(f"{{{field}}}" for field in config.fields)
    return template or FEATURE_TEMPLATES[config.fields]
