"""Bad input, interruption and reproducibility, through the command line as a user meets them."""

import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
from support import fails_cleanly, interrupt_after_one_chunk
from transformers import (
    AutoTokenizer,
    BertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2TokenizerFast,
)
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.vocab.shared import Vocabulary

runner = CliRunner()


def test_options_out_of_range_or_contradictory(tiny_bert, toy_norms_path, tmp_path):
    out = tmp_path / "out"
    base = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--out", out]
    fails_cleanly([*base, "--max-props", 0], "--max-props 0: must be at least 1", out)
    fails_cleanly([*base, "--batch-size", 0], "--batch-size 0: must be at least 1", out)
    fails_cleanly([*base, "--device", "tpu"], "--device 'tpu'", out)
    fails_cleanly([*base, "--dtype", "float8"], "--dtype 'float8'", out)
    fails_cleanly([*base, "--order", "sideways"], "--order 'sideways'", out)
    fails_cleanly([*base, "--category", "smell"], "--category 'smell'", out)
    fails_cleanly([*base, "--ablation", "size"], "--ablation 'size'", out)
    fails_cleanly([*base, "--ablation", "category", "--category", "visual"], "sets --category", out)
    fails_cleanly([*base, "--concepts", ""], "names no concept", out)
    fails_cleanly([*base, "--concepts", f"@{tmp_path / 'none.txt'}"], "cannot read", out)


def test_concept_lists_name_unknown_and_ineligible(tiny_bert, toy_norms_path, tmp_path):
    base = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--out", tmp_path / "o"]
    line = fails_cleanly([*base, "--concepts", "bear,unicorn,griffin"], "not in the norms")
    assert "unicorn, griffin" in line
    line = fails_cleanly([*base, "--concepts", "apple,bat_(animal)"], "no concept is left")
    assert "vowel-initial (a/an): apple" in line and "sense label: bat_(animal)" in line


def test_vocabulary_files(tiny_bert, toy_norms_path, tmp_path):
    base = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--out", tmp_path / "o"]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    fails_cleanly([*base, "--vocab-file", empty], "empty vocabulary file")
    disjoint = tmp_path / "disjoint.txt"
    disjoint.write_text("griffin\nunicorn\n")
    fails_cleanly([*base, "--vocab-file", disjoint], "shares no word")
    fails_cleanly([*base, "--vocab-file", tmp_path / "missing.txt"], "no such vocabulary file")


def test_output_path_that_cannot_be_written(tiny_bert, toy_norms_path, tmp_path):
    a_file = tmp_path / "results.txt"
    a_file.write_text("not a directory")
    base = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path]
    fails_cleanly([*base, "--out", a_file], "exists and is not a directory")
    fails_cleanly([*base, "--out", a_file / "run"], "cannot write there")
    fails_cleanly(["vocab", "-m", tiny_bert, "--out", a_file / "vocab.txt"], "cannot write there")
    fails_cleanly(["plot", tmp_path, "--out", tmp_path / "fig.png"], "no summary.csv")


def test_models_that_cannot_be_used(tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # as on our machines
    base = ["retrieve", "--norms", toy_norms_path, "--out", tmp_path / "o"]
    fails_cleanly([*base, "-m", tmp_path / "nowhere"], "nowhere: no such directory")
    fails_cleanly([*base, "-m", "no-such-org/no-such-model-xyz"], "not in the Hugging Face cache")
    # a directory that is not a model (a folder of models, say) says what is missing
    folder = tmp_path / "models"
    (folder / "one").mkdir(parents=True)
    fails_cleanly([*base, "-m", folder], "not a model directory: no config.json in it")
    # a sequence classifier: not a model retrieval can use (its config says so)
    classifier = tmp_path / "classifier"
    BertForSequenceClassification.from_pretrained(tiny_bert).save_pretrained(classifier)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(classifier)
    fails_cleanly(
        [*base, "-m", classifier],
        "is a classifier model: it cannot score a <mask> inside a sentence over a vocabulary, which retrieve asks",
    )
    # a causal LM (even with a tokenizer that has a mask token): pointed to span candidates
    causal = tmp_path / "causal"
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tiny_roberta)
    GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tokenizer) + 8, n_embd=16, n_layer=1, n_head=2)
    ).save_pretrained(causal)
    tokenizer.save_pretrained(causal)
    fails_cleanly(
        [*base, "-m", causal],
        "is a causal model: it cannot score a <mask> inside a sentence over a vocabulary, which retrieve asks of it (the shared vocabulary at each template's blank): rank candidate spans instead (--candidates concepts)",
    )
    # a tokenizer without a mask token
    no_mask = tmp_path / "no-mask"
    no_mask.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(Path(tiny_roberta) / name, no_mask / name)
    plain = GPT2TokenizerFast(
        vocab=str(Path(tiny_roberta) / "vocab.json"), merges=str(Path(tiny_roberta) / "merges.txt")
    )
    assert plain.mask_token is None and len(plain) > 200
    plain.save_pretrained(no_mask)
    fails_cleanly([*base, "-m", no_mask], "has no mask token")


def test_debug_shows_the_traceback(tiny_bert, tmp_path):
    result = runner.invoke(
        app,
        [
            "--debug",
            "retrieve",
            "-m",
            tiny_bert,
            "--norms",
            str(tmp_path / "missing.dat"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, TacitError)


def test_ctrl_c_leaves_no_result_files(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    from tacit.models.masked import MaskedLMScorer

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(MaskedLMScorer, "score_vocab", interrupted)
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out), "-q"]
    )
    assert result.exit_code == 130
    # one line; nothing was scored: no "--resume" hint (issue 22, item 8), no directory left
    assert result.stderr.strip().splitlines() == [
        "interrupted by Ctrl-C: nothing was scored yet, nothing to resume"
    ]
    assert not out.exists()


def test_ctrl_c_after_a_saved_chunk_says_what_was_saved(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    out = tmp_path / "run"
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out), "-q"]
    with monkeypatch.context() as patch:
        interrupt_after_one_chunk(patch)
        result = runner.invoke(app, args)
    assert result.exit_code == 130
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("interrupted by Ctrl-C: 1 scored chunk(s) kept in")
    assert line.endswith(f"the same command with --resume --out {out}")
    assert [p.name for p in out.iterdir()] == [".partial"]  # only what --resume needs
    refused = runner.invoke(app, args)  # neither --resume nor --overwrite: refused
    assert refused.exit_code == 1 and "holds an interrupted run: --resume" in refused.stderr
    assert runner.invoke(app, [*args, "--resume"]).exit_code == 0


def test_interruption_while_writing_leaves_no_result_file(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    import tacit.core.files

    out = tmp_path / "run"
    staged = []
    real_stage = tacit.core.files._stage

    def failing_stage(path, data):
        if path.parent == out:  # the run's own files, not the checkpoint's
            staged.append(path.name)
            if len(staged) == 3:  # the third of the staged files
                raise KeyboardInterrupt
        return real_stage(path, data)

    monkeypatch.setattr(tacit.core.files, "_stage", failing_stage)
    out.mkdir()
    result = runner.invoke(
        app, ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out), "-q"]
    )
    assert result.exit_code == 130
    # neither result files nor temporary ones: only the chunks --resume would reuse
    assert [p.name for p in out.iterdir()] == [".partial"]
    assert "--resume" in result.stderr


@pytest.mark.slow
def test_sigterm_stops_a_run_promptly(tiny_bert, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        import sys, time
        import tacit.models.masked
        def slow(self, *args, **kwargs):
            print("scoring", flush=True)
            time.sleep(60)
        tacit.models.masked.MaskedLMScorer.score_vocab = slow
        from tacit.cli import app
        app(["retrieve", "-m", {tiny_bert!r}, "--norms", {str(toy_norms_path)!r},
             "--out", {str(out)!r}, "-q"], prog_name="probe")
    """)
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "scoring"
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert time.monotonic() - started < 10
    assert process.returncode == 143
    assert "interrupted by SIGTERM: nothing was scored yet, nothing to resume" in stderr
    assert "Traceback" not in stderr and not out.exists()  # nothing was scored


@pytest.mark.slow
def test_model_order_does_not_change_results(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    tables = []
    for name, models in (("ab", [tiny_bert, tiny_roberta]), ("ba", [tiny_roberta, tiny_bert])):
        args = ["retrieve", "--norms", toy_norms_path, "--out", tmp_path / name, "-q"]
        for model in models:
            args += ["-m", model]
        assert runner.invoke(app, [str(a) for a in args]).exit_code == 0
        tables.append(pd.read_csv(tmp_path / name / "prompts.csv"))
    key = ["model", "concept", "n_props"]
    first, second = (t.sort_values(key).reset_index(drop=True) for t in tables)
    pd.testing.assert_frame_equal(first, second)
    assert (tmp_path / "ab" / "vocab.txt").read_bytes() == (
        tmp_path / "ba" / "vocab.txt"
    ).read_bytes()


def test_vocabulary_shrink_warning():
    vocab = Vocabulary(
        words=("bear",),
        token_ids={},
        single_token={
            "cased": frozenset({"bear", "Bear", "cat", "Cat"}),
            "tiny": frozenset({"bear"}),
        },
    )
    assert vocab.shrinkage() == {"cased": (1, 1), "tiny": (4, 1)}
    (warning,) = vocab.warnings()
    assert warning.startswith("tiny shrinks the shared vocabulary from 4 to 1 words (75% fewer)")


@pytest.mark.parametrize("command", ["retrieve", "elicit"])
def test_manifest_records_what_a_rerun_needs(command, tiny_bert, toy_norms_path, tmp_path):
    import json

    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            command,
            "-m",
            tiny_bert,
            "--norms",
            str(toy_norms_path),
            "--out",
            str(out),
            "-q",
            "--seed",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    for key in (
        "command",
        "software",
        "models",
        "device",
        "dtype",
        "batch_size",
        "seed",
        "options",
        "norms",
        "vocabulary",
        "counts",
        "started",
        "finished",
    ):
        assert key in manifest, key
    assert manifest["seed"] == 5
    assert manifest["software"]["torch"] and manifest["software"]["transformers"]
    assert len(manifest["norms"]["sha256"]) == 64 and len(manifest["vocabulary"]["sha256"]) == 64


def test_plot_and_table_refuse_unreadable_runs(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.csv").write_bytes(b"\xff\xfe\x00garbage\x00")
    fails_cleanly(["plot", run, "--out", tmp_path / "fig.png"], "not a readable CSV table")
    (run / "summary.csv").write_text("model,relation\nm,has\n")
    fails_cleanly(["plot", run, "--out", tmp_path / "fig.png"], "not the summary of any probe")
    fails_cleanly(["table", run], "not a finished run directory (no manifest.json)")


@pytest.mark.slow
def test_resume_gives_the_results_of_an_uninterrupted_run(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch
):
    import tacit.ask.ranked
    import tacit.engine.runner

    monkeypatch.setattr(
        tacit.engine.runner, "CHUNK_TEXTS", 5
    )  # 11 distinct texts: 3 chunks per model
    base = [
        "retrieve",
        "-m",
        tiny_bert,
        "-m",
        tiny_roberta,
        "--norms",
        str(toy_norms_path),
        "--max-props",
        "3",
        "-q",
    ]
    whole = tmp_path / "whole"
    assert runner.invoke(app, [*base, "--out", str(whole)]).exit_code == 0

    real = tacit.ask.ranked.rank
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:  # the second model's second chunk
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(tacit.ask.ranked, "rank", flaky)
    resumed = tmp_path / "resumed"
    assert runner.invoke(app, [*base, "--out", str(resumed)]).exit_code == 130
    assert not (resumed / "prompts.csv").exists()
    calls.clear()
    monkeypatch.setattr(
        tacit.ask.ranked,
        "rank",
        lambda *a, **k: calls.append(1) or real(*a, **k),
    )
    result = runner.invoke(app, [*base, "--out", str(resumed), "--resume"])
    assert result.exit_code == 0, result.output
    assert len(calls) == 2  # only the chunks the interruption left
    for name in ("prompts.csv", "summary.csv", "vocab.txt", "dropped.csv"):
        assert (resumed / name).read_bytes() == (whole / name).read_bytes(), name
    assert not (resumed / ".partial").exists()


@pytest.mark.slow
def test_resume_refuses_another_command(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    out = tmp_path / "run"
    base = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--out", out, "-q"]
    with monkeypatch.context() as patch:
        interrupt_after_one_chunk(patch)
        assert runner.invoke(app, [str(a) for a in base]).exit_code == 130
    line = fails_cleanly([*base, "--resume", "--max-props", 4], "was started with other options (")
    assert (
        "the prompts (the probe's options, norms or concepts)" in line and "another --out" in line
    )
    fails_cleanly([*base[:-3], "--resume"], "--resume needs --out")
    fails_cleanly([*base[:-3], "--out", tmp_path / "empty", "--resume"], "no unfinished run")
    assert runner.invoke(app, [str(a) for a in base] + ["--resume"]).exit_code == 0
    fails_cleanly([*base, "--resume"], "is complete, nothing to resume: --overwrite")


@pytest.mark.slow
def test_resume_on_another_probes_directory_says_what_it_holds(
    tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    # before: "the run in DIR is complete, nothing to resume: --overwrite runs it again (0 scored
    # chunk(s) kept in DIR/.partial; to go on where it stopped: the same command with --resume
    # --out DIR)": no word of the other probe, --overwrite (which deletes it), a .partial that
    # does not exist, and the command that just failed
    import tacit.results.result

    common = ["-m", tiny_bert, "--norms", str(toy_norms_path), "-q"]

    def run(probe: str, out: Path, *extra: str) -> list[str]:
        return [probe, *common, "--out", str(out), *extra]

    finished = tmp_path / "elicited"
    assert runner.invoke(app, run("elicit", finished)).exit_code == 0
    before = {p.name: p.read_bytes() for p in finished.iterdir()}
    line = fails_cleanly(
        run("retrieve", finished, "--resume"), "holds a finished elicit run, not a"
    )
    assert "retrieve run" in line and "another --out" in line
    for misleading in ("--overwrite", ".partial", "the same command"):
        assert misleading not in line, line
    assert {p.name: p.read_bytes() for p in finished.iterdir()} == before  # untouched

    unfinished = tmp_path / "stopped"

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(tacit.results.result.ProbeResult, "save", stopped)
        assert runner.invoke(app, run("elicit", unfinished)).exit_code == 130
    line = fails_cleanly(run("retrieve", unfinished, "--resume"), "holds an unfinished elicit run")
    assert "another --out" in line and "--overwrite" not in line and "the same command" not in line
    assert (unfinished / ".partial" / "plan.json").is_file()

    # the same probe, other options: named, with the finished run's values
    seeded = tmp_path / "seeded"
    assert runner.invoke(app, run("retrieve", seeded, "--seed", "1")).exit_code == 0
    line = fails_cleanly(
        run("retrieve", seeded, "--seed", "2", "--resume"), "holds a finished retrieve run of other"
    )
    assert "--seed 1 (here 2)" in line and "another --out" in line and "--overwrite" not in line
