"""Issue 30's options from the command line: loading options per model (and --model-args for
every model), --batch-size auto, --limit and --vocab-words in one run, each recorded in the
manifest; a PEFT adapter given on the command line scores as peft's merged model; mistakes
are one line, exit 1, and leave no run directory."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support import fails_cleanly
from typer.testing import CliRunner

from tacit.cli import app


def _run(tmp_path, name, *args):
    out = tmp_path / name
    done = CliRunner().invoke(
        app, ["retrieve", *map(str, args), "--max-props", "2", "-q", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    manifest = json.loads((out / "manifest.json").read_text())
    return done, manifest, pd.read_csv(out / "summary.csv")


@pytest.mark.slow
def test_options_per_model_and_for_the_run_are_recorded(tiny_bert, toy_norms_path, tmp_path):
    done, manifest, summary = _run(
        tmp_path,
        "many",
        "--norms",
        toy_norms_path,
        "-m",
        f"{tiny_bert},attn_implementation=eager",
        "-m",
        f"{tiny_bert},dtype=bfloat16",
        "--batch-size",
        "auto",
        "--limit",
        "2",
        "--vocab-words",
        "alpha",
    )
    eager, half = manifest["models"]
    assert eager["load"]["attn_implementation"] == "eager" and eager["load"]["dtype"] == "float32"
    assert half["load"]["dtype"] == "bfloat16" and half["source"] == tiny_bert
    assert all(m["batch_size_auto"] and m["batch_size_used"] >= 1 for m in manifest["models"])
    assert manifest["batch_size"] == "auto" and manifest["limit"] == {
        "n": 2,
        "of": "concepts",
        "by": "random",
        "seed": 0,
    }
    assert manifest["vocabulary"]["words_filter"]["words"] == "alpha"
    assert manifest["vocabulary"]["words_filter"]["left_out"] > 0
    assert done.stdout.startswith("limited to 2 concepts drawn at random (seed 0) (--limit 2)")
    assert "--batch-size auto:" in done.output  # a note
    labels = list(dict.fromkeys(summary["model"]))
    assert len(labels) == 2 and labels[0].endswith(",attn_implementation=eager")
    # an independent check: the eager kernel scores as the default one, bfloat16 nearly so
    _, _, plain = _run(
        tmp_path,
        "plain",
        "--norms",
        toy_norms_path,
        "-m",
        tiny_bert,
        "--limit",
        "2",
        "--vocab-words",
        "alpha",
    )
    by_model = {label: rows.reset_index(drop=True) for label, rows in summary.groupby("model")}
    np.testing.assert_allclose(by_model[labels[0]]["mrr"], plain["mrr"], rtol=1e-6)
    np.testing.assert_allclose(
        by_model[labels[1]]["mean_target_prob_shared"], plain["mean_target_prob_shared"], atol=1e-3
    )


@pytest.mark.slow
def test_model_args_apply_to_every_model_and_a_models_own_win(tiny_bert, toy_norms_path, tmp_path):
    _, manifest, _ = _run(
        tmp_path,
        "args",
        "--norms",
        toy_norms_path,
        "-m",
        tiny_bert,
        "-m",
        f"{tiny_bert},attn_implementation=sdpa",
        "--model-args",
        "attn_implementation=eager",
    )
    kernels = [m["load"]["attn_implementation"] for m in manifest["models"]]
    assert kernels == ["eager", "sdpa"]


@pytest.mark.slow
def test_an_adapter_on_the_command_line_scores_as_the_merged_model(
    tiny_bert, toy_norms_path, tmp_path
):
    peft = pytest.importorskip(
        "peft", reason="peft is not installed (pip install 'tacit-probe[peft]')"
    )
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    torch.manual_seed(3)
    config = peft.LoraConfig(
        r=4, lora_alpha=64, target_modules=["query", "value"], init_lora_weights=False
    )
    adapter = tmp_path / "adapter"
    peft.get_peft_model(AutoModelForMaskedLM.from_pretrained(tiny_bert), config).save_pretrained(
        adapter
    )
    merged = tmp_path / "merged"
    base = AutoModelForMaskedLM.from_pretrained(tiny_bert)
    peft.PeftModel.from_pretrained(base, adapter).merge_and_unload().save_pretrained(merged)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(merged)
    _, manifest, adapted = _run(
        tmp_path, "adapted", "--norms", toy_norms_path, "-m", f"{tiny_bert},peft={adapter}"
    )
    _, _, want = _run(tmp_path, "want", "--norms", toy_norms_path, "-m", merged)
    _, _, plain = _run(tmp_path, "plain", "--norms", toy_norms_path, "-m", tiny_bert)
    assert manifest["models"][0]["load"]["peft"] == str(adapter)
    column = "mean_target_prob_shared"
    np.testing.assert_allclose(adapted[column], want[column], rtol=1e-5)
    assert np.abs(adapted[column] - plain[column]).max() > 1e-6  # the adapter changed them


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "{m},load_in_4bit=true", "--device", "cpu"], "load_in_4bit needs a CUDA GPU"),
        (["-m", "{m},load_in_8bit=true", "--device", "cpu"], "load_in_8bit needs a CUDA GPU"),
        (
            ["-m", "{m},foo=1"],
            "'foo' is not a loading option: neither tacit's nor a keyword of from_pretrained",
        ),
        (["-m", "{m},dtype=float8"], "dtype 'float8': expected one of"),
        (["-m", "{m}", "--batch-size", "big"], "--batch-size 'big': expected a whole number"),
        (["-m", "{m}", "--vocab-words", "letters"], "--vocab-words 'letters': expected one of"),
        (["-m", "{m}", "--model-args", "revision=main"], "--model-args: revision has its own"),
        (["-m", "{m}", "--limit", "0"], "--limit 0: must be at least 1"),
    ],
)
def test_loading_mistakes_are_one_line(tiny_bert, toy_norms_path, tmp_path, args, message):
    out = tmp_path / "never"
    given = [a.format(m=tiny_bert) for a in args]
    fails_cleanly(["retrieve", *given, "--norms", toy_norms_path, "--out", out], message, out)


@pytest.mark.slow
def test_span_candidates_read_a_models_text_with_its_options(tiny_gpt2, toy_norms_path, tmp_path):
    """The tokenizers that check span candidates load by the model's text, options and all."""
    _, manifest, summary = _run(
        tmp_path,
        "spans",
        "--norms",
        toy_norms_path,
        "-m",
        f"{tiny_gpt2},attn_implementation=eager",
        "--candidates",
        "concepts",
        "--limit",
        "2",
    )
    assert manifest["models"][0]["load"]["attn_implementation"] == "eager"
    assert len(summary) > 0


def test_a_mistyped_file_name_gets_the_one_beside_it(tiny_bert, toy_norms_path, tmp_path):
    """Issue 47: a `.ggfu` typo went to the Hugging Face hub; the file beside it is named."""
    (tmp_path / "model.Q4_1.gguf").write_bytes(b"")
    base = ["retrieve", "--norms", toy_norms_path, "--out", tmp_path / "run"]
    line = fails_cleanly([*base, "-m", tmp_path / "model.Q4_1.ggfu"], "did you mean")
    assert line.endswith(f"no such file or directory; did you mean {tmp_path / 'model.Q4_1.gguf'}?")
    line = fails_cleanly([*base, "-m", f"{tiny_bert}x"], "did you mean")
    assert line.endswith(f"did you mean {tiny_bert}?")
