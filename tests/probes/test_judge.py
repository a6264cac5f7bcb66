"""The judge matcher (`--judge MODEL`, issue 60): a model asked whether each answer means each
of its concept's features, beside the lexical matcher. A scripted model lists bear's `has`
features (toy norms: fur_hair, claws); the judge is the test chat server, which answers by a
rule on the question, so judged.csv, the agreement and the cost are known by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support import Scripted, assert_declared
from support_server import TestServer
from typer.testing import CliRunner

import tacit
from tacit.ask.judge import asked_pairs
from tacit.cli import app
from tacit.matching.verdict import verdict

runner = CliRunner()
LISTED = {"a bear has ___": "1. Thick fur\n2. sharp claws\n3. paws"}


def judging(body: dict) -> str:
    """The judge's rule: `paws` means claws (yes: the judge alone), `sharp claws` does not
    (no: the matcher alone), `paws` against fur is unreadable, `Thick fur` against fur is
    yes (both), anything else no (both)."""
    text = body["messages"][-1]["content"]
    if "Reply yes or no" not in text:  # the listing asked of the model
        return LISTED["a bear has ___"]
    answer = text.split('answered: "')[1].split('"')[0]
    feature = text.split("the concept ")[-1].split("?")[0]
    replies = {
        ("paws", "has claws"): "Yes, paws have claws.",
        ("sharp claws", "has claws"): "No.",
        ("paws", "has fur or hair"): "Perhaps",
        ("Thick fur", "has fur or hair"): "yes",
    }
    return replies.get((answer, feature), "no")


@pytest.fixture(scope="module")
def judge():
    with TestServer(None, answer=judging) as running:
        yield running


def run(norms, judge, **options):
    return tacit.elicit(
        [Scripted(LISTED)],
        norms=norms,
        by="generation",
        relations=["has"],
        concepts=["bear"],
        judge=judge.spec(retries=0),
        **options,
    )


def test_the_judges_verdicts_agreement_and_cost(toy_norms_path, judge):
    """3 answers x 2 features = 6 pairs: one unreadable (paws, fur), so 5 read; 3 alike, one
    the judge's alone (paws: claws), one the matcher's alone (sharp claws: claws): 3/5."""
    result = run(toy_norms_path, judge)
    judged = result.extra["judged"]
    assert list(judged.columns[-6:]) == [
        "concept",
        "answer",
        "feature",
        "lexical",
        "verdict",
        "reply",
    ]
    got = {(a, f): v for a, f, v in zip(judged["answer"], judged["feature"], judged["verdict"])}
    assert got == {
        ("Thick fur", "has fur_hair"): "yes",
        ("Thick fur", "has claws"): "no",
        ("sharp claws", "has claws"): "no",
        ("sharp claws", "has fur_hair"): "no",
        ("paws", "has fur_hair"): "unreadable",
        ("paws", "has claws"): "yes",
    }
    # the matched feature is asked first
    assert judged["feature"].tolist()[:2] == ["has fur_hair", "has claws"]
    record = result.manifest["generation"]["judge"]
    lexical_yes = judged["lexical"].astype(bool)
    read = judged["verdict"] != "unreadable"
    agree = ((judged["verdict"] == "yes") == lexical_yes)[read].mean()
    assert record["agreement"] == pytest.approx(agree) == pytest.approx(3 / 5)
    assert (record["n"], record["judge_only"], record["lexical_only"]) == (5, 1, 1)
    assert (record["unreadable"], record["requests"]) == (1, 6)
    # 2 of 5 matched: a judge of one verdict (no) agrees on 3/5; both say yes 2/5 of the time,
    # so chance agrees on 0.4 x 0.4 + 0.6 x 0.6 = 0.52, and kappa = (0.6 - 0.52) / 0.48
    assert record["constant"] == pytest.approx(0.6)
    assert record["kappa"] == pytest.approx(0.08 / 0.48, abs=1e-4)
    model = result.manifest["models"][0]
    assert model["judge_generation_requests"] == 6 and not model.get("judge_generation_cached")
    assert model["judge_generation_prompt_tokens"] > 0
    assert_declared(result.manifest)
    said = "agrees with the lexical matcher on 60.0% of 5 pairs read (one verdict for every "
    assert said + "pair: 60.0%; Cohen's kappa 0.17)" in " ".join(result.text.split())
    # the lexical matcher stays the one scored
    assert result.prompts.set_index("concept").loc["bear", "recall"] == 1


def test_judge_features_bounds_the_requests_per_answer(toy_norms_path, judge):
    result = run(toy_norms_path, judge, judge_features=1)
    judged = result.extra["judged"]
    assert judged.groupby("answer").size().max() == 1 and len(judged) == 3
    # an answer that matched is asked its match; one that matched nothing, the first feature
    assert dict(zip(judged["answer"], judged["feature"]))["sharp claws"] == "has claws"


def test_the_judges_answers_are_cached_and_kept_for_resume(toy_norms_path, judge, tmp_path):
    """With --cache, a second run sends the judge nothing (counted as cached); judged.csv is
    written beside answers.csv and a resumed run reads the chunk's verdicts back."""
    norms, spec = str(toy_norms_path), judge.spec(retries=0)
    base = ["elicit", "-m", spec, "--norms", norms, "--by"]
    args = [*base, "generation", "-r", "has", "--concepts", "bear", "--judge", spec, "-q"]
    cache = ["--cache", str(tmp_path / "cache")]
    before = len(judge.answered)
    first = runner.invoke(app, [*args, *cache, "--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    sent = len(judge.answered) - before
    again = runner.invoke(app, [*args, *cache, "--out", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    assert len(judge.answered) - before == sent  # nothing sent twice
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    judged = pd.read_csv(run_a / "judged.csv", keep_default_na=False)
    assert (run_a / "answers.csv").is_file() and len(judged) > 0
    assert judged.equals(pd.read_csv(run_b / "judged.csv", keep_default_na=False))
    models = json.loads((run_b / "manifest.json").read_text())["models"]
    assert models[0]["judge_generation_cached"] == 6
    assert not models[0].get("judge_generation_requests")  # run by the judge: none


def test_a_resumed_run_sends_no_judged_pair_twice(toy_norms_path, judge, tmp_path):
    """The server fails after the listing and 3 of the 6 pairs: the run stops in one line, and
    --resume sends the judge only the other 3."""
    spec = judge.spec(retries=0)
    args = ["elicit", "-m", spec, "--norms", str(toy_norms_path), "--by", "generation"]
    args += ["-r", "has", "--concepts", "bear", "--judge", spec, "-q", "--out", str(tmp_path)]
    judge.answered.clear()
    judge.fail_after = judge.completions + 4
    try:
        failed = runner.invoke(app, args)
    finally:
        judge.fail_after = None
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    before = judge.answered_keys()
    assert len(before) == 4
    judge.answered.clear()
    resumed = runner.invoke(app, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    after = judge.answered_keys()
    assert not set(before) & set(after) and len(after) == 3
    assert len(pd.read_csv(tmp_path / "judged.csv")) == 6


def test_a_bad_judge_is_one_line(toy_norms_path, judge):
    """A judge that does not resolve, and --judge without --by generation: each one line
    naming --judge, before anything is asked."""
    spec = judge.spec(retries=0)
    base = ["elicit", "-m", spec, "--norms", str(toy_norms_path), "-r", "has", "--judge"]
    for args, said in [
        ([*base, "no-such-model", "--by", "generation"], "--judge no-such-model"),
        ([*base, spec], "--judge is an option of asking in words"),
    ]:
        asked = len(judge.answered)
        result = runner.invoke(app, args, env={"HF_HUB_OFFLINE": "1"})
        assert result.exit_code != 0 and "Traceback" not in result.output, result.output
        (line,) = result.output.strip().splitlines()
        assert said in line, line
        assert len(judge.answered) == asked


def test_a_verdict_is_the_first_word_yes_or_no():
    assert [verdict(r) for r in ["YES", "No!", "I think yes", "y"]] == [
        "yes",
        "no",
        "unreadable",
        "unreadable",
    ]
    assert asked_pairs("", ["has a", "has b"], 5) == ["has a", "has b"]


def test_a_dry_run_counts_and_times_the_judge(toy_norms_path, judge, tmp_path):
    """The calibration judges its answers as the run would: the judge's requests and tokens
    are counted beside the model's, and nothing is written."""
    before = judge.completions_generated
    estimate = run(toy_norms_path, judge, dry_run=True, cache=str(tmp_path / "cache"))
    (model,) = estimate.models
    assert model.tokens["judge_generation_requests"] == 6  # 3 answers x 2 features
    assert model.tokens["judge_generation_completion_tokens"] > 0
    assert "judge generation requests 6" in str(estimate)
    assert judge.completions_generated - before == 12  # the warm-up, then the timed pass
    assert not list((tmp_path / "cache").rglob("*.*"))  # the judge's answers not cached either


def test_only_the_main_process_keeps_the_judges_answers(judge, tmp_path):
    """In a data-parallel run the main process alone keeps the run's checkpoint: another
    process's judge appends to no journal there (the model's answers are kept the same way)."""
    from tacit.core.options import RunOptions
    from tacit.models.resolved import judge_model

    options = RunOptions.build(None, {"checkpoint": str(tmp_path / ".partial")})
    assert judge_model(judge.spec(retries=0), options)().run_answers is not None
    assert judge_model(judge.spec(retries=0), options, main=False)().run_answers is None
