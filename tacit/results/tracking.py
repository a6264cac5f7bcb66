"""A run logged to an experiment tracker: Weights & Biases or MLflow (`--log-to` on every probe
command, `log_to=` in the API, `probe export RUN --to wandb|mlflow` for a finished run).

What is logged, the same for both: the headline metric per model (Probe.headline: the primary
metric at the main condition, `<probe>/<metric>/<model>`), the summary table, the manifest (as
the run's config; in MLflow, its main settings as params and the whole as manifest.json), and,
where the run was saved, the run directory's files as an artifact. Each tracker is set up as
usual: W&B by WANDB_PROJECT, WANDB_MODE (offline: ./wandb/offline-run-*), WANDB_DIR; MLflow by
MLFLOW_TRACKING_URI and MLFLOW_EXPERIMENT_NAME. The package is an extra
(`pip install 'tacit-probe[wandb]'`), imported only here and only when used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.choices import TRACKERS, check_choice
from tacit.core.display import spreadsheet_safe
from tacit.core.errors import TacitError, first_line
from tacit.core.option_names import option

if TYPE_CHECKING:
    from tacit.results.result import ProbeResult


def check_tracker(name: str | None) -> None:
    """A tracker tacit knows whose package is installed; checked before a run starts."""
    if name is None:
        return
    check_choice(option("--log-to"), name, TRACKERS)
    if importlib.util.find_spec(name) is None:
        raise TacitError(
            f"{option('--log-to')} {name}: the {name} package is not installed: "
            f"pip install 'tacit-probe[{name}]'"
        )


def headline(result: ProbeResult) -> dict[str, float]:
    """`<probe>/<metric>/<model>` -> the primary metric at the main condition, models by their
    short labels."""
    from tacit.core.labels import short_labels
    from tacit.probes import registry

    probe = registry.of_run(result.manifest, "the result")
    values = probe.headline(result.summary, result.manifest)
    labels = short_labels(list(values))
    return {
        f"{probe.name}/{probe.primary.column}/{labels[model]}": value
        for model, value in values.items()
    }


def _manifest(result: ProbeResult) -> dict[str, Any]:
    """The manifest as plain JSON values (what a tracker's config takes)."""
    from tacit.core.files import json_text

    loaded: dict[str, Any] = json.loads(json_text(result.manifest))
    return loaded


def _name(result: ProbeResult, run_dir: Path | None) -> str:
    return run_dir.name if run_dir is not None else str(result.manifest.get("probe", "tacit"))


def log_run(result: ProbeResult, to: str, run_dir: str | Path | None = None) -> str:
    """Log a result (and its run directory's files, where it was saved) to `to`, `wandb` or
    `mlflow`; returns where it went, in words."""
    check_tracker(to)
    folder = Path(run_dir) if run_dir is not None else None
    try:
        return _wandb(result, folder) if to == "wandb" else _mlflow(result, folder)
    except Exception as err:  # the tracker's own (a server, a store): said in one line
        saved = f"; the run itself is saved in {folder}" if folder is not None else ""
        raise TacitError(f"{to}: could not log the run ({first_line(err)}){saved}") from None


def _wandb(result: ProbeResult, run_dir: Path | None) -> str:
    import wandb

    name = _name(result, run_dir)
    run = wandb.init(
        project=os.environ.get("WANDB_PROJECT", "tacit"),
        name=name,
        job_type=str(result.manifest.get("probe", "tacit")),
        config=_manifest(result),
    )
    try:
        run.summary.update(headline(result))
        run.log({"summary": wandb.Table(dataframe=spreadsheet_safe(result.summary))})
        if run_dir is not None:
            artifact = wandb.Artifact(re.sub(r"[^\w.-]+", "-", f"tacit-{name}"), type="tacit-run")
            artifact.add_dir(str(run_dir))
            run.log_artifact(artifact)
        where = run.url or f"offline, in {Path(run.dir).parent}: `wandb sync` it to upload"
    finally:
        run.finish()
    return f"wandb run {run.id} ({where})"


def _mlflow_key(text: str) -> str:
    """A metric or param name MLflow takes (letters, digits, `_-. /`)."""
    return re.sub(r"[^\w\-. /]+", "_", text)


def _mlflow(result: ProbeResult, run_dir: Path | None) -> str:
    import mlflow

    manifest = _manifest(result)
    models = [str(m.get("name")) for m in manifest.get("models", [])]
    params = {
        "probe": manifest.get("probe"),
        "models": ", ".join(models),
        **{k: manifest.get(k) for k in ("dtype", "batch_size", "seed", "device")},
        **{f"options.{k}": v for k, v in (manifest.get("options") or {}).items()},
    }
    with mlflow.start_run(run_name=_name(result, run_dir)) as active:
        mlflow.set_tag("tacit.probe", str(manifest.get("probe")))
        mlflow.log_params({_mlflow_key(k): str(v)[:500] for k, v in params.items()})
        mlflow.log_metrics({_mlflow_key(k): v for k, v in headline(result).items()})
        mlflow.log_dict(manifest, "manifest.json")
        mlflow.log_table(spreadsheet_safe(result.summary), "summary.json")
        if run_dir is not None:
            mlflow.log_artifacts(str(run_dir), artifact_path="run")
        run_id = active.info.run_id
    return f"mlflow run {run_id} ({mlflow.get_tracking_uri()})"
