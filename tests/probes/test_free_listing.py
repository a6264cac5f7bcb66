"""Free listing (`probe elicit --by generation --relation all`, issue 60): the norming task as
the norms asked it, every property of a concept at once. A scripted model's listing is scored
against all of the concept's features and per relation of the features, each number by hand."""

from __future__ import annotations

import json

import pytest
from support import Scripted, assert_declared

import tacit
from tacit.ask.words import sentence
from tacit.core.errors import TacitError
from tacit.templates.questions import load_questions

KNIFE = (
    "It is sharp, it is made of metal, it has a handle, it has a blade, it can cut and it is "
    "used for spreading butter."
)


def listing(toy_norms_path, model, **options):
    return tacit.elicit(
        [model],
        norms=toy_norms_path,
        by="generation",
        relations=["all"],
        concepts=["knife", "apple"],
        **options,
    )


def test_a_free_listing_is_scored_over_every_feature_and_per_relation(toy_norms_path):
    """knife's features (pf): does cut 24, made of metal 20, is sharp 19, has a handle 10, is
    dangerous 9, is used for cooking 8, has a blade 7, is long 4, is shiny 3, is found in
    kitchens 2 (106). Listed: cut, metal, sharp, handle, blade (80); six answers, five
    matched. Per relation, an answer counts where it matched, else where its start puts it
    (`is used for spreading butter`: `is`)."""
    model = Scripted({"a knife": KNIFE, "an apple": "I'm sorry, I cannot answer that."})
    result = listing(toy_norms_path, model, guesses=6)  # all six read: asked for up to 6
    rows = result.prompts.set_index("concept")
    knife = rows.loc["knife"]
    assert knife["relation"] == "all" and knife["prompt"] == "a knife"
    assert knife["recall_pf"] == pytest.approx(80 / 106) and knife["recall"] == 0.5
    assert knife["precision"] == pytest.approx(5 / 6)
    assert knife["novel"] == "is used for spreading butter:1"
    assert rows.loc["apple", "n_refusal"] == 1 and rows.loc["apple", "recall_pf"] == 0
    by = result.extra["by_relation"].set_index(["concept", "relation"])
    assert by.loc[("knife", "is"), "recall_pf"] == pytest.approx(19 / 45)
    assert by.loc[("knife", "is"), "precision"] == pytest.approx(1 / 2)
    assert by.loc[("knife", "made of"), ["recall_pf", "precision"]].tolist() == [1.0, 1.0]
    assert by.loc[("knife", "has a"), ["recall", "precision"]].tolist() == [1.0, 1.0]
    assert by.loc[("knife", "does"), "listed"] == "does cut:1"
    assert ("knife", "has") not in by.index  # a knife has no `has` feature
    summary = result.summary.set_index("relation")
    assert list(summary.index)[0] == "all" and "made of" in summary.index
    assert summary.loc["all", "n_prompts"] == 2 and summary.loc["all", "n_refusal"] == 1
    assert summary.loc["all", "recall_pf"] == pytest.approx(80 / 106 / 2)
    assert model.asked[0].startswith("People were asked to list the properties")
    assert "properties of a knife" in model.asked[0]
    generation = result.manifest["generation"]
    assert generation["questions_from"] == "tacit" and list(generation["questions"]) == ["listing"]
    assert result.manifest["options"]["relations"] == ["all"]
    assert_declared(result.manifest)


def test_the_hansen_hebart_question_and_its_priming(toy_norms_path, tmp_path):
    """`What are the properties of a knife?`, after `--shots 1` demonstration answered as
    Hansen & Hebart primed: another concept's features in one sentence."""
    model = Scripted({"knife": KNIFE, "apple": "It is red."})
    result = listing(toy_norms_path, model, questions="hansen-hebart", shots=1)
    assert model.asked[0] == "What are the properties of a knife?"
    result.save(tmp_path / "run")
    first = json.loads((tmp_path / "run" / "messages.jsonl").read_text().splitlines()[0])
    shown, answered, asked = first["messages"]
    assert shown["content"].startswith("What are the properties of")
    shot = result.prompts.set_index("concept").loc[first["concept"], "shots"]
    phrases = tacit.load_norms(toy_norms_path).features_of(shot).sort_values("pf", ascending=False)
    assert answered["content"] == sentence(list(phrases["phrase"])[:5])
    assert asked["content"] == "What are the properties of a knife?"
    assert result.manifest["generation"]["answered_as"] == {"listing": "sentence"}


def test_a_questions_file_of_one_s_own(toy_norms_path, tmp_path):
    path = tmp_path / "fragen.jsonl"
    path.write_text('{"asks": "listing", "question": "Welche Eigenschaften hat {concept}?"}\n')
    model = Scripted({"knife": KNIFE}, default="It is red.")
    result = listing(toy_norms_path, model, questions=str(path))
    assert model.asked[0] == "Welche Eigenschaften hat a knife?"
    assert result.manifest["generation"]["questions_from"] == str(path)
    assert len(result.manifest["generation"]["questions_sha256"]) == 64
    assert load_questions(str(path)).texts["concept-one"].startswith("Which concept")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"asks": "naming", "question": "x"}', "asks 'naming': expected one of concept"),
        ('{"asks": "listing", "question": "{cloze}?"}', r"placeholder \{cloze\}: this question"),
        ('{"asks": "listing"}', "expected"),
        ("not json", "not JSON"),
        ('{"asks": "listing", "question": "x", "answers": "prose"}', "answers 'prose'"),
    ],
)
def test_a_bad_questions_line_is_named(tmp_path, line, error):
    path = tmp_path / "q.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(TacitError, match=rf"q.jsonl:1: {error}"):
        load_questions(str(path))


def test_what_a_free_listing_refuses(toy_norms_path):
    with pytest.raises(
        TacitError, match="all: a free listing of every property is for asking in words"
    ):
        tacit.elicit(["m"], norms=toy_norms_path, relations=["all"])
    with pytest.raises(TacitError, match="a free listing is its own run"):
        tacit.elicit(["m"], norms=toy_norms_path, by="generation", relations=["all", "has"])
    with pytest.raises(TacitError, match="prefix False sets a cloze prompt"):
        tacit.elicit(["m"], norms=toy_norms_path, by="generation", relations=["all"], prefix=False)
    with pytest.raises(TacitError, match="questions is an option of asking in words"):
        tacit.elicit(["m"], norms=toy_norms_path, relations=["has"], questions="hansen-hebart")
    with pytest.raises(TacitError, match="questions nope: no such file"):
        tacit.elicit(
            ["m"], norms=toy_norms_path, by="generation", relations=["all"], questions="nope"
        )


def test_a_listing_is_read_for_the_answers_its_question_asks_for(toy_norms_path):
    """Issue 57: tacit's question asks for up to --guesses properties, and no more are read
    (the rest: one `beyond` row, never matched); Hansen & Hebart's sets no number, and every
    answer is read."""
    model = Scripted({"knife": KNIFE, "apple": "It is red."})
    asked = listing(toy_norms_path, model, guesses=5).extra["answers"]
    knife = asked[asked["concept"] == "knife"]
    assert knife["status"].tolist().count("ok") == 5 and knife["status"].iloc[-1] == "beyond"
    free = listing(toy_norms_path, model, guesses=5, questions="hansen-hebart").extra["answers"]
    assert "beyond" not in set(free["status"])
