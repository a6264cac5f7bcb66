"""Elicitation: gold answers, prompts, AP against sklearn, Spearman; Prince's examples."""

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import average_precision_score
from support import REAL_NORMS, fails_cleanly, needs_shared
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.choices import RELATIONS
from tacit.core.metrics import average_precision, rank_correlation
from tacit.core.options import RunOptions
from tacit.hub.model_files import load_tokenizer
from tacit.lexicon import article
from tacit.models.masked import MaskedLMScorer
from tacit.models.resolved import resolved_models
from tacit.norms import read_norms
from tacit.probes import registry
from tacit.probes.elicit.prompts import (
    NO_ANSWER,
    PAPER_PROMPTS,
    build_elicitation_prompts,
    elicitation_prompt,
    gold_answers,
    parse_gold,
    unasked,
)
from tacit.probes.prince.scoring import COUNTRY_PROPERTIES
from tacit.probes.report import report_of
from tacit.ranking.vocabulary import average_precision_rows
from tacit.vocab import build_vocabulary

runner = CliRunner()


@pytest.fixture(scope="module")
def toy(toy_norms_path, tiny_bert, tiny_roberta):
    vocab = build_vocabulary({"b": load_tokenizer(tiny_bert), "r": load_tokenizer(tiny_roberta)})
    return read_norms(toy_norms_path), vocab


def test_prompts_and_articles():
    assert elicitation_prompt("bear", "has") == "Everyone knows that a bear has <mask>."
    assert elicitation_prompt("apple", "is a") == "Everyone knows that an apple is a <mask>."
    assert elicitation_prompt("apple", "is", prefix=False) == "An apple is <mask>."
    assert elicitation_prompt("bat_(animal)", "is") == "Everyone knows that a bat is <mask>."
    assert elicitation_prompt("coffee_machine", "has a") == (
        "Everyone knows that a coffee machine has a <mask>."
    )
    assert [article(w) for w in ["unicorn", "hour", "egg", "umbrella"]] == ["a", "an", "an", "an"]


def test_gold_answers_one_word_split_alternatives(toy):
    norms, vocab = toy
    golds = gold_answers(norms, vocab, RELATIONS)
    answers = golds.answers
    bear_has = answers[(answers.relation == "has") & (answers.concept == "bear")]
    # "has fur_hair" gives fur (hair is not in the toy vocabulary); "has claws"; "has a nose"
    # answers "has a", not "has"
    assert dict(zip(bear_has.word, bear_has.pf)) == {"fur": 20, "claws": 12}
    is_a = answers[answers.relation == "is a"]
    assert ("bear", "animal") in set(zip(is_a.concept, is_a.word))  # "is an animal"
    made_of = answers[answers.relation == "made of"]
    assert list(zip(made_of.concept, made_of.word)) == [("knife", "metal")]
    excluded = golds.excluded.set_index("relation")
    assert excluded.loc["is", "multi_word"] >= 1  # "is used for cooking", "is found in ..."
    assert (
        excluded["kept"] + excluded["multi_word"] + excluded["out_of_vocabulary"]
        == excluded["features"]
    ).all()


def test_prompt_table(toy):
    norms, vocab = toy
    golds = gold_answers(norms, vocab, ["has"])
    prompts = build_elicitation_prompts(golds.answers, ["has"], [True, False])
    bear = prompts[prompts.concept == "bear"]
    assert list(bear.prompt) == ["Everyone knows that a bear has <mask>.", "A bear has <mask>."]
    assert parse_gold(bear.gold.iloc[0]) == [("fur", 20), ("claws", 12)]
    only = build_elicitation_prompts(golds.answers, ["has"], [True], concepts=["bear", "knife"])
    assert list(only.concept) == ["bear"]  # knife answers no `has`: unasked says so
    dropped = unasked(norms, ["has"], ["bear", "knife"], only)
    assert list(dropped.itertuples(index=False)) == [("knife", "has", NO_ANSWER)]


def test_average_precision_matches_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = rng.normal(size=50).round(1)  # rounding makes ties, as sklearn must handle
        relevant = rng.random(50) < 0.2
        relevant[rng.integers(50)] = True
        want = average_precision_score(relevant, scores)
        assert average_precision(scores, relevant) == pytest.approx(want, abs=1e-12)
        gold = torch.as_tensor(np.flatnonzero(relevant)).unsqueeze(0)
        mask = torch.ones_like(gold, dtype=torch.bool)
        got = average_precision_rows(torch.as_tensor(scores).unsqueeze(0), gold, mask)
        assert got.item() == pytest.approx(want, abs=1e-6)  # float32 on the device


def test_rank_correlation_undefined_cases():
    assert np.isnan(rank_correlation([5], [0.1]))
    assert np.isnan(rank_correlation([5, 5, 5], [0.1, 0.2, 0.3]))
    assert rank_correlation([1, 2, 3], [0.3, 0.2, 0.1]) == pytest.approx(-1.0)


@pytest.mark.slow
def test_elicit_cli_on_tiny_models(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "elicit",
            "-m",
            tiny_bert,
            "-m",
            tiny_roberta,
            "--norms",
            str(toy_norms_path),
            "--relation",
            "has",
            "--relation",
            "is a",
            "--prefix-ablation",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Change when the prefix is dropped" in result.stdout
    prompts = pd.read_csv(out / "prompts.csv")
    assert list(prompts.columns) == [
        "model",
        "relation",
        "prefix",
        "concept",
        "prompt",
        "gold",
        "n_gold",
        "ap_vocab",
        "ap_sens",
        "spearman",
        "top5",
    ]
    assert set(prompts.relation) == {"has", "is a"} and set(prompts.prefix) == {True, False}
    assert (
        prompts.ap_vocab.between(0, 1).all() and (prompts.ap_sens >= prompts.ap_vocab - 1e-9).all()
    )
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == [
        "model",
        "relation",
        "prefix",
        "n_prompts",
        "n_concepts",
        "map_vocab",
        "map_vocab_ci_low",
        "map_vocab_ci_high",
        "map_vocab_chance",
        "map_sens",
        "map_sens_ci_low",
        "map_sens_ci_high",
        "map_sens_chance",
        "spearman_mean",
        "spearman_ci_low",
        "spearman_ci_high",
        "spearman_chance",
        "n_spearman",
    ]
    assert (summary.n_spearman <= summary.n_prompts).all()
    assert set(summary.relation) == {"has", "is a", "all"}  # all: both relations' prompts
    assert (summary.map_vocab_ci_low <= summary.map_vocab + 1e-7).all()
    assert (summary.map_vocab <= summary.map_vocab_ci_high + 1e-7).all()
    for (model, prefix), rows in prompts.groupby(["model", "prefix"]):
        pooled = summary[
            (summary.model == model) & (summary.prefix == prefix) & (summary.relation == "all")
        ]
        assert pooled.map_vocab.iloc[0] == pytest.approx(rows.ap_vocab.mean(), rel=1e-5)
        assert pooled.n_prompts.iloc[0] == len(rows)
    assert (out / "excluded.csv").is_file()
    single = prompts[prompts.n_gold == 1]
    assert single.spearman.isna().all()
    base = ["elicit", "-m", tiny_bert, "--norms", toy_norms_path, "--out", tmp_path / "bad"]
    fails_cleanly([*base, "--relation", "wants"], "--relation 'wants'")
    fails_cleanly([*base, "--no-prefix", "--prefix-ablation"], "contradict")
    table = runner.invoke(app, ["table", str(out)])
    assert table.exit_code == 0 and "without the prefix" in table.stdout
    assert "paper's" not in table.stdout  # the toy norms are not the paper's: no paper counts


def test_prince_needs_no_norms(tiny_roberta, tmp_path):
    out = tmp_path / "prince"
    result = runner.invoke(app, ["prince", "-m", tiny_roberta, "--out", str(out), "-q"])
    assert result.exit_code == 1 and "'person' is not in the shared vocabulary" in result.stderr


@pytest.mark.slow
@needs_shared
def test_prince_on_real_tokenizer(real_roberta, tmp_path):
    out = tmp_path / "prince"
    result = runner.invoke(app, ["prince", "-m", real_roberta, "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "prompts.csv", keep_default_na=False)
    assert list(table.direction) == ["concept", "property"]
    assert table.target.iloc[0] == "person"
    answers = table.target.iloc[1].split() + table.not_in_vocab.iloc[1].split()
    assert sorted(answers) == sorted(COUNTRY_PROPERTIES)  # each answer scored or said missing
    assert table.target.iloc[1]  # the real tokenizers hold some of them
    assert len(table.top10.iloc[0].split()) == 10
    assert "'person': rank" in result.stdout


@pytest.mark.slow
@needs_shared
def test_prince_through_paraphrases(real_roberta, tmp_path):
    """The shipped paraphrases: three retrieval templates ask for `person`, three `has`
    templates for a country's properties; each direction gets its ensemble, spread and
    consistency."""
    out = tmp_path / "prince"
    result = runner.invoke(
        app, ["prince", "-m", real_roberta, "--templates", "paraphrases", "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "prompts.csv", keep_default_na=False)
    assert list(table.template) == [
        "paper",
        "called",
        "thing",
        "paper",
        "usually",
        "typically",
        "ensemble",
        "ensemble",
    ]
    assert table.prompt.iloc[1] == (
        "Something that has parents, siblings, relatives, a home, a pet, a car, a spouse, and "
        "a job is called a <mask>."
    )
    assert table.prompt.iloc[4] == "Everyone knows that a country usually has <mask>."
    summary = pd.read_csv(out / "summary.csv")
    ensemble = summary[summary.template == "ensemble"].set_index("direction")
    tops = table[table.template != "ensemble"].groupby("direction")["top1"].agg(list)
    for direction, answers in tops.items():
        pairs = [a == b for i, a in enumerate(answers) for b in answers[i + 1 :]]
        assert ensemble.loc[direction, "consistency"] == pytest.approx(np.mean(pairs))
    assert "the ensemble of its concept templates" in result.stdout


@pytest.mark.slow
@needs_shared
def test_real_norms_counts_and_ap_equal_sklearn(real_bert, real_roberta, tmp_path):
    """All five relations, counts within 10% of the paper's (the plan over every concept: no
    model scores for counting), and AP equal to sklearn's on a run of a sample of them."""
    probe = registry.get("elicit")
    run = RunOptions(vocab_models=(real_roberta,))
    plan = probe.plan(
        resolved_models([real_bert], run),
        probe.validate({"norms": str(REAL_NORMS)}),
        run.planning(),
    )
    counts = plan.work.rows.groupby("relation").size().to_dict()
    for relation, paper in PAPER_PROMPTS.items():
        assert abs(counts[relation] - paper) <= 0.1 * paper, (relation, counts[relation], paper)
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "elicit",
            "-m",
            real_bert,
            "--vocab-model",
            real_roberta,
            "--norms",
            str(REAL_NORMS),
            "--limit",
            "40",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    assert set(prompts["relation"]) == set(PAPER_PROMPTS)
    words = (out / "vocab.txt").read_text(encoding="utf-8").splitlines()
    index = {w: i for i, w in enumerate(words)}
    # each prompt alone: the scores near ties are settled on (tacit.ranking.ties), so that every
    # AP is the one of batch size 1 (the tiny random model's logits lie within a nat: near ties
    # in most prompts, which a batch's rounding would order otherwise)
    scorer = MaskedLMScorer(real_bert, device="cpu", batch_size=1)
    ids = [scorer.tokenizer.convert_tokens_to_ids(w) for w in words]
    scores = np.empty((len(prompts), len(words)), dtype=np.float32)
    for batch in scorer.score_vocab(list(prompts.prompt), np.array(ids), progress=False):
        scores[batch.rows] = batch.shared[batch.batch_rows].numpy()
    sensible = {  # the answers to the relation of every concept, not only those run
        relation: sorted({index[w] for g in rows.gold for w, _ in parse_gold(g)})
        for relation, rows in plan.work.rows.groupby("relation")
    }
    for row, prompt in enumerate(prompts.itertuples()):
        relevant = np.zeros(len(words), dtype=bool)
        relevant[[index[w] for w, _ in parse_gold(prompt.gold)]] = True
        assert prompt.ap_vocab == pytest.approx(
            average_precision_score(relevant, scores[row]), abs=1e-6
        )
        among = sensible[prompt.relation]
        assert prompt.ap_sens == pytest.approx(
            average_precision_score(relevant[among], scores[row, among]), abs=1e-6
        )


@pytest.mark.parametrize(
    ("relation", "with_prefix", "without_prefix"),
    [
        ("is", "Everyone knows that a bear is <mask>.", "A bear is <mask>."),
        ("is a", "Everyone knows that a bear is a <mask>.", "A bear is a <mask>."),
        ("has", "Everyone knows that a bear has <mask>.", "A bear has <mask>."),
        ("has a", "Everyone knows that a bear has a <mask>.", "A bear has a <mask>."),
        ("made of", "Everyone knows that a bear is made of <mask>.", "A bear is made of <mask>."),
    ],
)
def test_every_relation_reads_as_the_paper_words_it(relation, with_prefix, without_prefix):
    """The paper's templates are {is, has, is a, has a, is made of}: `made of` once read
    "a bear made of <mask>" (issue 22, item 0)."""
    assert elicitation_prompt("bear", relation) == with_prefix
    assert elicitation_prompt("bear", relation, prefix=False) == without_prefix


@pytest.mark.slow
def test_the_header_names_the_templates_prefix(tiny_bert, toy_norms_path, tmp_path):
    """The header said "Everyone knows that" for a template whose prefix is "We know that";
    the figure's y-axis said "the vocabulary or the candidates" whichever the run used."""
    import tacit
    from tacit.probes import registry

    mine = tmp_path / "we.jsonl"
    mine.write_text('{"relation": "has", "template": "{We know that} [a X] has [Y]."}\n')
    ours = tacit.elicit(
        [tiny_bert], norms=toy_norms_path, relations=["has"], templates=mine, quiet=True
    )
    assert "with the prefix 'We know that'" in ours.text
    assert "Everyone knows" not in ours.text
    paper = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has"], quiet=True)
    assert "with the prefix 'Everyone knows that'" in paper.text
    spans = tacit.elicit(
        [tiny_bert],
        norms=toy_norms_path,
        relations=["has"],
        candidates="answers",
        quiet=True,
    )
    probe = registry.get("elicit")
    for result, over in ((paper, "the shared vocabulary"), (spans, "the candidates")):
        ((_, figure),) = report_of(probe).figures([("run", result.summary, result.manifest)])
        assert " ".join(figure.axes[0].get_ylabel().split()) == f"mAP over {over}"
