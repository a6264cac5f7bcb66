"""The Ask stage at its seam: a probe's `plan` and `finish` with the fake scorer
(tacit.models.fake) or a scripted model, no engine and no command line. Each way of asking
writes the probe's declared columns it answers, and no others; the ranks are the fake's own."""

from __future__ import annotations

import numpy as np
import pytest
from support import Scripted
from transformers import AutoTokenizer

from tacit.core.options import Planning, RunOptions
from tacit.models.fake import FakeScorer
from tacit.models.resolved import resolved_models
from tacit.probes import registry
from tacit.probes.elicit.prompts import PROMPT_COLUMNS as ELICIT_PROMPTS
from tacit.probes.retrieve.prompts import PROMPT_COLUMNS as RETRIEVE_PROMPTS

RUN = Planning(progress=False)
# what each probe's rows hold after the prompt's columns, by the way it is asked
COLUMNS = {
    ("retrieve", "vocabulary"): [
        "rank",
        "reciprocal_rank",
        "target_prob",
        "target_prob_shared",
        "top5",
    ],
    ("retrieve", "spans"): [
        "target_span",
        "rank",
        "reciprocal_rank",
        "target_score",
        "target_prob",
        "target_prob_shared",
        "n_candidates",
        "top5",
    ],
    ("elicit", "vocabulary"): ["ap_vocab", "ap_sens", "spearman", "top5"],
    ("elicit", "spans"): ["n_candidates", "ap_vocab", "ap_sens", "spearman", "top5"],
}
CASES = [
    ("retrieve", {"max_props": 2}, "vocabulary"),
    ("retrieve", {"max_props": 2, "candidates": "concepts"}, "spans"),
    ("elicit", {"relations": ["has"]}, "vocabulary"),
    ("elicit", {"relations": ["has"], "candidates": "answers"}, "spans"),
]


@pytest.fixture(scope="module")
def fake(tiny_bert):
    return FakeScorer(AutoTokenizer.from_pretrained(tiny_bert), name="fake")


def planned(name, given, models):
    probe = registry.get(name)
    values = probe.validate(given)
    return probe, probe.plan(resolved_models(models, RunOptions()), values, RUN)


def scored(probe, plan, scorer):
    """The plan's work done by one model, then finished as a run would."""
    result = plan.work.score(scorer, plan.work.rows, False)
    rows = result.table.reset_index(drop=True)
    manifest = {"models": [{**scorer.record(), **result.counts}], **plan.manifest}
    return rows, probe.finish(plan, rows, manifest, RUN)


@pytest.mark.parametrize(("name", "given", "asked"), CASES)
def test_each_way_of_asking_writes_its_columns(name, given, asked, fake, toy_norms_path):
    probe, plan = planned(name, {"norms": str(toy_norms_path), **given}, [fake])
    assert plan.asked.name == asked
    rows, outcome = scored(probe, plan, fake)
    prompts = RETRIEVE_PROMPTS if name == "retrieve" else ELICIT_PROMPTS
    assert list(rows.columns) == ["model", *prompts, *COLUMNS[(name, asked)]]
    assert list(outcome.summary["model"].unique()) == ["fake"]
    recorded = "vocabulary" if asked == "vocabulary" else "candidates"
    assert recorded in outcome.manifest and "ties" in outcome.manifest
    assert (outcome.vocab is not None) == (asked == "vocabulary")


def test_a_vocabulary_rank_is_the_fake_scorers_own(fake, toy_norms_path):
    """Each target's rank among the shared vocabulary, counted here from the fake's logits."""
    probe, plan = planned("retrieve", {"norms": str(toy_norms_path), "max_props": 2}, [fake])
    rows, _ = scored(probe, plan, fake)
    vocab = plan.asked.vocabulary
    ids = vocab.token_ids["fake"]
    for prompt, target, rank in zip(rows["prompt"], rows["target"], rows["rank"]):
        scores = fake._logits(prompt).numpy()[ids]
        mine = scores[vocab.index(target)]
        assert rank == 1 + int((scores > mine).sum())
    assert np.allclose(rows["reciprocal_rank"], 1 / rows["rank"])


@pytest.mark.parametrize("name", ["retrieve", "elicit"])
def test_asked_in_words_the_answers_are_kept(name, toy_norms_path):
    """By generation, the rows hold what was sent and said until finish, which writes them
    as answers.csv and messages.jsonl and drops them from the rows."""
    model = Scripted({"fur": "1. A bear\n2. fur"}, default="1. claws")
    given = {"norms": str(toy_norms_path), "by": "generation"}
    given |= {"max_props": 1} if name == "retrieve" else {"relations": ["has"]}
    probe, plan = planned(name, given, [model])
    assert plan.asked.name == "words" and plan.work.sampling is not None
    result = plan.work.score(model, plan.work.rows, False)
    assert {"request", "completions"} <= set(result.table.columns)
    rows = result.table.reset_index(drop=True)
    manifest = {"models": [{**model.record(), **result.counts}], **plan.manifest}
    outcome = probe.finish(plan, rows, manifest, RUN)
    assert "request" not in outcome.rows and set(outcome.files) == {"messages.jsonl"}
    assert len(outcome.extra["answers"]) and outcome.manifest["generation"]["sampling"]["n"] == 1
    assert outcome.manifest["options"]["by"] == "generation"


@pytest.mark.parametrize(
    ("given", "refused"),
    [
        ({"span_scoring": "independent"}, "span_scoring is an option of candidate spans"),
        ({"candidates": "concepts", "suffix_top": 3}, "suffix_top is an option of the shared"),
        ({"guesses": 3}, "guesses is an option of asking in words"),
        ({"by": "generation", "token_scores": True}, "token_scores is an option of candidate"),
    ],
)
def test_an_option_of_another_way_of_asking_is_refused(given, refused, toy_norms_path):
    from tacit.core.errors import TacitError

    with pytest.raises(TacitError, match=f"^retrieve: {refused}"):
        planned("retrieve", {"norms": str(toy_norms_path), **given}, [])
