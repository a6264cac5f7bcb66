"""A run by generation with a thinking model (issue 60): the thinking kept apart from the
answers (answers.csv's `reasoning`, messages.jsonl's `reasoning`), never matched, counted in
the model's record, and a note where a completion spent its --max-tokens thinking."""

from __future__ import annotations

import json

import pandas as pd
from support import Scripted, assert_declared

import tacit


def test_an_elicitation_keeps_the_thinking_apart(toy_norms_path, tmp_path):
    """bear thinks of claws then answers fur: only fur is read (claws, in the thinking, is
    never matched); cat thinks to the limit: no answer, one note."""
    model = Scripted(
        {
            "a bear has ___": "<think>Claws? No: the first is fur.</think>\n1. thick fur",
            "a cat has ___": "<think>A cat has claws and fur and...",
        }
    )
    result = tacit.elicit(
        [model], norms=toy_norms_path, by="generation", relations=["has"], concepts=["bear", "cat"]
    )
    answers = result.extra["answers"]
    bear = answers[answers["concept"] == "bear"]
    assert bear["answer"].tolist() == ["thick fur"]
    assert bear["matched"].tolist() == ["has fur_hair"]
    assert bear["reasoning"].tolist() == ["Claws? No: the first is fur."]
    cat = answers[answers["concept"] == "cat"]
    assert cat["answer"].tolist() == [""] and cat["matched"].tolist() == [""]
    assert cat["reasoning"].tolist() == ["A cat has claws and fur and..."]
    rows = result.prompts.set_index("concept")
    assert rows.loc["bear", "recall"] == 0.5 and rows.loc["cat", "recall"] == 0
    record = result.manifest["models"][0]
    assert record["generation_thought_to_limit"] == 1
    assert record.get("generation_reasoning_tokens", 0) == 0  # the scripted model counts none
    thinking = result.manifest["generation"]["thinking"]
    assert thinking == {"completions_thought": 2, "reasoning_tokens": 0, "thought_to_limit": 1}
    (note,) = [n for n in result.notes if "thinking" in n]
    assert note.startswith("note: scripted: 1 completion(s) spent the whole max_tokens 64")
    assert_declared(result.manifest)
    result.save(tmp_path / "run")
    messages = [
        json.loads(line) for line in (tmp_path / "run/messages.jsonl").read_text().splitlines()
    ]
    by_concept = {m["concept"]: m["reasoning"] for m in messages}
    assert by_concept == {
        "bear": ["Claws? No: the first is fur."],
        "cat": ["A cat has claws and fur and..."],
    }
    saved = pd.read_csv(tmp_path / "run/answers.csv", keep_default_na=False)
    assert "reasoning" in saved.columns
    again = tacit.elicit(
        [f"scripted,recorded={tmp_path / 'run/answers.csv'}"],
        norms=toy_norms_path,
        by="generation",
        relations=["has"],
        concepts=["bear", "cat"],
    )
    assert again.extra["answers"]["reasoning"].tolist() == answers["reasoning"].tolist()
    assert again.extra["answers"]["answer"].tolist() == answers["answer"].tolist()


def test_a_model_that_never_thinks_writes_no_reasoning(toy_norms_path):
    model = Scripted({"a bear has ___": "1. thick fur"})
    result = tacit.elicit(
        [model], norms=toy_norms_path, by="generation", relations=["has"], concepts=["bear"]
    )
    assert "reasoning" not in result.extra["answers"].columns
    assert "thinking" not in result.manifest["generation"]
    assert "generation_reasoning_tokens" not in result.manifest["models"][0]
