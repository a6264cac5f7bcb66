"""`--token-scores` (issue 41): span-scoring probes keep the per-token log-probabilities of the
candidates their rows list in tokens.csv (surprisal.csv's columns: nats and bits), from the CLI
and the Python API; the tokens of a candidate add up to its span score; every other file is the
same as without the option; the manifest records it; vocabulary mode refuses it in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from support import fails_cleanly
from test_items import ITEMS, write
from typer.testing import CliRunner

import tacit
from tacit.cli import app

runner = CliRunner()
TOKEN_COLUMNS = ["candidate", "index", "token", "logprob", "surprisal_nats", "surprisal_bits"]


def run(args: list, out) -> dict:
    result = runner.invoke(app, [*map(str, args), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return json.loads((out / "manifest.json").read_text())


def span_sums(tokens: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Each listed candidate's tokens' log-probabilities added up."""
    return tokens.groupby([*keys, "candidate"], sort=False)["logprob"].sum()


def assert_same_files(a, b, names=("prompts.csv", "summary.csv")) -> None:
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.slow
def test_items_keep_every_candidates_tokens_from_the_cli(tiny_bert, tmp_path):
    """A masked LM ranked by `sum`: an item's score is its candidate's span score, the sum of
    the candidate's tokens' log-probabilities; surprisal in nats and bits as surprisal.csv's."""
    items = write(tmp_path / "items.jsonl", ITEMS)
    args = ["items", items, "-m", tiny_bert]
    run(args, tmp_path / "plain")
    manifest = run([*args, "--token-scores"], tmp_path / "tokens")
    assert_same_files(tmp_path / "plain", tmp_path / "tokens")  # the same ranks and scores
    assert not (tmp_path / "plain" / "tokens.csv").exists()
    assert manifest["token_scores"] is True and "token_scores" not in json.loads(
        (tmp_path / "plain" / "manifest.json").read_text()
    )
    tokens = pd.read_csv(tmp_path / "tokens" / "tokens.csv", keep_default_na=False)
    assert list(tokens.columns) == ["model", "id", *TOKEN_COLUMNS]
    rows = pd.read_csv(tmp_path / "tokens" / "prompts.csv", keep_default_na=False)
    sums = span_sums(tokens, ["model", "id"])
    assert len(sums) == len(rows)  # every candidate of every item
    for model, item, candidate, score in zip(
        rows["model"], rows["id"], rows["candidate"], rows["score"]
    ):
        assert sums[(model, str(item), candidate)] == pytest.approx(score, abs=1e-5)
    np.testing.assert_allclose(tokens["surprisal_nats"], -tokens["logprob"])
    np.testing.assert_allclose(tokens["surprisal_bits"], -tokens["logprob"] / math.log(2))
    first = tokens.groupby(["id", "candidate"], sort=False)["index"].apply(list)
    assert all(indices == list(range(len(indices))) for indices in first)


@pytest.mark.slow
def test_items_from_the_python_api_with_a_causal_model(tiny_gpt2, tmp_path):
    """The API keyword; a causal model's candidate tokens are the sentence's tokens over the
    span (its leading space included: `Ġfur`), adding up to score_spans' span score."""
    from tacit.models.causal import CausalLMScorer

    items = str(write(tmp_path / "items.jsonl", ITEMS))
    plain = tacit.items(items, [tiny_gpt2], quiet=True)
    result = tacit.items(items, [tiny_gpt2], token_scores=True, quiet=True)
    pd.testing.assert_frame_equal(result.prompts, plain.prompts)
    tokens = result.extra["tokens"]
    assert "tokens" not in plain.extra
    scorer = CausalLMScorer(tiny_gpt2)
    for item in ITEMS:
        text = item["text"].replace("[Y]", "<mask>")
        raw = scorer.score_spans([text], item["candidates"], progress=False, tokens=True)
        mine = tokens[tokens["candidate"].isin(item["candidates"])]
        mine = mine[mine["id"] == result.prompts.loc[result.prompts["text"] == text, "id"].iloc[0]]
        sums = mine.groupby("candidate", sort=False)["logprob"].sum()
        for s, span in enumerate(item["candidates"]):
            assert sums[span] == pytest.approx(raw.span[0, s], abs=1e-5)
            assert tuple(mine.loc[mine["candidate"] == span, "token"]) == raw.tokens[0, s].tokens
    fur = tokens[(tokens["candidate"] == "fur") & (tokens["id"] == tokens["id"].iloc[-1])]
    assert list(fur["token"]) == ["Ġfur"]
    result.save(tmp_path / "saved")  # written whole and read back with the run
    again = tacit.load(tmp_path / "saved")
    pd.testing.assert_frame_equal(again.extra["tokens"], tokens, check_dtype=False, atol=1e-6)


@pytest.mark.slow
def test_retrieval_keeps_the_targets_and_top_candidates_tokens(tiny_bert, toy_norms_path, tmp_path):
    args = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--candidates", "concepts"]
    args += ["--max-props", "2"]
    run(args, tmp_path / "plain")
    manifest = run([*args, "--token-scores"], tmp_path / "tokens")
    assert_same_files(tmp_path / "plain", tmp_path / "tokens")
    assert manifest["token_scores"] is True
    tokens = pd.read_csv(tmp_path / "tokens" / "tokens.csv", keep_default_na=False)
    assert list(tokens.columns) == ["model", "prompt", *TOKEN_COLUMNS]
    rows = pd.read_csv(tmp_path / "tokens" / "prompts.csv", keep_default_na=False)
    sums = span_sums(tokens, ["model", "prompt"])
    for model, prompt, target, score, top in zip(
        rows["model"], rows["prompt"], rows["target_span"], rows["target_score"], rows["top5"]
    ):
        assert sums[(model, prompt, target)] == pytest.approx(score, abs=1e-5)  # `sum`, masked
        for listed in top.split(" | "):
            span, _, value = listed.rpartition(":")
            assert sums[(model, prompt, span)] == pytest.approx(float(value), rel=1e-3)


@pytest.mark.slow
def test_elicitation_keeps_the_gold_answers_tokens(tiny_roberta, toy_norms_path, tmp_path):
    args = ["elicit", "-m", tiny_roberta, "--norms", toy_norms_path, "-r", "has"]
    args += ["--candidates", "answers", "--normalize", "mean"]
    run(args, tmp_path / "plain")
    run([*args, "--token-scores"], tmp_path / "tokens")
    assert_same_files(tmp_path / "plain", tmp_path / "tokens")
    tokens = pd.read_csv(tmp_path / "tokens" / "tokens.csv", keep_default_na=False)
    rows = pd.read_csv(tmp_path / "tokens" / "prompts.csv", keep_default_na=False)
    listed = set(zip(tokens["prompt"], tokens["candidate"]))
    for prompt, gold in zip(rows["prompt"], rows["gold"]):
        for answer in gold.split(" | "):
            assert (prompt, answer.rpartition(":")[0]) in listed


@pytest.mark.parametrize("probe", ["retrieve", "elicit"])
def test_vocabulary_mode_refuses_token_scores_in_one_line(
    probe, tiny_bert, toy_norms_path, tmp_path
):
    out = tmp_path / "run"
    args = [probe, "-m", tiny_bert, "--norms", toy_norms_path, "--token-scores", "--out", out]
    fails_cleanly(args, "--token-scores is an option of candidate spans", out)
    with pytest.raises(tacit.TacitError, match=f"^{probe}: token_scores is an option of candidate"):
        getattr(tacit, probe)([tiny_bert], norms=toy_norms_path, token_scores=True, quiet=True)


@pytest.mark.slow
def test_several_templates_keep_each_templates_tokens(
    tiny_roberta, tiny_gpt2, toy_norms_path, tmp_path
):
    """With paraphrases whose blanks take two forms ("A bear", "a bear"), each template's
    prompt lists its own form's tokens; the ensemble's rows (no prompt) add none; prompts.csv
    is the same as without the option."""
    from test_paraphrase import RETRIEVAL
    from test_paraphrase import write as write_templates

    given = dict(norms=str(toy_norms_path), max_props=1, candidates="concepts", quiet=True)
    given["templates"] = write_templates(tmp_path / "both.jsonl", RETRIEVAL)
    models = [tiny_roberta, tiny_gpt2]
    plain, result = (
        tacit.retrieve(models, **given),
        tacit.retrieve(models, token_scores=True, **given),
    )
    pd.testing.assert_frame_equal(result.prompts, plain.prompts)
    tokens = result.extra["tokens"]
    rows = result.prompts[result.prompts["template"] != "ensemble"]
    listed = set(zip(tokens["model"], tokens["prompt"], tokens["candidate"]))
    assert listed >= set(zip(rows["model"], rows["prompt"], rows["target_span"]))
    assert set(tokens["prompt"]) == set(rows["prompt"])
    assert {"A", "a"} <= {c.split()[0] for c in tokens["candidate"]}
