"""Retrieval and elicitation over candidate spans (issue 17), from the command line and the API:
ranks against the plain computation, every normalisation, the manifest, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support import TOY_NORMS, fails_cleanly, plain_span_scores, write_norms
from transformers import AutoTokenizer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.metrics import average_precision
from tacit.norms import read_norms
from tacit.probes.retrieve.prompts import concept_candidates

runner = CliRunner()


def ranks_of(scores: np.ndarray, targets: list[int]) -> np.ndarray:
    return np.array([1 + (row > row[t]).sum() for row, t in zip(scores, targets)])


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny_bert", "tiny_roberta"])
def test_retrieval_over_concepts_equals_the_plain_computation(
    request, model, toy_norms_path, tmp_path
):
    model_dir = request.getfixturevalue(model)
    out = tmp_path / "run"
    args = [
        "retrieve",
        "-m",
        model_dir,
        "--norms",
        str(toy_norms_path),
        "--candidates",
        "concepts",
        "--max-props",
        "3",
        "--out",
        str(out),
        "-q",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates.txt").read_text().splitlines()
    norms = read_norms(toy_norms_path)
    every, span_of = concept_candidates(norms, list(norms.concepts))
    # a span the tokenizer reads as an unknown token is left out, its concept dropped with why
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    unknown = {s for s in every.spans if tokenizer.unk_token in tokenizer.tokenize(" " + s)}
    assert spans == [s for s in every.spans if s not in unknown]
    readable = {c for c, s in span_of.items() if s not in unknown}
    assert set(prompts["concept"]) == readable  # every other concept is a target
    dropped = pd.read_csv(out / "dropped.csv")
    assert set(dropped["concept"]) == set(norms.concepts) - readable
    assert dropped["reason"].str.contains("not read whole .*an unknown token").all()
    assert "A bear" in spans and ("An apple" in spans) == (model == "tiny_roberta")
    assert (model == "tiny_bert") == bool(unknown)  # RoBERTa's bytes read every span
    templates = list(dict.fromkeys(prompts["prompt"]))
    plain, _ = plain_span_scores(model_dir, templates, spans, "l2r")
    row = {t: n for n, t in enumerate(templates)}
    per_prompt = plain[[row[p] for p in prompts["prompt"]]]
    targets = [spans.index(s) for s in prompts["target_span"]]
    np.testing.assert_array_equal(prompts["rank"], ranks_of(per_prompt, targets))
    np.testing.assert_allclose(
        prompts["target_score"], per_prompt[np.arange(len(targets)), targets], rtol=1e-5, atol=1e-4
    )
    assert (prompts["n_candidates"] == len(spans)).all()
    assert prompts["top5"].str.count(r" \| ").eq(4).all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["candidates"]["all"]["source"] == "concepts"
    assert manifest["candidates"]["all"]["size"] == len(spans)
    assert manifest["span_scoring"] == "l2r" and manifest["normalize"] == "sum"
    work = manifest["span_work"]
    assert 0 < work["span_rows"] < work["span_rows_naive"]
    summary = pd.read_csv(out / "summary.csv")
    assert summary["mrr"].between(0, 1).all() and summary["n_prompts"].sum() == len(prompts)
    assert "candidates: " in result.stdout and "rows: " in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("normalize", ["sum", "mean", "pmi"])
@pytest.mark.parametrize("scoring", ["l2r", "independent"])
def test_every_normalisation_from_the_api(tiny_roberta, toy_norms_path, normalize, scoring):
    result = tacit.retrieve(
        [tiny_roberta],
        norms=toy_norms_path,
        max_props=2,
        candidates="concepts",
        span_scoring=scoring,
        normalize=normalize,
        quiet=True,
    )
    prompts = result.prompts
    spans = result.files["candidates.txt"].splitlines()
    templates = list(dict.fromkeys(prompts["prompt"]))
    plain, lengths = plain_span_scores(tiny_roberta, templates, spans, scoring)
    if normalize == "mean":
        plain = plain / lengths
    elif normalize == "pmi":
        free, _ = plain_span_scores(tiny_roberta, ["<mask>."], spans, scoring)
        plain = plain - free
    row = {t: n for n, t in enumerate(templates)}
    per_prompt = plain[[row[p] for p in prompts["prompt"]]]
    targets = [spans.index(s) for s in prompts["target_span"]]
    np.testing.assert_allclose(
        prompts["target_score"], per_prompt[np.arange(len(targets)), targets], rtol=1e-5, atol=1e-4
    )
    np.testing.assert_array_equal(prompts["rank"], ranks_of(per_prompt, targets))
    assert result.prompts["target_prob"].isna().all() == (normalize != "sum")


@pytest.mark.slow
def test_elicitation_over_answers(tiny_roberta, tmp_path):
    norms = write_norms(
        tmp_path / "norms.dat",
        [
            *TOY_NORMS,
            ("bear", "visual perceptual", "has four legs", 9),
            ("dog", "visual perceptual", "has four legs", 14),
        ],
    )
    out = tmp_path / "run"
    args = [
        "elicit",
        "-m",
        tiny_roberta,
        "--norms",
        str(norms),
        "--relation",
        "has",
        "--candidates",
        "answers",
        "--out",
        str(out),
        "-q",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates-has.txt").read_text().splitlines()
    assert "four legs" in spans  # answers of several words are candidates
    assert "four legs:14" in prompts.loc[prompts["concept"] == "dog", "gold"].iloc[0]
    templates = list(prompts["prompt"])
    plain, _ = plain_span_scores(tiny_roberta, templates, spans, "l2r")
    for row, gold, ap in zip(plain, prompts["gold"], prompts["ap_vocab"]):
        relevant = np.isin(spans, [item.rpartition(":")[0] for item in gold.split(" | ")])
        assert ap == pytest.approx(average_precision(row, relevant), abs=1e-6)
    assert (prompts["ap_vocab"] == prompts["ap_sens"]).all()  # the answers are the sensible set
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["candidates"]["has"]["size"] == len(spans)
    assert pd.read_csv(out / "summary.csv")["map_vocab"].notna().all()


@pytest.mark.slow
def test_answers_a_tokenizer_cannot_read_are_left_out_and_counted(tiny_bert, tmp_path):
    """tiny BERT's word list has neither `four` nor `legs`: scored, the answer would be two
    unknown tokens (and could rank first); it is left out of the candidates, said and counted."""
    norms = write_norms(
        tmp_path / "norms.dat", [*TOY_NORMS, ("dog", "visual perceptual", "has four legs", 14)]
    )
    out = tmp_path / "run"
    args = [
        "elicit",
        "-m",
        tiny_bert,
        "--norms",
        str(norms),
        "--relation",
        "has",
        "--candidates",
        "answers",
        "--out",
        str(out),
        "-q",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "four legs" not in (out / "candidates-has.txt").read_text().splitlines()
    manifest = json.loads((out / "manifest.json").read_text())
    assert "four legs" in manifest["counts"]["answers_not_read_whole"]
    assert manifest["counts"]["answers_not_candidates"][0]["not_read_whole"] >= 1
    assert "left out of the candidates, not read whole" in result.stderr


@pytest.mark.slow
def test_a_candidates_file_and_its_errors(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    base = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q"]
    blank = tmp_path / "blank.txt"
    blank.write_text("A bear\n\nA cat\n")
    fails_cleanly([*base, "--candidates", blank], f"{blank}, line 2: a blank line", tmp_path / "o")
    repeated = tmp_path / "repeated.txt"
    repeated.write_text("A bear\nA cat\nA bear\n")
    fails_cleanly([*base, "--candidates", repeated], "line 3: 'A bear' repeats line 1")
    short = tmp_path / "short.txt"
    short.write_text("A bear\nA cat\n")
    fails_cleanly([*base, "--candidates", short], "every target must be a candidate")
    fails_cleanly([*base, "--candidates", tmp_path / "none.txt"], "no such file")
    fails_cleanly([*base, "--normalize", "pmi"], "is an option of candidate spans")
    spans = tmp_path / "spans.txt"
    spans.write_text(
        "".join(f"{s}\n" for s in concept_candidates(read_norms(toy_norms_path), [])[0].spans)
        + "A unicorn\n"
    )
    # tiny BERT reads `An apple` (no `An` in its word list) as an unknown token: refused
    line = spans.read_text().splitlines().index("An apple") + 1
    fails_cleanly(
        [*base, "--candidates", spans],
        f"{spans}, line {line}: 'An apple' is not read whole by {tiny_bert}'s tokenizer",
    )
    base[2] = tiny_roberta  # byte-level BPE reads every span
    out = tmp_path / "run"
    assert runner.invoke(app, [*base, "--candidates", str(spans), "--out", str(out)]).exit_code == 0
    assert (out / "candidates.txt").read_text() == spans.read_text()
    assert (pd.read_csv(out / "prompts.csv")["n_candidates"] == 9).all()


def test_articles_file_overrides_the_lexicon(tiny_bert, toy_norms_path, tmp_path):
    articles = tmp_path / "articles.csv"
    articles.write_text("concept,article\napple,a\n")
    result = tacit.retrieve(
        [tiny_bert],
        norms=toy_norms_path,
        max_props=1,
        candidates="concepts",
        articles=articles,
        quiet=True,
    )
    assert "A apple" in result.files["candidates.txt"].splitlines()
    assert result.manifest["options"]["articles"] == str(articles)


@pytest.mark.slow
def test_masked_and_causal_models_rank_the_same_candidates(
    tiny_bert, tiny_gpt2, toy_norms_path, tmp_path
):
    """`-m bert -m gpt2` in one run (issue 19): the causal model ranks spans by the whole
    sentence's log-probability (score_spans' `sentence`, itself checked against a plain forward
    pass in test_causal), over the same candidates and prompts."""
    from tacit.models.causal import CausalLMScorer

    out = tmp_path / "run"
    args = [
        "retrieve",
        "-m",
        tiny_bert,
        "-m",
        tiny_gpt2,
        "--norms",
        str(toy_norms_path),
        "--candidates",
        "concepts",
        "--max-props",
        "2",
        "--out",
        str(out),
        "-q",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates.txt").read_text().splitlines()
    causal = prompts[prompts["model"] == tiny_gpt2]
    assert len(causal) == len(prompts) / 2
    plain = (
        CausalLMScorer(tiny_gpt2, batch_size=1)
        .score_spans(list(causal["prompt"]), spans, cache=False, progress=False)
        .sentence
    )
    targets = [spans.index(s) for s in causal["target_span"]]
    np.testing.assert_array_equal(causal["rank"], ranks_of(plain, targets))
    assert causal["target_prob"].isna().all()  # a sentence's probability is not the span's
    said = " ".join(result.stdout.split())  # the dash in the table says why
    assert f"prob – for {Path(tiny_gpt2).name}: " in said and "decoder-only" in said
    manifest = json.loads((out / "manifest.json").read_text())
    assert [m["kind"] for m in manifest["models"]] == ["masked", "causal"]
    assert {"span_rows", "span_tokens"} <= set(manifest["span_work"])


def test_a_causal_model_needs_candidates_for_retrieval(tiny_gpt2, toy_norms_path):
    fails_cleanly(["retrieve", "-m", tiny_gpt2, "--norms", toy_norms_path], "--candidates concepts")
