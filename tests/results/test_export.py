"""`probe export RUN --to lm-eval`: a run in lm-evaluation-harness's layout, checked against
what that harness's own code reads (issue 41).

What lm-eval reads, from its source (EleutherAI/lm-evaluation-harness, lm_eval/utils.py,
lm_eval/loggers/evaluation_tracker.py, lm_eval/result_schema.py, scripts/zeno_visualize.py):
a folder per model holding `results_<date>.json` (found by `/results_` and `.json` in the path)
and `samples_<task>_<date>.jsonl` (`/samples_`; the task is the name between the first and the
last `_`, the date after the last); the results file's `results` (per task `name`, `alias`,
`sample_len` and `<metric>,<filter>` with `<metric>_stderr,<filter>`), `versions`, `n-shot`,
`higher_is_better`, `n-samples` (`original`, `effective`), `configs` (per task `metric_list`
of `metric` and `aggregation`, `output_type`), `config` (`model`, `model_args`), `git_hash`,
`date`, `task_hashes`; each sample's `doc_id`, `doc`, `target`, `arguments`
(`gen_args_0`: `arg_0`, `arg_1`), `resps`, `filtered_resps`, `filter`, `metrics`, the three
hashes, and a value for every metric of its task's `metric_list`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support_nli import save_nli_masked_lm, write_nope
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.results.lm_eval import Z_95

runner = CliRunner()
SAMPLE_KEYS = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
}
RESULTS_KEYS = {
    "results",
    "group_subtasks",
    "configs",
    "versions",
    "n-shot",
    "higher_is_better",
    "n-samples",
    "config",
    "git_hash",
    "date",
    "task_hashes",
    "model_name",
    "model_name_sanitized",
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_export(folder: Path) -> tuple[dict, dict[str, list[dict]]]:
    """A model folder as lm-eval's tools find its files: the results file, and each task's
    samples by the task name lm-eval reads from the file name."""
    paths = [p.as_posix() for p in folder.iterdir()]
    (results_file,) = [p for p in paths if "/results_" in p and ".json" in p]
    name = Path(results_file).name
    date = name[name.rfind("_") + 1 :].replace(".json", "")
    samples = {}
    for path in [p for p in paths if "/samples_" in p and ".json" in p]:
        name = Path(path).name
        assert name[name.rfind("_") + 1 :].replace(".jsonl", "") == date  # one run, one date
        task = name[name.find("_") + 1 : name.rfind("_")]
        samples[task] = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return json.loads(Path(results_file).read_text()), samples


def check_layout(results: dict, samples: dict[str, list[dict]]) -> None:
    """Every key lm-eval's tools read, with the shapes they expect."""
    assert set(results) >= RESULTS_KEYS
    tasks = set(results["results"])
    for part in ("configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        assert set(results[part]) == tasks, part
    assert {"model", "model_args"} <= set(results["config"])
    assert isinstance(results["date"], float)
    for task, entry in results["results"].items():
        assert entry["name"] == entry["alias"] == task
        metrics = [key.split(",")[0] for key in entry if "," in key and "_stderr" not in key]
        assert metrics, task
        for metric in metrics:
            stderr = entry[f"{metric}_stderr,none"]
            assert stderr == "N/A" or isinstance(stderr, float)
        config = results["configs"][task]
        assert config["output_type"] == "loglikelihood"
        assert [m["metric"] for m in config["metric_list"]] == metrics
        assert all(m["aggregation"] == "mean" for m in config["metric_list"])
        assert set(results["higher_is_better"][task]) == set(metrics)
        count = results["n-samples"][task]
        assert set(count) == {"original", "effective"}
        if task in samples:
            rows = samples[task]
            assert entry["sample_len"] == count["effective"] == len(rows)
            assert [s["doc_id"] for s in rows] == list(range(len(rows)))
            for sample in rows:
                assert set(sample) >= SAMPLE_KEYS and set(metrics) <= set(sample)
                assert set(sample["arguments"]["gen_args_0"]) == {"arg_0", "arg_1"}
                assert sample["prompt_hash"] == sha(sample["arguments"]["gen_args_0"]["arg_0"])
                assert sample["target_hash"] == sha(sample["target"])
            joined = "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in rows)
            assert results["task_hashes"][task] == sha(joined)
    assert set(samples) <= tasks


@pytest.fixture(scope="module")
def retrieval(tmp_path_factory, tiny_bert, toy_norms_path):
    out = tmp_path_factory.mktemp("export") / "retrieve"
    tacit.retrieve([tiny_bert], norms=str(toy_norms_path), max_props=3, quiet=True).save(out)
    return out


@pytest.mark.slow
def test_a_retrieval_run_in_lm_evals_layout(retrieval, tmp_path):
    run = tacit.load(retrieval)
    done = tacit.export(retrieval, to="lm-eval", out=tmp_path / "lm")
    (folder,) = list((tmp_path / "lm").iterdir())
    model = run.manifest["models"][0]["name"]
    assert folder.name == model.replace("/", "__")  # lm-eval's sanitised model name
    results, samples = read_export(folder)
    check_layout(results, samples)
    assert results["config"]["model_args"] == f"pretrained={model}"
    assert results["tacit"]["manifest"] == json.loads(json.dumps(run.manifest, default=str))
    summary, prompts = run.summary, run.prompts
    assert len(results["results"]) == len(summary) == 3
    for row in summary.itertuples():
        task = f"tacit_retrieve_top_decreasing_all_n_props_{row.n_props}"
        entry = results["results"][task]
        # tacit's own numbers, the stderr from its 95% interval, the interval kept beside it
        assert entry["mrr,none"] == pytest.approx(row.mrr)
        width = row.mrr_ci_high - row.mrr_ci_low
        assert entry["mrr_stderr,none"] == pytest.approx(width / (2 * Z_95))
        ci = results["configs"][task]["metadata"]["ci95"]["mrr"]
        assert ci == pytest.approx([row.mrr_ci_low, row.mrr_ci_high])
        assert entry["mean_target_prob_shared_stderr,none"] == "N/A"  # it has no interval
        assert results["higher_is_better"][task]["mrr"] is True
        # a sample per prompt: the row, its target, the per-prompt scores of the metrics
        rows = prompts[prompts["n_props"] == row.n_props]
        assert len(samples[task]) == len(rows) == row.n_prompts
        for sample, prompt in zip(samples[task], rows.itertuples()):
            assert sample["doc"]["concept"] == prompt.concept
            assert sample["arguments"]["gen_args_0"] == {
                "arg_0": prompt.prompt,
                "arg_1": prompt.target,
            }
            assert sample["target"] == prompt.target
            assert sample["mrr"] == pytest.approx(prompt.reciprocal_rank)
            assert sample["p_at_1"] is None  # no per-prompt value: only the summary has it
            assert "mrr" in sample["metrics"] and "p_at_1" not in sample["metrics"]
        mean = sum(s["mrr"] for s in samples[task]) / len(samples[task])
        assert mean == pytest.approx(row.mrr, rel=1e-6)  # one sample per concept here
    assert len(done.files) == 4 and done.notes == []


def test_lm_evals_own_table_reads_the_export(retrieval, tmp_path):
    utils = pytest.importorskip(
        "lm_eval.utils", reason="lm-evaluation-harness is not installed (pip install lm_eval)"
    )
    pytest.importorskip("pytablewriter", reason="lm_eval.utils.make_table needs pytablewriter")
    tacit.export(retrieval, out=tmp_path / "lm")
    (folder,) = list((tmp_path / "lm").iterdir())
    paths = [p.as_posix() for p in folder.iterdir()]
    (results_file,) = utils.get_results_filenames(paths)
    results = json.loads(Path(results_file).read_text())
    table = utils.make_table(results)
    assert "|tacit_retrieve_top_decreasing_all_n_props_3" in table and "|mrr " in table
    tasks = {
        utils.get_file_task_name(Path(p).name) for p in utils.get_sample_results_filenames(paths)
    }
    assert tasks == set(results["configs"])


@pytest.mark.slow
def test_the_elicitation_conditions_and_their_pooled_task(tmp_path, tiny_bert, toy_norms_path):
    run = tacit.elicit([tiny_bert], norms=str(toy_norms_path), prefix="both", quiet=True)
    done = tacit.export(run, out=tmp_path / "lm")
    (folder,) = list((tmp_path / "lm").iterdir())
    results, samples = read_export(folder)
    check_layout(results, samples)
    assert {"tacit_elicit_has_prefix_true", "tacit_elicit_has_prefix_false"} <= set(samples)
    assert "tacit_elicit_all_prefix_true" in samples  # `all`: every relation's prompts
    with_prefix = run.prompts[run.prompts["prefix"]]
    assert len(samples["tacit_elicit_all_prefix_true"]) == len(with_prefix)
    assert done.notes == []


def test_a_long_form_summary_names_its_metrics_and_says_what_has_no_samples(tmp_path):
    mlm = save_nli_masked_lm(tmp_path / "mlm")
    run = tacit.nli("nope", write_nope(tmp_path / "nope"), [mlm], quiet=True)
    done = tacit.export(run, out=tmp_path / "lm")
    (folder,) = list((tmp_path / "lm").iterdir())
    results, samples = read_export(folder)
    check_layout(results, samples)
    assert samples == {}
    entry = results["results"]["tacit_nli_accuracy_split_main"]
    assert entry["accuracy,none"] == pytest.approx(
        run.summary.query("section == 'accuracy' and group == 'main'")["value"].iloc[0]
    )
    (note,) = done.notes
    assert note.startswith(f"note: no samples file for {len(results['results'])} task(s) (")
    assert note.endswith("its rows file has no section, breakdown, group column to tell them apart")


def test_the_command_writes_beside_the_run_and_refuses_what_is_no_run(retrieval, tmp_path):
    out = tmp_path / "copy"
    tacit.load(retrieval).save(out)
    first = runner.invoke(app, ["export", str(out)])
    assert first.exit_code == 0, first.output
    assert first.stdout == f"written to {out / 'lm-eval'} (4 files)\n"
    written = {p: p.read_bytes() for p in sorted((out / "lm-eval").rglob("*")) if p.is_file()}
    again = runner.invoke(app, ["export", str(out), "--to", "lm-eval"])
    assert again.exit_code == 0
    assert {
        p: p.read_bytes() for p in sorted((out / "lm-eval").rglob("*")) if p.is_file()
    } == written
    (tmp_path / "empty").mkdir()
    bad = runner.invoke(app, ["export", str(tmp_path / "empty")])
    assert bad.exit_code == 1
    assert (
        bad.stderr == f"error: {tmp_path / 'empty'}: not a finished run: the directory is empty\n"
    )
    bad = runner.invoke(app, ["export", str(out), "--to", "zeno"])
    assert (
        bad.exit_code == 1 and "--to 'zeno': expected one of lm-eval, wandb, mlflow" in bad.stderr
    )


def test_a_metric_of_the_whole_task_is_not_called_a_mean(tmp_path, tiny_bert, toy_norms_path):
    """RSA is computed over every pair of concepts, not averaged over prompts: the export says
    `corpus`, and its samples carry no per-prompt RSA."""
    run = tacit.concept_structure([tiny_bert], norms=str(toy_norms_path), quiet=True)
    tacit.export(run, out=tmp_path / "lm")
    (folder,) = list((tmp_path / "lm").iterdir())
    results, samples = read_export(folder)
    (config,) = results["configs"].values()
    assert {m["metric"]: m["aggregation"] for m in config["metric_list"]}["rsa"] == "corpus"
    assert all("rsa" not in sample["metrics"] for task in samples.values() for sample in task)
