"""A run in lm-evaluation-harness's layout (`probe export RUN --to lm-eval`), which that
harness's own tools, Zeno and a Hub results dataset read: a folder per model with
`results_<date>.json` and a `samples_<task>_<date>.jsonl` per task. A task is a summary row's
condition (`tacit_retrieve_top_decreasing_all_n_props_3`); its metrics are the probe's
declared ones under `<metric>,none` (tacit's values, not recomputed), `<metric>_stderr,none`
the bootstrap interval's width / (2 x 1.96); a sample is a row of the rows file. The date is
the run's end, so exporting twice writes the same files. docs/run-directory.md has the mapping.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.core.files import write_files
from tacit.probes.report import report_of

if TYPE_CHECKING:
    import pandas as pd

    from tacit.probes.base import Metric, Probe
    from tacit.results.result import ProbeResult

Z_95 = 1.959963984540054  # a 95% normal interval is the estimate +- Z_95 standard errors
FILTER = "none"  # lm-eval's filter name where no filter is applied


@dataclass
class Export:
    """What an export wrote: the folder, its files, and what it could not map (notes)."""

    out: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join([f"written to {self.out} ({len(self.files)} files)", *self.notes])


def slug(value: object) -> str:
    """A name lm-eval's file names and Hub configs take: lower case, `_` for anything else."""
    return re.sub(r"\W+", "_", str(value).lower()).strip("_")


def _key_part(key: str, value: object) -> str:
    """A condition's value in a task name: text as it is, a number or truth value named."""
    return slug(value) if isinstance(value, str) else slug(f"{key}_{value}")


def sanitize_model_name(name: str) -> str:
    """lm-eval's folder name for a model (lm_eval.utils.sanitize_model_name)."""
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def _hash(text: str) -> str:
    """lm-eval's hash_string: the hex sha256 of the text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _date_id(manifest: dict[str, Any]) -> str:
    """The run's end as lm-eval dates its files (`2025-01-31T12-00-00`: ISO, `:` as `-`)."""
    stamp = str(manifest.get("finished") or manifest.get("started") or "")
    try:
        when = datetime.fromisoformat(stamp).replace(tzinfo=None)
    except ValueError:
        raise TacitError(
            f"the run's manifest has no end time to date its files ({stamp!r})"
        ) from None
    return when.isoformat().replace(":", "-")


def _number(value: Any) -> float | None:
    """A summary value as JSON takes it (NaN: None)."""
    number = float(value)
    return None if number != number else number


def _condition_keys(probe: Probe, summary: pd.DataFrame) -> list[str]:
    """The summary columns that tell one task from another: the probe's keys (not the model,
    nor a column naming the metric), and any text column that still varies within them (the
    `template` of a run of paraphrases)."""
    named_by = {m.named_by for m in _metrics(probe)}
    keys = [k for k in probe.keys if k != "model" and k not in named_by]
    varying = [
        column
        for column in summary.columns
        if column not in (*keys, "model", *named_by)
        and summary[column].dtype.kind in "OT"  # text
        and (summary.groupby(["model", *keys], sort=False)[column].nunique() > 1).any()
    ]
    return keys + varying


def _metrics(probe: Probe) -> list[Metric]:
    return [probe.primary, *probe.metrics]


def _metric_values(metric: Metric, row: pd.Series) -> dict[str, Any] | None:
    """A summary row's metric under lm-eval's keys, with its stderr; None where the summary
    has no such column."""
    if metric.column not in row.index:
        return None
    name = slug(row[metric.named_by]) if metric.named_by else metric.column
    value = _number(row[metric.column])
    stderr: float | str | None = "N/A"
    if metric.low in row.index and metric.high in row.index:
        low, high = _number(row[metric.low]), _number(row[metric.high])
        if low is not None and high is not None:
            stderr = (high - low) / (2 * Z_95)
    return {
        "name": name,
        f"{name},{FILTER}": value,
        f"{name}_stderr,{FILTER}": stderr,
        "ci95": [_number(row[metric.low]), _number(row[metric.high])]
        if metric.low in row.index and metric.high in row.index
        else None,
    }


def _samples(
    probe: Probe, rows: pd.DataFrame, condition: dict[str, Any], names: dict[str, str]
) -> list[dict[str, Any]]:
    """lm-eval samples of one task: the rows of the rows file whose key values match."""
    chosen = rows
    for key, value in condition.items():
        if (rows[key] == value).any():  # a value no row holds (a pooled `all`): every row
            chosen = chosen[chosen[key] == value]
    prompt_column, target_column = report_of(probe).sample_columns
    samples = []
    for doc_id, (_, row) in enumerate(chosen.iterrows()):
        doc = {k: _plain(v) for k, v in row.items() if k != "model"}
        prompt = str(row[prompt_column]) if prompt_column in row.index else ""
        target = str(row[target_column]) if target_column in row.index else ""
        scores = {  # every metric of the task, None where tacit keeps no per-prompt value
            names[m.column]: _plain(row[m.row]) if m.row in row.index else None
            for m in _metrics(probe)
            if m.column in names
        }
        sample = {
            "doc_id": doc_id,
            "doc": doc,
            "target": target,
            "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": target}},
            "resps": [],
            "filtered_resps": [],
            "filter": FILTER,
            "metrics": [name for name, value in scores.items() if value is not None],
            "doc_hash": _hash(json.dumps(doc, indent=2, ensure_ascii=False, default=str)),
            "prompt_hash": _hash(prompt),
            "target_hash": _hash(target),
            **scores,
        }
        samples.append(sample)
    return samples


def _plain(value: Any) -> Any:
    """A table cell as JSON takes it (numpy numbers as Python's, NaN as None)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def _model_config(manifest: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """lm-eval's `config` for one model (its _EvalConfig), from the run's manifest."""
    options = manifest.get("options") or {}
    bootstrap = options.get("bootstrap") if isinstance(options, dict) else None
    return {
        "model": str(record.get("source") or record.get("name")),
        "model_args": f"pretrained={record.get('name')}",
        "model_dtype": (record.get("load") or {}).get("dtype", manifest.get("dtype")),
        "model_revision": record.get("resolved_revision") or record.get("revision"),
        "batch_size": str(manifest.get("batch_size")),
        "batch_sizes": [record["batch_size_used"]] if record.get("batch_size_used") else [],
        "device": record.get("device") or manifest.get("device"),
        "limit": (manifest.get("limit") or {}).get("first"),
        "bootstrap_iters": (bootstrap or {}).get("resamples", 0),
        "random_seed": manifest.get("seed"),
    }


def _task_config(
    task: str, probe: str, version: str | None, condition: dict[str, Any]
) -> dict[str, Any]:
    """A task's entry in lm-eval's `configs` (its metric_list filled in by the caller)."""
    return {
        "task": task,
        "tag": ["tacit", f"tacit_{probe}"],
        "output_type": "loglikelihood",
        "num_fewshot": 0,
        "metric_list": [],
        "metadata": {"version": version, "tacit": {"probe": probe, **condition}, "ci95": {}},
    }


def lm_eval_files(
    result: ProbeResult, *, run_name: str | None = None
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """The files of an lm-eval export: model folder -> {file name: text}, and notes on what
    could not be mapped (tasks without samples)."""
    from tacit.probes import registry

    manifest: dict[str, Any] = dict(result.manifest)
    probe = registry.of_run(result.manifest, run_name or "result")
    summary, rows = result.summary, result.prompts
    keys = _condition_keys(probe, summary)
    date = _date_id(manifest)
    version = (manifest.get("software") or {}).get("tacit")
    records = {str(r.get("name")): dict(r) for r in manifest.get("models", [])}
    started, finished = manifest.get("started"), manifest.get("finished")
    seconds = None
    if started and finished:
        delta = datetime.fromisoformat(str(finished)) - datetime.fromisoformat(str(started))
        seconds = str(delta.total_seconds())
    unmatched = [k for k in keys if k not in rows.columns]
    folders: dict[str, dict[str, str]] = {}
    without_samples: list[str] = []
    for model, model_rows in summary.groupby("model", sort=False):
        model_name = str(model)
        record = records.get(model_name, {"name": model_name})
        results: dict[str, Any] = {}
        configs: dict[str, Any] = {}
        higher: dict[str, Any] = {}
        counts: dict[str, Any] = {}
        hashes: dict[str, str] = {}
        files: dict[str, str] = {}
        mine = rows[rows["model"] == model] if "model" in rows.columns else rows
        for _, row in model_rows.iterrows():
            condition = {k: _plain(row[k]) for k in keys}
            task = "_".join(["tacit", probe.name, *(_key_part(k, v) for k, v in condition.items())])
            found = [(m, v) for m in _metrics(probe) if (v := _metric_values(m, row)) is not None]
            entry = results.setdefault(task, {"name": task, "alias": task, "sample_len": 0})
            config = configs.setdefault(task, _task_config(task, probe.name, version, condition))
            for metric, values in found:  # a long-form summary: a row per metric of a task
                entry.update({k: v for k, v in values.items() if "," in k})
                higher.setdefault(task, {})[values["name"]] = metric.greater_is_better
                config["metric_list"].append(
                    {
                        "metric": values["name"],
                        "aggregation": metric.aggregation,
                        "higher_is_better": metric.greater_is_better,
                    }
                )
                if values["ci95"] is not None:
                    config["metadata"]["ci95"][values["name"]] = values["ci95"]
            names = {m.column: values["name"] for m, values in found}
            samples = [] if unmatched else _samples(probe, mine, condition, names)
            count = probe.primary.count
            total = _number(row[count]) if count in row.index else None
            entry["sample_len"] = len(samples) or int(total or 0)
            counts[task] = {"original": entry["sample_len"], "effective": entry["sample_len"]}
            if samples:
                files[f"samples_{task}_{date}.jsonl"] = "".join(
                    json.dumps(s, ensure_ascii=False, default=str) + "\n" for s in samples
                )
                hashes[task] = _hash(
                    "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in samples)
                )
            elif task not in without_samples:
                without_samples.append(task)
        name = sanitize_model_name(str(record.get("source") or model_name))
        document: dict[str, Any] = {
            "results": results,
            "group_subtasks": {task: [] for task in results},
            "configs": dict(sorted(configs.items())),
            "versions": {task: version for task in sorted(results)},
            "n-shot": {task: 0 for task in sorted(results)},
            "higher_is_better": dict(sorted(higher.items())),
            "n-samples": counts,
            "config": _model_config(manifest, record),
            "git_hash": None,
            "date": datetime.fromisoformat(str(started)).timestamp() if started else None,
            "task_hashes": hashes,
            "model_source": "hf" if record.get("class") else record.get("kind"),
            "model_name": str(record.get("source") or model_name),
            "model_name_sanitized": name,
            "total_evaluation_time_seconds": seconds,
            "tacit": {"run": run_name, "manifest": manifest},
        }
        files[f"results_{date}.json"] = json.dumps(
            document, indent=2, ensure_ascii=False, default=str
        )
        folders[name] = files
    notes = []
    if without_samples:
        why = (
            f"its rows file has no {', '.join(unmatched)} column to tell them apart"
            if unmatched
            else "no row of the rows file is theirs"
        )
        shown = ", ".join(without_samples[:3]) + (", ..." if len(without_samples) > 3 else "")
        notes.append(f"note: no samples file for {len(without_samples)} task(s) ({shown}): {why}")
    return folders, notes


def write_lm_eval(result: ProbeResult, out: Path, *, run_name: str | None = None) -> Export:
    """Write an lm-eval export under `out`: each model's folder is written whole."""
    from tacit.results.rundir import prepare_run_dir

    folders, notes = lm_eval_files(result, run_name=run_name)
    done = Export(out, notes=notes)
    for folder, files in folders.items():
        directory = prepare_run_dir(out / folder)
        try:
            write_files(directory, files, point="export")
        except OSError as err:
            raise TacitError(
                f"{directory}: cannot write the export there ({err.strerror})"
            ) from None
        done.files += [directory / name for name in files]
    return done
