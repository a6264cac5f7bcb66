"""Elicitation by generation (`probe elicit --by generation`, issue 46): the norming task. Each
concept and relation asked as a feature listing, N draws as N participants; the answers read,
matched to the concept's features of the relation and scored against what people listed.

A scripted model fixes what is said, so that every number is known by hand and checked
against an independent computation from answers.csv; a tiny chat model runs the command
end to end in process.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from support import Scripted, assert_declared, with_chat_template
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.probes import registry

runner = CliRunner()


def test_listings_are_scored_against_the_features_people_listed(toy_norms_path):
    """bear `has` fur_hair (pf 20) and claws (12): the model lists thick fur, sharp claws and
    paws, so both features (recall 1), two of three distinct answers (precision 2/3), paws
    novel; cat refuses (recall 0, counted, no precision)."""
    model = Scripted(
        {
            "a bear has ___": "1. Thick fur\n2. sharp claws\n3. paws",
            "a cat has ___": "I'm sorry, I cannot answer that.",
        }
    )
    result = tacit.elicit(
        [model], norms=toy_norms_path, by="generation", relations=["has"], concepts=["bear", "cat"]
    )
    rows = result.prompts.set_index("concept")
    assert rows.loc["bear", "recall_pf"] == 1 and rows.loc["bear", "recall"] == 1
    assert rows.loc["bear", "precision"] == pytest.approx(2 / 3)
    assert rows.loc["bear", "novel"] == "paws:1" and rows.loc["bear", "n_novel"] == 1
    assert np.isnan(rows.loc["bear", "spearman"])  # every feature listed once: no variance
    assert rows.loc["cat", "recall_pf"] == 0 and rows.loc["cat", "n_refusal"] == 1
    assert np.isnan(rows.loc["cat", "precision"])
    summary = result.summary.set_index("relation")
    assert summary.loc["has", "recall_pf"] == pytest.approx(0.5)
    assert summary.loc["has", "n_refusal"] == 1 and summary.loc["has", "n_concepts"] == 2
    answers = result.extra["answers"]
    assert set(answers.loc[answers["status"] == "ok", "matched"]) == {
        "has fur_hair",
        "has claws",
        "",
    }
    assert model.asked[0].startswith("People were asked to list the properties")
    assert '"Everyone knows that a bear has ___."' in model.asked[0]
    assert result.manifest["options"]["by"] == "generation"
    assert result.manifest["generation"]["answers_unmatched"] == 1
    assert "recall pf [95% CI]" in result.text and "novel" in result.text


def test_the_metrics_equal_an_independent_computation_from_the_answers(toy_norms_path):
    """Five draws (N participants) per prompt, each listing differently: recall weighted by pf,
    precision and Spearman's rho recomputed from answers.csv's rows and the norms alone."""
    model = Scripted(
        {
            "a cat has ___": [
                "fur, whiskers",
                "1. fur\n2. tail",
                "claws and fur",
                "- soft fur\n- paws\n- whiskers",
                "fur, long whi...",
            ],
            "a dog has ___": ["fur", "fur, paws", "wet nose", "paws", "fur"],
        }
    )
    result = tacit.elicit(
        [model],
        norms=toy_norms_path,
        by="generation",
        relations=["has"],
        concepts=["cat", "dog"],
        samples=5,
        temperature=1.0,
    )
    norms = tacit.load_norms(toy_norms_path).table
    answers = result.extra["answers"]
    for concept, row in result.prompts.set_index("concept").iterrows():
        people = norms[(norms["concept"] == concept) & (norms["relation"] == "has")]
        said = answers[(answers["concept"] == concept) & (answers["status"] == "ok")]
        draws = {f: set(said.loc[said["matched"] == f, "draw"]) for f in people["feature"]}
        counts = np.array([len(draws[f]) for f in people["feature"]], float)
        pf = people["pf"].to_numpy(float)
        assert row["recall_pf"] == pytest.approx(pf[counts > 0].sum() / pf.sum())
        distinct = said.drop_duplicates("normal")
        assert row["precision"] == pytest.approx((distinct["matched"] != "").mean())
        assert row["spearman"] == pytest.approx(spearmanr(counts, pf).statistic, nan_ok=True)
        assert row["n_draws"] == 5
    cat = result.prompts.set_index("concept").loc["cat"]
    assert cat["n_truncated"] == 1 and "has fur_hair:5" in cat["listed"]
    assert result.manifest["generation"]["sampling"]["n"] == 5


@pytest.mark.slow
def test_a_cli_run_writes_what_was_sent_and_said(tiny_gpt2, toy_norms_path, tmp_path):
    """An instruct model in process: prompts.csv, summary.csv (recall, not mAP), answers.csv
    and messages.jsonl; the leaderboard and the report read the run's own metrics."""
    chat = with_chat_template(tiny_gpt2, tmp_path / "chat")
    out = tmp_path / "run"
    args = ["elicit", "--by", "generation", "-m", chat, "--norms", toy_norms_path]
    args += ["--relation", "has", "--max-tokens", "8", "--guesses", "3", "--out", out, "-q"]
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    summary = pd.read_csv(out / "summary.csv")
    assert {"recall_pf", "precision", "spearman"} <= set(prompts.columns)
    assert "map_vocab" not in summary and summary["recall_pf"].between(0, 1).all()
    messages = [json.loads(line) for line in (out / "messages.jsonl").read_text().splitlines()]
    assert [m["concept"] for m in messages] == list(prompts["concept"])
    assert "up to 3 different properties" in messages[0]["messages"][0]["content"]
    answers = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert set(answers["concept"]) == set(prompts["concept"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert registry.of_run(manifest).primary.column == "recall_pf"
    assert_declared(manifest)
    assert manifest["models"][0]["generation_requests"] == len(prompts)
    board = runner.invoke(app, ["leaderboard", str(out)])
    assert board.exit_code == 0, board.output
    assert "recall (pf-weighted)" in board.output
    report = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "report.html")])
    assert report.exit_code == 0, report.output


def test_generation_options_are_refused_where_they_mean_nothing(toy_norms_path):
    with pytest.raises(TacitError, match="elicit: samples is an option of asking in words"):
        tacit.elicit(["m"], norms=toy_norms_path, samples=3)
    with pytest.raises(TacitError, match="elicit: candidates is an option of the shared vocab"):
        tacit.elicit(["m"], norms=toy_norms_path, by="generation", candidates="answers")


def test_a_dry_run_counts_what_generation_would_cost(toy_norms_path):
    """Before a paid run: the requests, completions and the most completion tokens they can
    take, counted from the plan (no model asked); timed, the tokens a calibration spent
    extrapolated to the run."""
    model = Scripted({"a bear has ___": "fur"})
    given = dict(norms=toy_norms_path, by="generation", relations=["has"], max_tokens=16)
    counted = tacit.elicit(
        [model], dry_run=True, dry_run_seconds=0, samples=3, temperature=1, **given
    )
    prompts = counted.prompts
    assert f"{prompts} requests, {prompts * 3} completions of at most 16 tokens" in str(counted)
    assert f"at most {prompts * 3 * 16} completion tokens" in str(counted)
    assert model.asked == []
    timed = tacit.elicit([model], dry_run=True, **given)
    (estimate,) = timed.models
    # the scripted model says each completion cost 10 prompt and 5 completion tokens
    assert estimate.tokens == {
        "generation_prompt_tokens": 10 * prompts,
        "generation_completion_tokens": 5 * prompts,
    }
