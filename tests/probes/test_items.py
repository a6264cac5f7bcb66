"""`probe items` (issue 29): a user's cloze items, every candidate scored as a span in the blank;
scores equal the candidate scoring of the same texts, metrics equal a count of their own, CSV
and JSON lines read alike, and a bad file is one line naming the file, line and problem."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from support import fails_cleanly
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.probes.items.reading import read_items

# minimal pairs in the style of COMPS, multiple choice in the style of BEAR
ITEMS = [
    {
        "id": "fur",
        "group": "comps",
        "text": "[Y] has fur.",
        "candidates": ["A bear", "A knife"],
        "answer": "A bear",
    },
    {
        "id": "claws",
        "group": "comps",
        "text": "[Y] has claws.",
        "candidates": ["A cat", "A knife"],
        "answer": "A cat",
    },
    {
        "group": "bear",
        "text": "A knife is made of [Y].",
        "candidates": ["metal", "fur", "stripes", "a tail"],
        "answer": ["metal"],
    },
    {
        "group": "bear",
        "text": "A zebra has [Y].",
        "candidates": ["stripes", "a handle", "fur", "claws"],
        "answer": ["stripes", "fur"],
    },
]


def write(path, items):
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("normalize", ["sum", "mean", "pmi"])
@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_scores_equal_the_candidate_scoring(kind, normalize, tiny_bert, tiny_gpt2, tmp_path):
    from tacit.models.causal import CausalLMScorer
    from tacit.models.masked import MaskedLMScorer

    model = tiny_bert if kind == "masked" else tiny_gpt2
    result = tacit.items(
        str(write(tmp_path / "items.jsonl", ITEMS)),
        [model],
        k=2,
        normalize=normalize,
        quiet=True,
    )
    scorer = (MaskedLMScorer if kind == "masked" else CausalLMScorer)(model, batch_size=1)
    rows = result.prompts
    for item in ITEMS:
        text = item["text"].replace("[Y]", "<mask>")
        mine = rows[rows["text"] == text]
        raw = scorer.score_spans([text, "<mask>."], item["candidates"], progress=False)
        whole = raw.sentence if raw.sentence is not None else raw.span  # the sentence's, causal
        wanted = {
            "sum": whole[:1],
            "mean": raw.span[:1] / raw.n_tokens[:1],
            "pmi": whole[:1] - whole[1:],
        }[normalize]
        np.testing.assert_allclose(mine["score"], wanted[0], rtol=1e-5, atol=1e-5)
        answers = {item["answer"]} if isinstance(item["answer"], str) else set(item["answer"])
        assert list(mine["answer"]) == [c in answers for c in item["candidates"]]
        ranks = [1 + (wanted[0] > s).sum() for s in wanted[0]]
        assert list(mine["rank"]) == ranks
    # the summary against a count of its own
    best = rows[rows["answer"]].groupby("id", sort=False)["rank"].min()
    group = rows.drop_duplicates("id").set_index("id")["group"]
    choices = rows.groupby("id", sort=False).size()
    summary = result.summary.set_index("group")
    for name, ids in (("comps", group.index[group == "comps"]), ("all", group.index)):
        assert summary.loc[name, "n_items"] == len(ids)
        assert summary.loc[name, "accuracy"] == pytest.approx((best[ids] == 1).mean())
        assert summary.loc[name, "mrr"] == pytest.approx((1 / best[ids]).mean())
        # P@2 only over items with more than 2 candidates: with 2, it is 1 whatever the scores
        over = [i for i in ids if choices[i] > 2]
        assert summary.loc[name, "n_items_over_k"] == len(over)
        if over:
            assert summary.loc[name, "p_at_2"] == pytest.approx((best[over] <= 2).mean())
        else:
            assert np.isnan(summary.loc[name, ["p_at_2", "p_at_2_ci_low", "p_at_2_ci_high"]]).all()
        assert summary.loc[name, "accuracy_ci_low"] <= summary.loc[name, "accuracy"]
    assert list(summary.index) == ["comps", "bear", "all"]
    assert result.manifest["counts"] == {
        "items": 4,
        "candidates": 12,
        "items_by_group": {"comps": 2, "bear": 2},
    }
    assert result.manifest["normalize"] == normalize


@pytest.mark.slow
def test_from_the_command_line_and_as_csv(tiny_bert, tiny_roberta, tmp_path):
    csv = tmp_path / "items.csv"
    csv.write_text(
        "id,text,candidates,answer\n"
        'a,"[Y] has fur, claws.",A bear | A knife,A bear\n'
        "b,A knife is made of [Y].,metal | fur | a tail,metal | fur\n"
    )
    items, sha = read_items(csv)
    assert list(items["candidate"]) == ["A bear", "A knife", "metal", "fur", "a tail"]
    assert list(items["answer"]) == [True, False, True, True, False] and len(sha) == 64
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["items", str(csv), "-m", tiny_bert, "-m", tiny_roberta, "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "accuracy (P@1)" in result.stdout and "2 items, 5 candidates" in result.stdout
    said = " ".join(result.stdout.split())  # P@5 of items of 2 and 3 candidates: always 1
    assert "P@5: over the items with more than 5 candidates (none here)" in said
    shown = [line.split() for line in result.stdout.splitlines() if line.startswith("all")]
    assert len(shown) == 2 and all(cells[-1] == "–" for cells in shown)
    prompts = pd.read_csv(out / "prompts.csv")
    assert list(prompts.columns) == [
        "model",
        "id",
        "group",
        "text",
        "candidate",
        "answer",
        "score",
        "rank",
    ]
    assert len(prompts) == 10
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert list(summary["group"]) == ["all", "all"]  # no groups: every item together
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["probe"] == "items" and manifest["items"]["name"] == "items.csv"
    board = tacit.leaderboard(tmp_path)  # a row per model at every item together
    assert list(board["probe"]) == ["items", "items"] and set(board["metric"]) == {"accuracy"}
    assert sorted(board["value"]) == sorted(summary["accuracy"])


BAD = [
    ("not json", "line 2: not JSON"),
    ({"candidates": ["a", "b"], "answer": "a"}, "line 2: no `text`"),
    (
        {"text": "No blank.", "candidates": ["a", "b"], "answer": "a"},
        "needs one blank, written [Y], found 0",
    ),
    ({"text": "[Y] and <mask>.", "candidates": ["a", "b"], "answer": "a"}, "needs one blank"),
    ({"text": "[Y].", "candidates": "a b", "answer": "a"}, "`candidates` must be a list"),
    ({"text": "[Y].", "candidates": ["a"], "answer": "a"}, "needs two or more candidates"),
    ({"text": "[Y].", "candidates": ["a", "a"], "answer": "a"}, "candidate 'a' is given twice"),
    ({"text": "[Y].", "candidates": ["a", "b"], "answer": "c"}, "answer 'c' is not among"),
    ({"text": "[Y].", "candidates": ["a", "b"]}, "`answer` must be a candidate"),
    ({"text": "[Y].", "candidates": ["a", "b"], "answer": "a", "group": "all"}, "group 'all'"),
    (
        {"id": "x", "text": "[Y].", "candidates": ["a", "b"], "answer": "a"},
        "line 2: id 'x' repeats line 1",
    ),
]


@pytest.mark.parametrize(("line", "message"), BAD, ids=[m for _, m in BAD])
def test_a_bad_item_is_one_line_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "items.jsonl"
    first = {"id": "x", "text": "[Y].", "candidates": ["a", "b"], "answer": "a"}
    path.write_text(
        json.dumps(first) + "\n" + (line if isinstance(line, str) else json.dumps(line))
    )
    with pytest.raises(TacitError) as error:
        read_items(path)
    assert str(error.value).startswith(f"{path}, line 2") and message in str(error.value)


def test_bad_item_files_from_the_command_line(tiny_bert, tmp_path):
    csv = tmp_path / "items.csv"
    csv.write_text("text,candidates\n[Y].,a | b\n")
    fails_cleanly(["items", csv, "-m", tiny_bert], f"{csv}, line 1: no answer column")
    csv.write_text("text,candidates,answer\n[Y].,a | b,a,extra\n")
    fails_cleanly(["items", csv, "-m", tiny_bert], f"{csv}, line 2: 4 fields")
    fails_cleanly(["items", tmp_path / "none.jsonl", "-m", tiny_bert], "no such file")
    fails_cleanly(["items", csv, "-m", tiny_bert, "--k", "0"], "--k 0: must be at least 1")


def test_a_candidate_a_tokenizer_cannot_read_is_refused(tiny_bert, tmp_path):
    """An emoji is BERT's unknown token: scored, it would be the unknown token's probability."""
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"text": "[Y] has fur.", "candidates": ["A bear", "A knife"], "answer": "A bear"}\n'
        '{"text": "A cat has [Y].", "candidates": ["fur", "\\ud83d\\udc3b"], "answer": "fur"}\n'
    )
    fails_cleanly(
        ["items", path, "-m", tiny_bert],
        f"{path}, line 2: candidate '\U0001f43b' is not read whole by",
    )
