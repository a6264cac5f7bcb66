"""Retrieval by generation (`--by generation`, issue 46): the paper's prompts asked in words,
the answers read, matched and ranked; what was sent and said kept in the run directory.

A scripted model (it answers each question from a table) fixes what is said, so that every
rank, count and file is known by hand; a tiny chat model checks the in-process path end to
end against a plain transformers `generate`.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support import Scripted, assert_declared, with_chat_template
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError

runner = CliRunner()


def _ranks(result) -> dict[tuple[str, int], float]:
    prompts = result.prompts
    return dict(zip(zip(prompts["concept"], prompts["n_props"]), prompts["rank"]))


def test_ranks_come_from_the_first_matching_guess(toy_norms_path):
    """bear is named second, then first; cat first, then the model refuses (reciprocal rank
    0, no rank): a refusal is counted, never matched; the summary is the mean over concepts."""
    model = Scripted(
        {
            "has a tail": "I'm sorry, I cannot answer that.",  # cat's second prompt
            "has fur?": "1. A cat\n2. Bears\n3. dog",  # bear's and cat's first prompt
            "has fur and": "1. The bear.\n2. a dog",
        }
    )
    result = tacit.retrieve(
        [model], norms=toy_norms_path, by="generation", max_props=2, concepts=["bear", "cat"]
    )
    ranks = _ranks(result)
    assert ranks[("bear", 1)] == 2 and ranks[("bear", 2)] == 1 and ranks[("cat", 1)] == 1
    assert np.isnan(ranks[("cat", 2)])
    rows = result.prompts.set_index(["concept", "n_props"])
    assert rows.loc[("bear", 1), "target_answer"] == "Bears"
    assert rows.loc[("bear", 1), "reciprocal_rank"] == 0.5
    assert rows.loc[("cat", 2), "reciprocal_rank"] == 0
    assert rows.loc[("cat", 2), "n_refusal"] == 1
    answers = result.extra["answers"]
    refused = answers[answers["status"] == "refusal"]
    assert len(refused) == 1 and (refused["matched"].fillna("") == "").all()
    # the summary: MRR over the concepts at each number of properties, as by hand
    summary = result.summary.set_index("n_props")
    assert summary.loc[1, "mrr"] == pytest.approx((0.5 + 1) / 2)
    assert summary.loc[2, "mrr"] == pytest.approx((1 + 0) / 2)
    record = result.manifest["models"][0]
    assert record["generation_requests"] == len(set(model.asked)) == 3  # bear's and cat's 1st
    assert result.manifest["generation"]["sampling"]["temperature"] == 0
    assert "prob –: asked by generation, what a model says has no probability" in result.text
    assert any(q.startswith("Which concept has fur? Give your 5 best") for q in model.asked)


@pytest.mark.slow
def test_a_cli_run_writes_what_was_sent_and_said(tiny_gpt2, toy_norms_path, tmp_path):
    """An instruct model (a chat template) asked in process: messages.jsonl holds each
    prompt's messages as sent, answers.csv each completion beside what was read from it, and
    the completions are a plain transformers generate's."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    chat = with_chat_template(tiny_gpt2, tmp_path / "chat")
    out = tmp_path / "run"
    args = ["retrieve", "--by", "generation", "-m", chat, "--norms", toy_norms_path]
    args += ["--max-props", "1", "--max-tokens", "8", "--out", out, "-q"]
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    messages = [json.loads(line) for line in (out / "messages.jsonl").read_text().splitlines()]
    assert len(messages) == len(prompts)
    assert [m["prompt"] for m in messages] == list(prompts["prompt"])
    assert all(m["messages"][0]["role"] == "user" for m in messages)
    answers = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert {"completion", "answer", "normal", "matched", "rule", "status"} <= set(answers.columns)
    tokenizer = AutoTokenizer.from_pretrained(chat)
    model = AutoModelForCausalLM.from_pretrained(chat).eval()
    for message in messages[:2]:
        ids = tokenizer.apply_chat_template(
            message["messages"], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        with torch.no_grad():
            made = model.generate(**ids, max_new_tokens=8, do_sample=False)
        plain = tokenizer.decode(made[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
        said = answers.loc[answers["prompt"] == message["prompt"], "completion"].iloc[0]
        assert said == plain
    manifest = json.loads((out / "manifest.json").read_text())
    assert_declared(manifest)
    assert manifest["options"]["by"] == "generation"
    assert manifest["models"][0]["generation_completion_tokens"] > 0


def test_generation_options_need_by_generation(toy_norms_path):
    with pytest.raises(TacitError, match="retrieve: samples is an option of asking in words"):
        tacit.retrieve(["m"], norms=toy_norms_path, samples=3)
    with pytest.raises(TacitError, match="greedy decoding gives one completion 3 times"):
        tacit.retrieve(["m"], norms=toy_norms_path, by="generation", samples=3)
    with pytest.raises(TacitError, match="candidates is an option of the shared vocabulary"):
        tacit.retrieve(["m"], norms=toy_norms_path, by="generation", candidates="concepts")


def test_votes_rank_the_guesses_of_several_samples(toy_norms_path):
    """--samples 3 asks for one guess each and ranks the answers by how many samples gave
    them."""
    model = Scripted({"has fur?": "bear"})
    result = tacit.retrieve(
        [model],
        norms=toy_norms_path,
        by="generation",
        samples=3,
        temperature=0.7,
        max_props=1,
        concepts=["bear"],
    )
    assert "Answer with one name only." in model.asked[0]
    row = result.prompts.iloc[0]
    assert row["rank"] == 1 and row["n_draws"] == 3 and row["top5"] == "bear:3"


@pytest.mark.slow
def test_scoring_and_generation_stand_side_by_side(tiny_gpt2, toy_norms_path, tmp_path):
    """The same model by scoring (over the concepts' spans) and by generation asks the same
    concepts and properties: `compare` pairs them over every concept, the generation side
    named as such, and the leaderboard ranks them in one group; elicitation by generation
    reports recall, not mAP, so it never stands beside elicitation by scoring."""
    chat = with_chat_template(tiny_gpt2, tmp_path / "chat")
    common = {"norms": toy_norms_path, "max_props": 1, "quiet": True}
    scored = tacit.retrieve([chat], candidates="concepts", **common)
    asked = tacit.retrieve([chat], by="generation", max_tokens=8, **common)
    pairs = tacit.compare([scored, asked])
    assert len(pairs) == 1
    pair = pairs.iloc[0]
    assert pair["model_b"].endswith("by generation)") and pair["units_left_out"] == 0
    assert pair["n_units"] == scored.prompts["concept"].nunique()
    elicit = {"norms": toy_norms_path, "relations": ["has"], "quiet": True}
    by_scoring = tacit.elicit([chat], candidates="answers", **elicit)
    by_words = tacit.elicit([chat], by="generation", max_tokens=8, **elicit)
    with (
        pytest.warns(Warning, match="no other run like for like"),
        pytest.raises(TacitError, match="no two models"),
    ):
        tacit.compare([by_scoring, by_words])
