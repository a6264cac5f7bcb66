"""Recorded answers as a model (`--model NAME,recorded=PATH`, issue 60): a file's completions
read instead of generated, so that published outputs and earlier runs are matched and scored
again under new rules. Each layout is read, every row is accounted for, and a run on a file
is the run on the model that said it."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support import Scripted, assert_declared
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.models.answers import GenerationRequest, Sampling
from tacit.models.families import resolve
from tacit.models.recorded import RecordedFamily
from tacit.models.recorded_answers import RecordedScorer, read_recorded

runner = CliRunner()
# Hansen & Hebart's released layout: no header; concept, answer, concept id, run number; one
# answer cut at the token limit, one with unescaped quotes (as their line 2101 has)
RELEASED = (
    'bear,"It has fur, it is big and it eats fish.",bear,22\n'
    'bear,"It has claws, it is brown, it has a",bear,6\n'
    'cat,"It is a pet, it has a tail or "brush", it purrs.",cat,22\n'
    'bat,"It flies, it is nocturnal.",bat1,22\n'
    'bat,"It is made of wood.",bat2,22\n'
)


def asked(concept: str, **more: str) -> GenerationRequest:
    return GenerationRequest.chat(
        [{"role": "user", "content": f"What are the properties of a {concept}?"}],
        {"concept": concept, **more},
    )


def test_a_released_table_is_read_as_a_person_would(tmp_path):
    """Draws in file order; a completion that ends mid-sentence was cut at its length; the
    row with unescaped quotes read from its line, the answer between its commas whole."""
    path = tmp_path / "raw_answers.csv"
    path.write_text(RELEASED)
    recorded = read_recorded(str(path), "gpt-3.5-turbo")
    scorer = RecordedScorer("gpt-3.5-turbo", recorded)
    said = scorer.generate([asked("bear"), asked("cat"), asked("wolf")], Sampling(n=1))
    assert [(c.text, c.finish_reason) for c in said[0]] == [
        ("It has fur, it is big and it eats fish.", "stop"),
        ("It has claws, it is brown, it has a", "length"),
    ]
    assert said[1][0].text == 'It is a pet, it has a tail or "brush", it purrs.'
    assert said[2] == []  # nothing recorded for it: no completion, counted
    record = scorer.record()["recorded"]
    assert record["lines_repaired"] == [3] and record["rows"] == 5
    assert record["finish_reasons_inferred"] == {"length": 1, "stop": 4}
    assert record["requests_answered"] == 2 and record["without_answers"] == ["concept=wolf"]
    assert record["texts_of_several_concepts"] == ["bat"]  # bat1, bat2: neither for `bat`
    assert scorer.generate([asked("bat")])[0] == []
    assert scorer.generate([asked("bat1")])[0][0].text == "It flies, it is nocturnal."


def test_a_line_that_cannot_be_read_is_named(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text('bear,"It has fur.",bear,22\nbear\n')
    with pytest.raises(TacitError, match=r"raw.csv:2: 'bear' does not split into 4 fields"):
        read_recorded(str(path), "m")


def test_a_table_with_a_header_and_its_draws(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text(
        "concept,draw,answer,finish_reason\nbear,1,claws,stop\nbear,0,fur,stop\n,0,x,stop\n"
    )
    recorded = read_recorded(str(path), "m")
    assert [c.text for c in recorded.answers({"concept": "bear"})] == ["fur", "claws"]
    assert recorded.record()["rows_left_out"] == {"no concept": {"rows": 1, "lines": [4]}}
    assert recorded.finish_inferred == {}


def test_a_run_s_answers_csv_is_its_completions_again(tmp_path, toy_norms_path):
    """A run's answers.csv, read as a model, answers each prompt with what was said to it:
    the run again gives the same rows, and the manifest names the file and its sha256."""
    model = Scripted(
        {
            "a bear has ___": ["1. Thick fur\n2. sharp claws\n3. paws", "fur, claws and..."],
            "a cat has ___": ["I'm sorry, I cannot answer that.", "- a tail"],
        }
    )
    options = {"norms": toy_norms_path, "by": "generation", "relations": ["has"]}
    options |= {"concepts": ["bear", "cat"], "samples": 2, "temperature": 1.0}
    first = tacit.elicit([model], **options)
    first.save(tmp_path / "first")
    path = tmp_path / "first" / "answers.csv"
    again = tacit.elicit([f"scripted,recorded={path}"], **options)
    columns = ["concept", "recall_pf", "precision", "n_draws", "n_refusal", "novel", "listed"]
    pd.testing.assert_frame_equal(first.prompts[columns], again.prompts[columns])
    record = again.manifest["models"][0]
    assert record["kind"] == "recorded" and record["recorded"]["layout"] == "answers.csv"
    assert record["recorded"]["sha256"] == tacit.core.files.file_sha256(path)
    assert record["recorded"]["keys"] == ["relation", "prefix", "concept", "prompt"]
    assert record["recorded"]["model"] == "scripted"
    assert_declared(again.manifest)
    # another relation was never answered: nothing is recorded for it
    other = tacit.elicit([f"scripted,recorded={path}"], **(options | {"relations": ["is"]}))
    assert other.prompts.empty
    assert set(other.extra["dropped"]["reason"].str.startswith("no completion")) >= {True}


def test_a_file_of_several_models_needs_one_named(tmp_path):
    path = tmp_path / "answers.csv"
    frame = "model,concept,draw,position,completion,finish_reason,answer,normal,matched,rule,status"
    path.write_text(
        f"{frame}\na,bear,0,1,fur,stop,fur,fur,,,ok\nb,bear,0,1,fin,stop,fin,fin,,,ok\n"
    )
    assert read_recorded(str(path), "b").answers({"concept": "bear"})[0].text == "fin"
    with pytest.raises(TacitError, match=r"answers of 2 models \(a, b\); name one"):
        read_recorded(str(path), "c")


def test_the_family_claims_recorded_and_takes_no_other_option(toy_norms_path):
    family, spec = resolve("gpt-3.5-turbo,recorded=x.csv", {})
    assert isinstance(family, RecordedFamily) and spec.name == "gpt-3.5-turbo"
    with pytest.raises(TacitError, match="'dtype' is not a loading option of completions"):
        resolve("gpt-3.5-turbo,recorded=x.csv,dtype=float16", {})
    with pytest.raises(TacitError, match="recorded=missing.csv: no such file"):
        tacit.elicit(
            ["m,recorded=missing.csv"],
            norms=toy_norms_path,
            by="generation",
            relations=["all"],
            quiet=True,
        )


def test_the_command_line_scores_a_recorded_free_listing(tmp_path, toy_norms_path):
    path = tmp_path / "raw.csv"
    path.write_text(RELEASED)
    out = tmp_path / "run"
    args = ["elicit", "--by", "generation", "--relation", "all", "--norms", str(toy_norms_path)]
    args += ["-m", f"gpt-3.5-turbo,recorded={path}", "--questions", "hansen-hebart"]
    result = runner.invoke(app, [*args, "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    assert list(prompts["concept"]) == ["bear", "cat"]  # the others: nothing recorded
    messages = [json.loads(line) for line in (out / "messages.jsonl").read_text().splitlines()]
    assert messages[0]["messages"][-1]["content"] == "What are the properties of a bear?"
    assert (out / "by_relation.csv").is_file()


def test_several_recorded_draws_are_no_ranked_list(tmp_path, toy_norms_path):
    """Retrieval reads a ranked list from one completion a prompt: a recorded model's two
    draws are refused in one line naming --samples, not read as one list."""
    path = tmp_path / "table.csv"
    path.write_text("concept,answer\nbear,bear\nbear,wolf\n")
    with pytest.raises(TacitError, match="2 completions of one prompt .* samples N reads"):
        tacit.retrieve(
            [f"m,recorded={path}"],
            norms=toy_norms_path,
            by="generation",
            concepts=["bear"],
            max_props=1,
            quiet=True,
        )
