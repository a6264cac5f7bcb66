"""`probe surprisal` (issue 41): every token's (or word's) log-probability and surprisal in a
user's texts, masked and causal models, from the API and the command line; the rows are the
scorer's token scores (tests/models/test_token_scores.py checks those against a plain
computation and minicons), words their tokens' sums, the summary a count of its own; texts from
a text file, CSV or JSON lines, each problem one line; a resumed run writes the same files."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from support import fails_cleanly, save_tiny_gpt2, toy_gpt2_tokenizer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer
from tacit.probes.surprisal.reading import read_texts

TEXTS = [
    "A bear has fur.",
    "Everyone knows that a cat has a tail.",
    "A bear has fur.",  # again: scored once, a row set of its own
    "The dog barks and fetches.",
]
runner = CliRunner()


@pytest.fixture(scope="module")
def toy_gpt2(tmp_path_factory) -> str:
    """A tiny causal LM on the toy byte-level BPE (no ../shared needed)."""
    directory = tmp_path_factory.mktemp("toy-gpt2")
    return str(save_tiny_gpt2(directory, toy_gpt2_tokenizer(directory)))


@pytest.mark.parametrize("pll", ["original", "within_word_l2r"])
@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_rows_are_the_token_scores_and_the_summary_counts_them(kind, pll, tiny_bert, toy_gpt2):
    model = tiny_bert if kind == "masked" else toy_gpt2
    result = tacit.surprisal(TEXTS, [model], pll=pll, quiet=True)
    scorer = (MaskedLMScorer if kind == "masked" else CausalLMScorer)(model, batch_size=1)
    wanted = scorer.token_scores(TEXTS, pll=pll, progress=False)
    rows = result.prompts
    assert list(rows.columns) == [
        "model",
        "text_id",
        "text",
        "index",
        "token",
        "start",
        "end",
        "logprob",
        "surprisal_nats",
        "surprisal_bits",
    ]
    for text_id, (text, scores) in enumerate(zip(TEXTS, wanted)):
        mine = rows[rows["text_id"] == text_id]
        assert (mine["text"] == text).all() and list(mine["index"]) == list(range(len(mine)))
        assert tuple(mine["token"]) == scores.tokens
        np.testing.assert_array_equal(mine[["start", "end"]].to_numpy(), scores.offsets)
        np.testing.assert_allclose(mine["logprob"], scores.logprob, rtol=0, atol=1e-6)
    np.testing.assert_allclose(rows["surprisal_nats"], -rows["logprob"])
    np.testing.assert_allclose(rows["surprisal_bits"], -rows["logprob"] / math.log(2))
    summary = result.summary.set_index("text_id")
    for text_id in [0, 1, "all"]:
        mine = rows if text_id == "all" else rows[rows["text_id"] == text_id]
        total, n = mine["logprob"].sum(), len(mine)
        assert summary.loc[text_id, "n_tokens"] == n
        assert summary.loc[text_id, "logprob"] == pytest.approx(total)
        assert summary.loc[text_id, "mean_surprisal_bits"] == pytest.approx(
            -total / n / math.log(2)
        )
        assert summary.loc[text_id, "perplexity"] == pytest.approx(math.exp(-total / n))
    manifest = result.manifest
    assert manifest["texts"]["given"] == "a list" and manifest["texts"]["n_texts"] == 4
    assert manifest["texts"]["n_distinct"] == 3 and (manifest["by"], manifest["pll"]) == (
        "token",
        pll,
    )
    assert "surprisal (bits/token)" in str(result)


@pytest.mark.slow
def test_words_sum_their_tokens(tiny_bert, toy_gpt2):
    """--by word: whitespace-separated words ("fur." is one), each its tokens' sum; the
    summary's totals are the token rows' totals, its mean surprisal still per token."""
    tokens = tacit.surprisal(TEXTS, [tiny_bert, toy_gpt2], quiet=True)
    words = tacit.surprisal(TEXTS, [tiny_bert, toy_gpt2], by="word", quiet=True)
    rows = words.prompts
    assert list(rows.columns)[3:8] == ["index", "word", "start", "end", "n_tokens"]
    first = rows[(rows["model"] == toy_gpt2) & (rows["text_id"] == 0)]
    assert list(first["word"]) == ["A", "bear", "has", "fur."]
    assert list(first["start"]) == [0, 2, 7, 11] and list(first["end"]) == [1, 6, 10, 15]
    token_rows = tokens.prompts
    for (model, text_id), mine in rows.groupby(["model", "text_id"]):
        theirs = token_rows[(token_rows["model"] == model) & (token_rows["text_id"] == text_id)]
        assert mine["n_tokens"].sum() == len(theirs)
        assert mine["logprob"].sum() == pytest.approx(theirs["logprob"].sum())
    fur = first[first["word"] == "fur."]  # two tokens, " fur" and "."
    gpt2_rows = token_rows[(token_rows["model"] == toy_gpt2) & (token_rows["text_id"] == 0)]
    assert int(fur["n_tokens"].iloc[0]) == 2
    assert float(fur["logprob"].iloc[0]) == pytest.approx(gpt2_rows["logprob"].iloc[-2:].sum())
    merged = words.summary.merge(tokens.summary, on=["model", "text_id"], suffixes=("", "_t"))
    np.testing.assert_allclose(merged["logprob"], merged["logprob_t"])
    np.testing.assert_allclose(merged["mean_surprisal_bits"], merged["mean_surprisal_bits_t"])
    overall = words.summary[words.summary["text_id"] == "all"]
    np.testing.assert_allclose(
        overall["mean_word_surprisal_bits"],
        -overall["logprob"] / overall["n_words"] / math.log(2),
    )


@pytest.mark.slow
def test_from_the_command_line(tiny_bert, toy_gpt2, tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("A bear has fur.\n\n  Everyone knows that a cat has a tail.  \n")
    out = tmp_path / "run"
    args = ["surprisal", str(path), "-m", tiny_bert, "-m", toy_gpt2, "--by", "word"]
    result = runner.invoke(app, [*args, "--pll", "within_word_l2r", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert "surprisal (bits/token)" in result.stdout and "Each text" in result.stdout
    assert "note: 1 blank line of the file skipped" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "result.json",
        "summary.csv",
        "surprisal.csv",
    ]
    rows = pd.read_csv(out / "surprisal.csv")
    assert set(rows["text_id"]) == {1, 3}  # lines of the file
    assert set(rows["text"]) == {"A bear has fur.", "Everyone knows that a cat has a tail."}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["probe"] == "surprisal" and manifest["pll"] == "within_word_l2r"
    assert (
        manifest["texts"]["name"] == "texts.txt" and manifest["texts"]["blank_lines_skipped"] == 1
    )
    board = tacit.leaderboard(tmp_path)  # a row per model over every text
    assert set(board["metric"]) == {"mean surprisal (bits/token)"} and len(board) == 2
    loaded = tacit.load(out)
    written = pd.read_csv(out / "summary.csv")  # pandas reads `text_id` (1, 3, all) as text
    assert list(loaded.summary["text_id"].astype(str)) == list(written["text_id"])
    numbers = ["n_tokens", "n_words", "logprob", "mean_surprisal_bits", "perplexity"]
    pd.testing.assert_frame_equal(loaded.summary[numbers], written[numbers])


def test_csv_and_json_lines(tmp_path):
    csv = tmp_path / "texts.csv"
    csv.write_text('id,text,condition\na,"A bear has fur, claws.",x\n\n,A cat purrs.,y\n')
    texts = read_texts(csv)
    assert list(texts.table["text_id"]) == ["a", 4] and texts.table["text"][0].endswith("claws.")
    assert texts.source["name"] == "texts.csv" and len(texts.source["sha256"]) == 64
    jsonl = tmp_path / "texts.jsonl"
    jsonl.write_text('{"text": " A bear has fur. "}\n{"id": 7, "text": "A cat purrs."}\n')
    assert read_texts(jsonl).table.values.tolist() == [
        [1, "A bear has fur."],
        ["7", "A cat purrs."],
    ]


BAD = [
    ("texts.csv", "words\nA bear.\n", "line 1: no text column"),
    ("texts.csv", "text,id\nA bear.,a\nA cat.,a\n", "line 3: id 'a' repeats line 2"),
    ("texts.jsonl", '{"text": "A bear."}\n{"text": "  "}\n', "line 2: no `text` (or a blank"),
    ("texts.jsonl", '{"text": "A bear."}\n[1]\n', "line 2: expected a JSON object, one text"),
    ("texts.txt", "\n \n", "no text in the file"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD, ids=[b[2] for b in BAD])
def test_a_bad_file_is_one_line_naming_it(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(TacitError) as error:
        read_texts(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_bad_input_from_the_command_line_and_the_api(tiny_bert, tmp_path):
    fails_cleanly(["surprisal", tmp_path / "none.txt", "-m", tiny_bert], "no such file")
    path = tmp_path / "texts.txt"
    path.write_text("A bear has fur.\n")
    fails_cleanly(["surprisal", path, "-m", tiny_bert, "--pll", "l2r"], "--pll 'l2r': expected")
    fails_cleanly(["surprisal", path, "-m", tiny_bert, "--by", "char"], "--by 'char': expected")
    with pytest.raises(TacitError, match=r"texts\[1\] ' *': expected a text, not blank"):
        tacit.surprisal(["A bear.", "  "], [tiny_bert])
    with pytest.raises(TacitError, match="expected a file or a list of texts"):
        tacit.surprisal(42, [tiny_bert])


def test_a_model_that_cannot_score_tokens_is_refused_before_loading(tiny_bert, tmp_path):
    from support_nli import save_nli_classifier

    classifier = save_nli_classifier(tmp_path / "clf", {0: "entailment", 1: "contradiction"})
    with pytest.raises(TacitError, match="classifier model: it cannot score every token"):
        tacit.surprisal(TEXTS, [str(classifier)], quiet=True)


@pytest.mark.slow
def test_resume_gives_the_files_of_an_uninterrupted_run(tiny_bert, toy_gpt2, tmp_path, monkeypatch):
    """Chunks of one distinct text (its repeats with it), an interruption in the second model's
    second chunk: the resumed run scores only what was left and writes the same bytes (each
    text's token rows in order)."""
    import tacit.engine.runner
    import tacit.probes.surprisal.scoring as scoring

    monkeypatch.setattr(tacit.engine.runner, "CHUNK_TEXTS", 1)
    path = tmp_path / "texts.txt"
    path.write_text("\n".join([*TEXTS, "A cat has claws.", *TEXTS[:2]]) + "\n")
    base = ["surprisal", str(path), "-m", tiny_bert, "-m", toy_gpt2, "-q"]
    whole = tmp_path / "whole"
    assert runner.invoke(app, [*base, "--out", str(whole)]).exit_code == 0
    real = scoring.score_texts
    calls: list[int] = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 6:  # the second model's second chunk
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring, "score_texts", flaky)
    resumed = tmp_path / "resumed"
    assert runner.invoke(app, [*base, "--out", str(resumed)]).exit_code == 130
    calls.clear()
    monkeypatch.setattr(scoring, "score_texts", lambda *a, **k: calls.append(1) or real(*a, **k))
    result = runner.invoke(app, [*base, "--out", str(resumed), "--resume"])
    assert result.exit_code == 0, result.output
    assert len(calls) == 3  # 4 distinct texts: 4 chunks per model, 3 left
    for name in ("surprisal.csv", "summary.csv"):
        assert (resumed / name).read_bytes() == (whole / name).read_bytes(), name
