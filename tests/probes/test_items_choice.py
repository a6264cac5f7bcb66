"""`probe items --by generation` (issue 60): each item asked as a multiple-choice question, its
options lettered in an order shuffled per item from --seed and recorded; the answer read as a
letter or an option's text, accuracy with intervals, the letters answered against the right
ones (letters.csv), unreadable answers wrong and counted apart; beside the same items by
scoring through `probe compare`, and through a chat server."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support import Scripted, with_chat_template
from support_server import TestServer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.matching.choice import ChoiceMatcher, chosen
from tacit.matching.read import read_completion
from tacit.probes.items.choice import shuffled
from tacit.probes.items.reading import read_items

runner = CliRunner()

ITEMS = [
    {"id": "fur", "text": "[Y] has fur.", "candidates": ["A bear", "A knife"], "answer": "A bear"},
    {
        "id": "zebra",
        "group": "bear",
        "text": "A zebra has [Y].",
        "candidates": ["stripes", "a handle", "wings", "gills"],
        "answer": "stripes",
    },
    {
        "id": "knife",
        "group": "bear",
        "text": "A knife is made of [Y].",
        "candidates": ["metal", "fur", "feathers", "a tail"],
        "answer": "metal",
    },
    {
        "id": "cow",
        "group": "bear",
        "text": "A cow gives [Y].",
        "candidates": ["milk", "wool", "eggs"],
        "answer": "milk",
    },
]


@pytest.fixture
def items_file(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    return path


def letter_of(row: pd.Series, text: str) -> str:
    return "ABCD"[row["options"].split(" | ").index(text)]


def test_letters_option_texts_and_garbage_are_read_and_counted(items_file):
    """fur: the right letter; zebra: the right option's text; knife: a wrong letter; cow: two
    letters (unreadable, wrong). Accuracy 2/4; the letters table and the unreadable count
    equal a count made here from the recorded order."""
    order = shuffled(read_items(items_file)[0], 0).set_index("id")
    wrong = next(letter_of(order.loc["knife"], t) for t in ["fur", "feathers", "a tail"])
    model = Scripted(
        {
            "has fur": f"{letter_of(order.loc['fur'], 'A bear')}.",
            "zebra": "Stripes",
            "knife": f"The answer is {wrong}.",
            "cow": "A or B",
        }
    )
    result = tacit.items(items_file, [model], by="generation", quiet=True)
    rows = result.prompts.set_index("id")
    assert list(rows["correct"]) == [1.0, 1.0, 0.0, 0.0]
    assert rows.loc["knife", "chosen"] == wrong and rows.loc["cow", "chosen"] == ""
    assert list(rows["n_unreadable"]) == [0, 0, 0, 1]
    assert (rows["options"] == order["options"]).all()
    summary = result.summary.set_index("group")
    assert summary.loc["all", "accuracy"] == 0.5 and summary.loc["all", "n_unreadable"] == 1
    assert summary.loc["bear", "accuracy"] == pytest.approx(1 / 3)
    assert summary.loc["all", "accuracy_chance"] == pytest.approx(
        (1 / 2 + 1 / 4 + 1 / 4 + 1 / 3) / 4
    )
    low, high = summary.loc["all", ["accuracy_ci_low", "accuracy_ci_high"]]
    assert 0 <= low <= 0.5 <= high <= 1
    letters = result.extra["letters"].set_index("letter")
    picked = [c for c in rows["chosen"] if c]
    for letter in "ABCD":
        assert letters.loc[letter, "chosen"] == picked.count(letter)
        assert letters.loc[letter, "correct"] == list(rows["answer_letter"]).count(letter)
    assert letters.loc["unreadable", "chosen"] == 1
    assert result.manifest["choice"]["draws_unreadable"] == 1
    assert "unreadable 1" in result.text and "letters answered" in result.text
    asked = next(q for q in model.asked if "zebra" in q)
    assert "A zebra has ___." in asked and "\nA. " in asked and "\nD. " in asked
    answers = result.extra["answers"]
    assert set(answers.loc[answers["id"] == "cow", "matched"]) == {"A", "B"}


def test_the_order_is_drawn_from_the_seed_and_recorded(items_file):
    """The same seed, the same order (whatever else the file holds); another seed, another;
    the right letter points at the answer in the order shown."""
    items = read_items(items_file)[0]
    first, again = shuffled(items, 0), shuffled(items, 0)
    alone = shuffled(items[items["id"] == "knife"], 0)
    assert first.equals(again)
    assert alone.iloc[0]["options"] == first.set_index("id").loc["knife", "options"]
    orders = {tuple(shuffled(items, seed)["options"]) for seed in range(6)}
    assert len(orders) > 1
    for row in first.itertuples():
        shown = row.options.split(" | ")
        assert sorted(shown) == sorted(next(i["candidates"] for i in ITEMS if i["id"] == row.id))
        answer = next(i["answer"] for i in ITEMS if i["id"] == row.id)
        assert row.answer_letter == "ABCD"[shown.index(answer)]


def test_a_letter_is_read_alone_or_before_its_text_and_two_are_none():
    matcher = ChoiceMatcher.of(["a bear", "a table", "a chair"])
    found = [matcher.match(a).name for a in ["B", "(c)", "A) a bear", "a table", "chairs", "Z"]]
    assert found == ["B", "C", "A", "B", "C", ""]
    said = ["B.", "**B**", "B) a table", "(B) a table", "The answer is B.", "Answer: B", "A table"]
    said += ["(B)", "**(B)**", "The answer is (B).", "Answer: (B)"]  # a bracket all it holds
    for text in said:
        assert [r["matched"] for r in read_completion(text, "stop", matcher)] == ["B"], text
    assert chosen(["A", "A"]) == "A" and chosen(["A", "B"]) == "" and chosen([]) == ""


@pytest.mark.slow
def test_by_generation_stands_beside_by_scoring_in_compare(tiny_gpt2, items_file, tmp_path):
    """The same chat model on the same items, by scoring and by generation: `probe compare`
    pairs them over every item, the generation side named as such, its accuracy the one the
    summary has."""
    chat = with_chat_template(tiny_gpt2, tmp_path / "chat")
    runs = {"scored": [], "asked": ["--by", "generation", "--max-tokens", "4"]}
    for name, extra in runs.items():
        args = ["items", str(items_file), "-m", chat, "--out", str(tmp_path / name), "-q"]
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
    pairs = tacit.compare([tmp_path / "scored", tmp_path / "asked"])
    assert len(pairs) == 1
    pair = pairs.iloc[0]
    assert pair["model_b"].endswith("by generation)") and pair["n_units"] == len(ITEMS)
    assert pair["units_left_out"] == 0 and pair["units"] == "items"
    summary = pd.read_csv(tmp_path / "asked" / "summary.csv").set_index("group")
    assert pair["value_b"] == pytest.approx(summary.loc["all", "accuracy"])
    shown = runner.invoke(app, ["compare", str(tmp_path / "scored"), str(tmp_path / "asked")])
    assert shown.exit_code == 0, shown.output
    assert "items: accuracy of A - B, all items" in shown.output and "asked" in shown.output
    said = " ".join(shown.output.split())
    assert "paired over items" in said and "concept" not in said


@pytest.mark.slow
def test_through_a_chat_server(items_file, tmp_path):
    """`probe items --by generation` against a chat server: the run directory holds the
    letters table, the answers, the messages as sent, and the summary."""
    with TestServer(None, answer=lambda body: "A") as running:
        out = tmp_path / "run"
        args = ["items", str(items_file), "-m", running.spec(), "--by", "generation"]
        result = runner.invoke(app, [*args, "--out", str(out), "-q"])
        assert result.exit_code == 0, result.output
        asked = len(running.answered)
    assert asked == len(ITEMS)
    letters = pd.read_csv(out / "letters.csv").set_index("letter")
    assert letters.loc["A", "chosen"] == len(ITEMS) and letters.loc["unreadable", "chosen"] == 0
    rows = pd.read_csv(out / "prompts.csv", keep_default_na=False)
    summary = pd.read_csv(out / "summary.csv").set_index("group")
    assert summary.loc["all", "accuracy"] == (rows["answer_letter"] == "A").mean()
    messages = [json.loads(line) for line in (out / "messages.jsonl").read_text().splitlines()]
    assert "\nA. " in messages[0]["messages"][-1]["content"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["generation"]["questions"]["choice"].startswith("Which option")
    assert manifest["choice"]["seed"] == 0
