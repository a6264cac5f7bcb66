"""`--control random-weights`: each model run beside its control, the same config and
tokenizer with weights drawn at random (torch seeded with the run's seed), named
`MODEL (random weights, seed S)` in every table, the leaderboard, `probe compare` and the
report, and recorded in the manifest."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec
from tacit.core.options import RunOptions

SAME = ["rank", "reciprocal_rank", "target_prob", "target_prob_shared", "top5"]


def _by_hand(model: str, auto_class, seed: int, where) -> str:
    """The control built by hand: the model's config, torch seeded, from_config, saved."""
    from transformers import AutoConfig, AutoTokenizer

    torch.manual_seed(seed)
    auto_class.from_config(AutoConfig.from_pretrained(model)).save_pretrained(where)
    AutoTokenizer.from_pretrained(model).save_pretrained(where)
    return str(where)


def _rows(run, model: str, columns: list[str]) -> pd.DataFrame:
    rows = run.prompts[run.prompts["model"] == model]
    return rows[columns].reset_index(drop=True)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["masked", "causal"])
def test_a_control_scores_as_a_model_built_by_hand_with_its_seed(
    family, tiny_bert, tiny_gpt2, toy_norms_path, tmp_path
):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    model, auto_class, candidates = {
        "masked": (tiny_bert, AutoModelForMaskedLM, "vocab"),
        # a random causal LM prunes no word's suffix over a vocabulary: answers are quicker
        "causal": (tiny_gpt2, AutoModelForCausalLM, "answers"),
    }[family]
    given = dict(norms=toy_norms_path, relations=["has"], candidates=candidates, seed=7, quiet=True)
    run = tacit.elicit([model], control="random-weights", **given)
    control = f"{model} (random weights, seed 7)"
    assert list(dict.fromkeys(run.prompts["model"])) == [model, control]
    hand = _by_hand(model, auto_class, 7, tmp_path / "by-hand")
    by_hand = tacit.elicit([hand], **given)
    columns = ["prompt", "ap_vocab", "ap_sens", "top5"]
    pd.testing.assert_frame_equal(_rows(run, control, columns), _rows(by_hand, hand, columns))
    # the fixture's own weights were drawn with seed 0: the control's differ
    assert not _rows(run, control, columns).equals(_rows(run, model, columns))
    record = run.manifest["models"][1]
    assert record["name"] == control
    assert record["control"]["of"] == model and record["control"]["seed"] == 7
    assert run.manifest["control"] == "random-weights"
    assert any(f"{control} is the control of {model}" in note for note in run.notes)


@pytest.mark.slow
def test_a_control_is_not_read_from_its_models_cached_scores(tiny_bert, toy_norms_path, tmp_path):
    given = dict(norms=toy_norms_path, max_props=2, seed=3, quiet=True, cache=tmp_path / "c")
    tacit.retrieve([tiny_bert], **given)  # the model's answers kept
    run = tacit.retrieve([tiny_bert], control="random-weights", **given)
    control = f"{tiny_bert} (random weights, seed 3)"
    assert not _rows(run, control, SAME).equals(_rows(run, tiny_bert, SAME))
    fresh = tacit.retrieve([control], **{**given, "cache": None})
    pd.testing.assert_frame_equal(_rows(run, control, SAME), _rows(fresh, control, SAME))


@pytest.mark.slow
def test_the_leaderboard_compare_and_the_report_show_the_control(
    tiny_bert, toy_norms_path, tmp_path
):
    out = tmp_path / "runs" / "retrieve"
    args = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--max-props", "2"]
    env = {"COLUMNS": "200"}  # a row a line, names unwrapped
    done = CliRunner().invoke(
        app, [*args, "--control", "random-weights", "--seed", "5", "--out", str(out), "-q"], env=env
    )
    assert done.exit_code == 0, done.output
    label = "tiny-bert0 (random weights, seed 5)"  # the fixture's folder, then the control
    assert label in done.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert [m["name"] for m in manifest["models"]] == [
        tiny_bert,
        f"{tiny_bert} (random weights, seed 5)",
    ]
    board = CliRunner().invoke(app, ["leaderboard", str(tmp_path / "runs")], env=env)
    assert board.exit_code == 0, board.output
    assert label in board.stdout and "tiny-bert0 " in board.stdout
    compared = CliRunner().invoke(app, ["compare", str(out)], env=env)
    assert compared.exit_code == 0, compared.output
    assert label in compared.stdout
    report = tmp_path / "report.html"
    made = CliRunner().invoke(app, ["report", str(out), "--out", str(report)])
    assert made.exit_code == 0, made.output
    assert label in report.read_text()


def test_a_control_is_refused_where_there_is_no_config_to_draw_it_from(tiny_bert, toy_norms_path):
    served = "tiny,base_url=http://127.0.0.1:9/v1"
    with pytest.raises(TacitError, match=r"control random-weights: tiny,base_url=\S+ is scored by"):
        tacit.retrieve([served], norms=toy_norms_path, control="random-weights")
    from tacit.models import load_scorer

    in_memory = load_scorer(tiny_bert, RunOptions())
    with pytest.raises(TacitError, match="already in memory"):
        tacit.retrieve([in_memory], norms=toy_norms_path, control="random-weights")
    with pytest.raises(TacitError, match="control"):
        RunOptions(control="random")
    with pytest.raises(TacitError, match="random_weights is set by control"):
        RunOptions(model_args="random_weights=1")
    with pytest.raises(TacitError, match="peft puts trained"):
        load_scorer(f"{tiny_bert},peft=adapter (random weights, seed 0)", RunOptions())


def test_a_controls_text_reads_back():
    spec = ModelSpec.parse("org/m,revision=main (random weights, seed 12)")
    assert (spec.name, spec.revision, spec.random_weights) == ("org/m", "main", 12)
    assert spec.text == "org/m,revision=main (random weights, seed 12)"
    assert ModelSpec.parse("m,random_weights=3").text == "m (random weights, seed 3)"
    with pytest.raises(TacitError, match="expected a seed"):
        ModelSpec.parse("m,random_weights=-1")
