"""Running PragmEval: which configurations run (and which are skipped, and why), and one
model's pass over them as the engine's work (linear probes on cached features, which load the
model only for features not yet cached, or zero-shot cloze)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.base import Scored, Work
from tacit.ask.cloze import CLOZE_NEEDS
from tacit.core import paths
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.models.base import Needs

if TYPE_CHECKING:
    from tacit.probes.pragmeval.options import PragmevalOptions


def configurations(
    data: str | Path,
    tasks: Sequence[str] | None,
    mode: str,
    pooling: str,
    template: str | None,
    verbalizer: str | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The configurations to run, and those skipped with the reason; bad templates fail here,
    before any model loads."""
    from tacit.ask.cloze import check_template
    from tacit.pragmatics.pragmeval import load_config, select_configs
    from tacit.probes.pragmeval.frozen import CLOZE_DEFAULTS, cloze_setup, template_for

    names = select_configs(data, list(tasks) if tasks else None)
    configs = {name: load_config(data, name) for name in names}
    skipped = {}
    if mode == "cloze" and (template is None or verbalizer is None):
        for name, config in list(configs.items()):
            if name not in CLOZE_DEFAULTS:
                skipped[name] = (
                    f"{len(config.labels)} labels: no default cloze template and verbalizer "
                    f"(cloze defaults cover the 2- and 3-label tasks; give {option('--template')} "
                    f"and {option('--verbalizer')})"
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


@dataclass
class Pass:
    """What each model's pass leaves for the manifest and predictions.csv, by model name."""

    predictions: dict[str, pd.DataFrame] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)


def pragmeval_work(
    configs: dict[str, Any], values: PragmevalOptions, seed: int, progress: bool
) -> tuple[Work, Pass]:
    """Every configuration of one model per pass: the engine hands `score` the model's handle
    (lazy: a model whose features are all cached never loads)."""
    kept = Pass()
    rows = pd.DataFrame({"config": list(configs)})

    def score(model: Any, chunk: pd.DataFrame, bar: Any) -> Scored:
        chosen = {name: configs[name] for name in chunk["config"]}
        table, predicted, record = run_model(model, chosen, values, seed, progress)
        kept.predictions[model.name] = predicted
        kept.records[model.name] = record
        bar.update(len(chunk))
        return Scored(table.set_axis(chunk.index))

    def finish(model: Any, table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
        return table, kept.records.get(model.name, {})

    needs = CLOZE_NEEDS if values.mode == "cloze" else Needs.of("encode", asks="features")
    work = Work(
        rows,
        "config",
        score,
        needs,
        after_model=finish,
        unit="configuration",
        lazy=True,
    )
    return work, kept


def run_model(
    model: Any, configs: dict[str, Any], values: PragmevalOptions, seed: int, progress: bool
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """One model (its handle) on every configuration: the results table, the test predictions
    and the model's record."""
    from tqdm.auto import tqdm

    from tacit.hub.access import resolve_revision
    from tacit.probes.pragmeval.frozen import (
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

    mode, pooling, template = values.mode, values.pooling, values.template
    verbalizer, max_train = values.verbalizer, values.max_train
    total = sum(texts_to_encode(c, max_train) for c in configs.values())
    bar = tqdm(
        total=total,
        desc=f"encoding {model.name}",
        unit="text",
        leave=False,
        disable=not progress or mode != "linear",
    )
    # its own loading options, the run's (a scorer in memory: its name read as a model's text)
    spec = model.spec or model.options.model_spec(model.name)
    fingerprint = model_fingerprint(spec.name, resolve_revision(spec.name, spec.revision))
    if load := {k: v for k, v in spec.given().items() if k not in ("revision", "dtype")}:
        fingerprint["load"] = load  # an adapter, remote code, ...: other features
    cache = FeatureCache(paths.cache_dir(values.cache_dir), fingerprint, str(spec.dtype), pooling)
    encoder = FrozenEncoder(model, cache, pooling, bar)
    outcomes, predictions = {}, []
    for name, config in configs.items():
        if mode == "linear":
            outcomes[name] = linear_config(
                config, encoder, template_for(config, template, pooling), max_train, seed
            )
        else:
            chosen, words = cloze_setup(config, template, verbalizer)
            outcomes[name] = cloze_config(config, model.scorer, chosen, words, progress)
        test = config.splits["test"]
        predictions.append(
            pd.DataFrame(
                {
                    "model": model.name,
                    "config": name,
                    "row": np.arange(len(test)),
                    "label": test["label"].to_numpy(),
                    "predicted": outcomes[name].predicted,
                }
            )
        )
    bar.close()
    table = results_table(outcomes)
    table.insert(0, "model", model.name)
    record = {
        "feature_cache": {
            "directory": str(cache.directory),
            "hits": cache.hits,
            "misses": cache.misses,
            "not_written": cache.unwritten,
        }
        if mode == "linear"
        else None,
        "texts_cut_to_fit": encoder.cut
        + sum(o.record.get("texts_cut_to_fit", 0) for o in outcomes.values()),
        "configs": {k: {"setting": o.setting, **o.record} for k, o in outcomes.items()},
    }
    return table, pd.concat(predictions), record
