"""A run logged to Weights & Biases or MLflow (`--log-to`, `log_to=`, `probe export --to`),
tested in their offline modes: W&B's offline runs, MLflow's local file store (issue 41).

Neither package is in the `dev` extra (each pulls in dozens of packages: MLflow a web server
and a database layer, W&B OpenTelemetry and protobuf): these tests skip, saying so, where
they are not installed (`pip install -e '.[wandb,mlflow]'` runs them)."""

from __future__ import annotations

import importlib.util

import pytest
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.results.tracking import headline

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, tiny_bert, toy_norms_path):
    out = tmp_path_factory.mktemp("tracked") / "retrieve"
    tacit.retrieve([tiny_bert], norms=str(toy_norms_path), max_props=2, quiet=True).save(out)
    return out


def test_without_the_package_one_line_names_the_extra_before_anything_runs(
    monkeypatch, tiny_bert, toy_norms_path, tmp_path
):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a)
    )
    out = tmp_path / "run"
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out)]
    result = runner.invoke(app, [*args, "--log-to", "wandb", "-q"])
    assert result.exit_code == 1
    assert result.stderr == (
        "error: --log-to wandb: the wandb package is not installed: pip install 'tacit-probe[wandb]'\n"
    )
    assert not out.exists()  # refused before the run, nothing written
    with pytest.raises(TacitError, match=r"^log_to wandb: the wandb package is not installed"):
        tacit.retrieve([tiny_bert], norms=str(toy_norms_path), log_to="wandb")
    with pytest.raises(TacitError, match=r"^log_to 'tensorboard': expected one of wandb, mlflow"):
        tacit.retrieve([tiny_bert], norms=str(toy_norms_path), log_to="tensorboard")
    bad = runner.invoke(app, [*args, "--log-to", "tensorboard"])
    assert (
        bad.exit_code == 1 and "--log-to 'tensorboard': expected one of wandb, mlflow" in bad.stderr
    )


def test_a_run_logged_to_wandb_offline(monkeypatch, tmp_path, tiny_bert, toy_norms_path):
    wandb = pytest.importorskip(
        "wandb", reason="wandb is not installed (pip install 'tacit-probe[wandb]')"
    )
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    seen: dict = {}
    real_init = wandb.init

    def init(**options):  # the real offline run, watched: what it held when it finished
        run = real_init(**options)
        real_finish, real_log_artifact = run.finish, run.log_artifact

        def finish(*args, **kwargs):
            seen.update(summary=dict(run.summary), config=dict(run.config))
            return real_finish(*args, **kwargs)

        def log_artifact(artifact, *args, **kwargs):
            seen["artifact"] = sorted(artifact.manifest.entries)
            return real_log_artifact(artifact, *args, **kwargs)

        run.finish, run.log_artifact = finish, log_artifact
        seen["options"] = options
        return run

    monkeypatch.setattr(wandb, "init", init)
    out = tmp_path / "run"
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--max-props", "2"]
    result = runner.invoke(app, [*args, "--out", str(out), "--log-to", "wandb", "-q"])
    assert result.exit_code == 0, result.output
    assert "logged to wandb run " in result.stdout and "offline, in " in result.stdout
    expected = headline(tacit.load(out))
    (key,) = expected
    assert key.startswith("retrieve/mrr/") and seen["summary"][key] == pytest.approx(expected[key])
    assert seen["config"]["probe"] == "retrieve" and seen["config"]["seed"] == 0  # the manifest
    assert seen["options"]["name"] == "run" and seen["options"]["job_type"] == "retrieve"
    assert set(seen["artifact"]) == {p.name for p in out.iterdir() if not p.name.startswith(".")}
    (logged,) = (tmp_path / "wandb").glob("offline-run-*")
    assert list(logged.glob("*.wandb"))  # the run's record, for `wandb sync`
    assert list((logged / "files" / "media" / "table").glob("summary_*.table.json"))


def test_a_run_logged_to_an_mlflow_file_store(
    monkeypatch, tmp_path, run_dir, tiny_bert, toy_norms_path
):
    mlflow = pytest.importorskip(
        "mlflow", reason="mlflow is not installed (pip install 'tacit-probe[mlflow]')"
    )
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file:{tmp_path / 'mlruns'}")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 asks for it
    said = tacit.export(run_dir, to="mlflow")
    assert said.startswith("mlflow run ") and str(tmp_path / "mlruns") in said
    client = mlflow.tracking.MlflowClient()
    (logged,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    expected = headline(tacit.load(run_dir))
    assert logged.data.metrics == pytest.approx(expected)
    assert logged.data.params["probe"] == "retrieve"
    assert logged.data.params["options.max_props"] == "2"
    assert logged.info.run_name == "retrieve"  # the run directory's name
    names = {a.path for a in client.list_artifacts(logged.info.run_id)}
    assert {"manifest.json", "summary.json", "run"} <= names
    files = {a.path for a in client.list_artifacts(logged.info.run_id, "run")}
    assert {"run/manifest.json", "run/summary.csv", "run/result.json"} <= files
    # from the API, as it runs: the summary and manifest (no run directory to attach)
    tacit.retrieve([tiny_bert], norms=str(toy_norms_path), max_props=2, log_to="mlflow", quiet=True)
    assert len(client.search_runs([e.experiment_id for e in client.search_experiments()])) == 2
