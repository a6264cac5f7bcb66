"""Paraphrases (issue 29): a run with several templates per question scores each template as a
run with that template alone does, and its ensemble (per candidate, the mean log-probability
over the templates), spread and consistency (ParaRel: pairs of templates whose top answers
agree) equal a computation of their own from plain forward passes, in vocabulary and span
modes, with masked and causal models."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from support import TOY_WORDS, causal_vocab_reference, plain_span_scores, reference

import tacit
from tacit.core.display import render
from tacit.core.metrics import average_precision
from tacit.probes import registry
from tacit.probes.report import report_of
from tacit.ranking.spans import shares

RETRIEVAL = [
    {"id": "paper", "template": "[A Y] [P]."},
    {"id": "called", "template": "Something that [P] is called [a Y]."},
]
AT_THE_END = [
    {"id": "called", "template": "Something that [P] is called [a Y]."},
    {"id": "named", "template": "The thing that [P] is named [a Y]."},
]
HAS = [
    {"id": "paper", "relation": "has", "template": "{Everyone knows that} [a X] has [Y]."},
    {
        "id": "usually",
        "relation": "has",
        "template": "{Everyone knows that} [a X] usually has [Y].",
    },
]


def plain_scores(model: str, masked: str, texts: list[str], spans: list[str]) -> np.ndarray:
    """Plain [text x span] scores: the masked model's l2r span sums (support), a causal
    model's whole-sentence log-probabilities without the prefix cache, one sentence a batch."""
    from tacit.models.causal import CausalLMScorer

    if model == masked:
        return plain_span_scores(model, texts, spans, "l2r")[0]
    scorer = CausalLMScorer(model, batch_size=1)
    return scorer.score_spans(texts, spans, cache=False, progress=False).sentence


def write(path, templates):
    path.write_text("".join(json.dumps(t) + "\n" for t in templates))
    return str(path)


def alone(tmp_path, templates, run, **options):
    """Each template's run with that template alone, by id."""
    return {
        t["id"]: run(templates=write(tmp_path / f"{t['id']}.jsonl", [t]), **options)
        for t in templates
    }


def consistency(tops):
    """ParaRel's consistency from runs of one template each (`tops`: each run's top answer
    per question, aligned): per question, the share of pairs of templates whose top answers
    agree, averaged."""
    agree = [
        np.mean([a == b for a, b in itertools.combinations(answers, 2)]) for answers in zip(*tops)
    ]
    return float(np.mean(agree))


def top_word(prompts):
    return list(prompts["top5"].str.split(":").str[0])


def ensemble_rows(result):
    return result.prompts[result.prompts["template"] == "ensemble"].reset_index(drop=True)


def ranks(scores, targets):
    return np.array([1 + (row > row[t]).sum() for row, t in zip(scores, targets)])


@pytest.mark.slow
def test_retrieval_over_the_vocabulary(tiny_bert, toy_norms_path, tmp_path):
    def run(**options):
        return tacit.retrieve(
            [tiny_bert], norms=str(toy_norms_path), max_props=2, quiet=True, **options
        )

    both = run(templates=write(tmp_path / "both.jsonl", RETRIEVAL))
    single = alone(tmp_path, RETRIEVAL, run)
    prompts = both.prompts
    assert list(prompts.columns[7:9]) == ["item", "template"] and "top1" in prompts
    question = ["concept", "n_props"]
    for template, result in single.items():
        mine = prompts[prompts["template"] == template].reset_index(drop=True)
        for column in ("prompt", "rank", "top5"):
            assert list(mine[column]) == list(result.prompts[column]), column
        np.testing.assert_allclose(mine["target_prob"], result.prompts["target_prob"], rtol=1e-5)
    # the ensemble from plain forward passes: whole-vocabulary log-probabilities, averaged
    vocab = both.vocab
    ids = vocab.token_ids[tiny_bert]
    logs = {
        t: np.log(reference(tiny_bert, list(r.prompts["prompt"]), ids)[0])
        for t, r in single.items()
    }
    mean = np.mean([logs[t][:, ids] for t in single], axis=0)
    keys = single["paper"].prompts[question]
    ensemble = ensemble_rows(both)
    assert list(ensemble[question].itertuples(index=False)) == list(keys.itertuples(index=False))
    targets = [vocab.index(c) for c in keys["concept"]]
    np.testing.assert_array_equal(ensemble["rank"], ranks(mean, targets))
    np.testing.assert_allclose(
        ensemble["target_prob"], np.exp(mean[range(len(targets)), targets]), rtol=1e-4
    )
    np.testing.assert_allclose(
        ensemble["target_prob_shared"], shares(mean)[range(len(targets)), targets], rtol=1e-4
    )
    words = np.asarray(vocab.words)
    assert list(ensemble["top1"]) == list(words[mean.argmax(axis=1)])
    summary = both.summary
    assert list(summary["template"].unique()) == ["paper", "called", "ensemble"]
    at = summary[summary["template"] == "ensemble"].set_index("n_props")
    for n in (1, 2):
        mrrs = [r.summary.set_index("n_props").loc[n, "mrr"] for r in single.values()]
        assert at.loc[n, "spread"] == pytest.approx(max(mrrs) - min(mrrs))
        assert at.loc[n, "mrr"] == pytest.approx(
            np.mean(1 / ranks(mean, targets)[keys["n_props"] == n])
        )
        tops = [top_word(r.prompts[r.prompts["n_props"] == n]) for r in single.values()]
        assert at.loc[n, "consistency"] == pytest.approx(consistency(tops))
    assert "MRR per template, their ensemble, the spread" in str(both)
    assert both.manifest["templates"]["templates"] == RETRIEVAL
    main = registry.get("retrieve").main_rows(summary, both.manifest)
    assert list(main["template"]) == ["ensemble"]


@pytest.mark.slow
def test_elicitation_over_the_vocabulary(tiny_roberta, toy_norms_path, tmp_path):
    def run(**options):
        return tacit.elicit(
            [tiny_roberta], norms=str(toy_norms_path), relations=["has"], quiet=True, **options
        )

    both = run(templates=write(tmp_path / "both.jsonl", HAS))
    single = alone(tmp_path, HAS, run)
    vocab = both.vocab
    ids = vocab.token_ids[tiny_roberta]
    for template, result in single.items():
        mine = both.prompts[both.prompts["template"] == template].reset_index(drop=True)
        np.testing.assert_allclose(mine["ap_vocab"], result.prompts["ap_vocab"], rtol=1e-6)
        assert list(mine["top5"]) == list(result.prompts["top5"])
    mean = np.mean(
        [
            np.log(reference(tiny_roberta, list(r.prompts["prompt"]), ids)[0])[:, ids]
            for r in single.values()
        ],
        axis=0,
    )
    ensemble = ensemble_rows(both)
    golds = (
        single["paper"]
        .prompts["gold"]
        .str.split()
        .apply(lambda g: [vocab.index(a.rpartition(":")[0]) for a in g])
    )
    for row, (gold, scores) in enumerate(zip(golds, mean)):
        relevant = np.zeros(len(vocab), dtype=bool)
        relevant[gold] = True
        assert ensemble.loc[row, "ap_vocab"] == pytest.approx(
            average_precision(scores, relevant), rel=1e-5
        )
    row = both.summary[both.summary["template"] == "ensemble"].iloc[0]
    tops = [top_word(r.prompts) for r in single.values()]
    assert row["consistency"] == pytest.approx(consistency(tops))
    maps = [r.summary["map_vocab"].iloc[0] for r in single.values()]
    assert row["spread"] == pytest.approx(max(maps) - min(maps))
    assert row["map_vocab"] == pytest.approx(ensemble["ap_vocab"].mean())
    assert "mAP per template, their ensemble" in str(both)


@pytest.mark.slow
def test_retrieval_over_spans_masked_and_causal(tiny_roberta, tiny_gpt2, toy_norms_path, tmp_path):
    """The two templates put the concept in the blank in two forms ("A bear", "a bear"): the
    ensemble is taken concept by concept. (Byte-level tokenizers: every form is read whole.)"""

    def run(**options):
        return tacit.retrieve(
            [tiny_roberta, tiny_gpt2],
            norms=str(toy_norms_path),
            max_props=1,
            candidates="concepts",
            quiet=True,
            **options,
        )

    both = run(templates=write(tmp_path / "both.jsonl", RETRIEVAL))
    single = alone(tmp_path, RETRIEVAL, run)
    assert set(both.files) == {"candidates-A_Y.txt", "candidates-a_Y.txt"}
    spans = {t: r.files["candidates.txt"].splitlines() for t, r in single.items()}
    assert spans["paper"][:2] == ["A bear", "A cat"] and spans["called"][:2] == ["a bear", "a cat"]
    for model in (tiny_roberta, tiny_gpt2):
        mine = both.prompts[both.prompts["model"] == model]
        plain = {}
        for template, result in single.items():
            theirs = result.prompts[result.prompts["model"] == model].reset_index(drop=True)
            rows = mine[mine["template"] == template].reset_index(drop=True)
            assert list(rows["rank"]) == list(theirs["rank"])
            np.testing.assert_allclose(rows["target_score"], theirs["target_score"], rtol=1e-5)
            plain[template] = plain_scores(
                model, tiny_roberta, list(theirs["prompt"]), spans[template]
            )
        mean = np.mean(list(plain.values()), axis=0)
        concepts = single["paper"].prompts.query("model == @model")["concept"]
        targets = [
            spans["paper"].index(t)
            for t in single["paper"].prompts.query("model == @model")["target_span"]
        ]
        ensemble = mine[mine["template"] == "ensemble"]
        assert list(ensemble["concept"]) == list(concepts)
        np.testing.assert_array_equal(ensemble["rank"], ranks(mean, targets))
        np.testing.assert_allclose(
            ensemble["target_score"], mean[range(len(targets)), targets], rtol=1e-5, atol=1e-4
        )
        tops = [list(np.asarray(spans["paper"])[p.argmax(axis=1)]) for p in plain.values()]
        summary = both.summary.query("model == @model and template == 'ensemble'")
        assert summary["consistency"].iloc[0] == pytest.approx(consistency(tops))


@pytest.mark.slow
def test_a_concept_unread_in_one_form_is_left_out_of_every_form(
    tiny_bert, toy_norms_path, tmp_path
):
    """The toy BERT reads "an apple" but not "An apple": the concept leaves both templates'
    candidates (which stay aligned for the ensemble) and is counted with its reason."""
    result = tacit.retrieve(
        [tiny_bert],
        norms=str(toy_norms_path),
        max_props=1,
        candidates="concepts",
        quiet=True,
        templates=write(tmp_path / "both.jsonl", RETRIEVAL),
    )
    upper, lower = (result.files[f"candidates-{n}.txt"].splitlines() for n in ("A_Y", "a_Y"))
    assert [s.lower() for s in upper] == lower and "an apple" not in lower
    assert "apple" not in set(result.prompts["concept"])
    reasons = result.manifest["counts"]["concepts_dropped_by_reason"]
    assert any("not read whole" in reason for reason in reasons)
    assert "not read whole" in str(result)


@pytest.mark.slow
def test_elicitation_over_spans_masked_and_causal(tiny_bert, tiny_gpt2, toy_norms_path, tmp_path):
    """Answers of any length as candidate spans: each template's AP is its run's alone, and the
    ensemble's AP, spread and consistency come from the mean of plain span scores."""

    def run(**options):
        return tacit.elicit(
            [tiny_bert, tiny_gpt2],
            norms=str(toy_norms_path),
            relations=["has"],
            candidates="answers",
            quiet=True,
            **options,
        )

    both = run(templates=write(tmp_path / "both.jsonl", HAS))
    single = alone(tmp_path, HAS, run)
    spans = single["paper"].files["candidates-has.txt"].splitlines()
    assert len(spans) > 2 and both.files["candidates-has.txt"].splitlines() == spans
    for model in (tiny_bert, tiny_gpt2):
        mine = both.prompts[both.prompts["model"] == model]
        plain = {}
        for template, result in single.items():
            theirs = result.prompts[result.prompts["model"] == model].reset_index(drop=True)
            rows = mine[mine["template"] == template].reset_index(drop=True)
            np.testing.assert_allclose(rows["ap_vocab"], theirs["ap_vocab"], rtol=1e-6)
            plain[template] = plain_scores(model, tiny_bert, list(theirs["prompt"]), spans)
        mean = np.mean(list(plain.values()), axis=0)
        paper = single["paper"].prompts.query("model == @model").reset_index(drop=True)
        ensemble = mine[mine["template"] == "ensemble"].reset_index(drop=True)
        assert list(ensemble["concept"]) == list(paper["concept"])
        for row, (gold, scores) in enumerate(zip(paper["gold"], mean)):
            relevant = np.isin(spans, [g.rpartition(":")[0] for g in gold.split(" | ")])
            assert relevant.any()
            assert ensemble.loc[row, "ap_vocab"] == pytest.approx(
                average_precision(scores, relevant), rel=1e-5
            )
        assert list(ensemble["top1"]) == list(np.asarray(spans)[mean.argmax(axis=1)])
        summary = both.summary.query("model == @model").set_index("template")
        tops = [list(np.asarray(spans)[p.argmax(axis=1)]) for p in plain.values()]
        assert summary.loc["ensemble", "consistency"] == pytest.approx(consistency(tops))
        maps = [
            r.summary.loc[r.summary["model"] == model, "map_vocab"].iloc[0] for r in single.values()
        ]
        assert summary.loc["ensemble", "spread"] == pytest.approx(max(maps) - min(maps))
        assert summary.loc["ensemble", "map_vocab"] == pytest.approx(ensemble["ap_vocab"].mean())


@pytest.mark.slow
def test_a_causal_model_answers_retrieval_over_the_vocabulary(tiny_gpt2, toy_norms_path, tmp_path):
    """Templates whose blank ends the sentence let a causal model rank the concept over the
    vocabulary: each word with the "." after it (log P(w | before) + log P(. | before, w),
    every word's suffix scored, as the target's share of the vocabulary reads them all)."""
    words = tmp_path / "words.txt"
    words.write_text("\n".join(TOY_WORDS) + "\n")
    result = tacit.retrieve(
        [tiny_gpt2],
        norms=str(toy_norms_path),
        max_props=2,
        templates=write(tmp_path / "end.jsonl", AT_THE_END),
        vocab_file=str(words),
        quiet=True,
    )
    record = result.manifest["models"][0]
    assert record["kind"] == "causal"
    ids = result.vocab.token_ids[tiny_gpt2]
    rows = result.prompts[result.prompts["template"] != "ensemble"]
    assert rows["prompt"].str.endswith(" a <mask>.").all()
    distinct = rows["prompt"].nunique()  # each distinct prompt is scored once
    assert record["vocab_suffixes"] == record["vocab_suffixes_naive"] == distinct * len(ids)
    logs = causal_vocab_reference(tiny_gpt2, list(rows["prompt"]), ids)
    targets = [result.vocab.index(c) for c in rows["concept"]]
    np.testing.assert_array_equal(rows["rank"], ranks(logs, targets))
    items = rows["item"].to_numpy()
    mean = np.array([logs[items == i].mean(axis=0) for i in dict.fromkeys(items)])
    ensemble = ensemble_rows(result)
    np.testing.assert_array_equal(ensemble["rank"], ranks(mean, targets[::2]))


def test_one_template_keeps_the_paper_columns(tiny_bert, toy_norms_path):
    result = tacit.retrieve([tiny_bert], norms=str(toy_norms_path), max_props=1, quiet=True)
    assert not {"item", "template", "top1"} & set(result.prompts.columns)
    assert "template" not in result.summary
    assert result.manifest["templates"]["file"] == "paper.jsonl"


@pytest.mark.slow
def test_the_shipped_paraphrases_run(tiny_bert, toy_norms_path):
    result = tacit.elicit(
        [tiny_bert],
        norms=str(toy_norms_path),
        templates="paraphrases",
        relations=["has"],
        prefix="both",
        quiet=True,
    )
    summary = result.summary
    assert set(summary["template"]) == {"paper", "usually", "typically", "ensemble"}
    assert summary.loc[summary["template"] == "ensemble", "consistency"].between(0, 1).all()
    table = render(report_of(registry.get("elicit")).table(summary.assign(run="r")))
    assert "without the prefix" in table and "usually" not in table  # the ensemble's rows
    assert pd.isna(summary.loc[summary["template"] == "paper", "spread"]).all()


def test_templates_are_a_sweep_axis(tiny_bert, toy_norms_path, tmp_path):
    from typer.testing import CliRunner

    from tacit.cli import app

    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'models = ["{tiny_bert}"]\nnorms = ["{toy_norms_path}"]\n\n'
        '[retrieve]\nmax_props = 2\ntemplates = ["paper", "paraphrases"]\n'
    )
    dry = CliRunner().invoke(app, ["sweep", str(grid), "--out", str(tmp_path / "g"), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "templates=paper" in dry.stdout and "templates=paraphrases" in dry.stdout
    paper, paraphrases = (
        registry.get("retrieve").estimate(
            registry.get("retrieve").validate(
                {"norms": str(toy_norms_path), "max_props": 2, "templates": name}, context="sweep"
            )
        )
        for name in ("paper", "paraphrases")
    )
    assert paraphrases == 3 * paper  # three retrieval templates
