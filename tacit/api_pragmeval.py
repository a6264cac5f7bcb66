"""The Python API of PragmEval on frozen models: tacit.pragmeval() runs linear probes on cached
features, or zero-shot cloze, and returns a ProbeResult like every probe."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tacit.core import paths
from tacit.core.errors import TacitError
from tacit.core.files import file_sha256
from tacit.core.manifest import now
from tacit.core.options import (
    POOLINGS,
    PRAGMEVAL_MODES,
    Pooling,
    PragmevalMode,
    RunOptions,
    check_at_least,
    check_choice,
)
from tacit.engine.runner import ModelHandle, each_model, run_manifest
from tacit.results.result import ProbeResult


def pragmeval(
    data: str | Path,
    models: Sequence[str],
    *,
    tasks: Sequence[str] | None = None,
    mode: PragmevalMode = "linear",
    pooling: Pooling = "mask",
    template: str | None = None,
    verbalizer: str | None = None,
    max_train: int | None = None,
    cache_dir: str | Path | None = None,
    reference: str | Path | None = None,
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """PragmEval on frozen models: a linear probe per configuration, or zero-shot cloze.

    Linear: each text's hidden state at the `<mask>` of `template` (default `{sentence1}
    <mask> {sentence2}` or `{sentence} <mask>`), or the mean over its tokens (`pooling="mean"`),
    or, for a causal model, at its last token (`pooling="last"`; or `mean`), cached under
    `cache_dir`; a logistic regression with C chosen on dev; test accuracy (macro-F1
    for SwitchBoard and MRDA). Cloze: the configuration's template and verbalizer (defaults in
    tacit.probes.pragmeval.CLOZE_DEFAULTS), for configurations with 2 or 3 labels.
    """
    from tacit.pragmatics.pragmeval import PAPER_BERT_AVERAGE
    from tacit.probes.pragmeval import C_GRID
    from tacit.results.pragmeval_report import (
        pragmeval_figure,
        pragmeval_report,
        read_reference,
        summarize_pragmeval,
    )

    run = _checked(models, mode, pooling, verbalizer, max_train, options, run_options)
    started = now()
    ref = read_reference(reference) if reference is not None else None
    configs, skipped = _configs(data, tasks, mode, pooling, template, verbalizer)
    rows, predictions, records = [], [], []
    for _, model in each_model(models, run, probe="pragmeval", kinds=("masked", "causal")):
        table, predicted, record = _run_model(
            model, configs, run, mode=mode, pooling=pooling, template=template,
            verbalizer=verbalizer, max_train=max_train, cache_root=paths.cache_dir(cache_dir),
        )  # fmt: skip
        rows.append(table)
        predictions.append(predicted)
        records.append(record)
    per_config = pd.concat(rows, ignore_index=True)
    summary = summarize_pragmeval(per_config, ref)
    files = [
        {"file": f"{c.name}/{split}.tsv", "sha256": file_sha256(path),
         "rows": len(c.splits[split])}
        for c in configs.values()
        for split, path in c.files.items()
    ]  # fmt: skip
    manifest = run_manifest(
        "pragmeval", run, records, started,
        data={"path": str(data), "files": files}, mode=mode,
        pooling=pooling if mode == "linear" else None, template=template, max_train=max_train,
        c_grid=list(C_GRID) if mode == "linear" else None, skipped_configs=skipped,
        reference=str(reference) if reference is not None else None,
        paper_bert_average=PAPER_BERT_AVERAGE,
    )  # fmt: skip
    text, notes = pragmeval_report(summary, manifest)
    return ProbeResult(
        per_config, summary, None, manifest, extra={"predictions": pd.concat(predictions)},
        rows_file="configs.csv", text=text, notes=notes,
        figures={"pragmeval.png": lambda: pragmeval_figure(summary)},
    )  # fmt: skip


def _checked(
    models: Sequence[str], mode: str, pooling: str, verbalizer: str | None,
    max_train: int | None, options: RunOptions | None, run_options: dict[str, Any],
) -> RunOptions:  # fmt: skip
    """Check the options before anything is read or loaded; the run's RunOptions."""
    check_choice("--mode", mode, PRAGMEVAL_MODES)
    check_choice("--pooling", pooling, POOLINGS)
    if not models:
        raise TacitError("no --model given")
    check_at_least("--max-train", max_train, 2)
    if verbalizer is not None and mode != "cloze":
        raise TacitError("--verbalizer is for --mode cloze")
    run = RunOptions.build(options, run_options)
    run.refuse("pragmeval", resume="a rerun of the same command reuses every cached feature")
    return run


def _configs(
    data: str | Path, tasks: Sequence[str] | None, mode: str, pooling: str,
    template: str | None, verbalizer: str | None,
) -> tuple[dict[str, Any], dict[str, str]]:  # fmt: skip
    """The configurations to run, and those skipped with the reason; bad templates fail here,
    before any model loads."""
    from tacit.pragmatics.pragmeval import load_config, select_configs
    from tacit.probes.cloze import check_template
    from tacit.probes.pragmeval import CLOZE_DEFAULTS, cloze_setup, template_for

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
    for config in configs.values():
        if mode == "cloze":
            cloze_setup(config, template, verbalizer)
        elif template is not None and pooling == "mask":
            check_template(template_for(config, template), config.fields)
    return configs, skipped


def _run_model(
    model: ModelHandle, configs: dict[str, Any], run: RunOptions, *, mode: str, pooling: str,
    template: str | None, verbalizer: str | None, max_train: int | None, cache_root: Path,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:  # fmt: skip
    """One model on every configuration: the results table, the test predictions and the
    model's record."""
    from tqdm.auto import tqdm

    from tacit.models.runtime import resolve_revision
    from tacit.probes.pragmeval import (
        FeatureCache,
        FrozenEncoder,
        cloze_config,
        cloze_setup,
        linear_config,
        model_fingerprint,
        results_table,
        template_for,
        texts_to_encode,
    )

    total = sum(texts_to_encode(c, max_train) for c in configs.values())
    bar = tqdm(total=total, desc=f"encoding {model.name}", unit="text",
               disable=not run.progress or mode != "linear")  # fmt: skip
    fingerprint = model_fingerprint(model.name, resolve_revision(model.name, run.revision))
    cache = FeatureCache(cache_root, fingerprint, run.dtype, pooling)
    encoder = FrozenEncoder(model, cache, pooling, bar)
    outcomes, predictions = {}, []
    for name, config in configs.items():
        if mode == "linear":
            outcomes[name] = linear_config(
                config, encoder, template_for(config, template, pooling), max_train, run.seed
            )
        else:
            chosen, words = cloze_setup(config, template, verbalizer)
            outcomes[name] = cloze_config(config, model.scorer, chosen, words, run.progress)
        test = config.splits["test"]
        predictions.append(pd.DataFrame({
            "model": model.name, "config": name, "row": np.arange(len(test)),
            "label": test["label"].to_numpy(), "predicted": outcomes[name].predicted,
        }))  # fmt: skip
    bar.close()
    table = results_table(outcomes)
    table.insert(0, "model", model.name)
    record = {
        **model.record(),
        "feature_cache": {"directory": str(cache.directory), "hits": cache.hits,
                          "misses": cache.misses} if mode == "linear" else None,
        "texts_cut_to_fit": encoder.cut
        + sum(o.record.get("texts_cut_to_fit", 0) for o in outcomes.values()),
        "configs": {k: {"setting": o.setting, **o.record} for k, o in outcomes.items()},
    }  # fmt: skip
    return table, pd.concat(predictions), record
