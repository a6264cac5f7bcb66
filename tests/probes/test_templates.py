"""Template files (issue 29): the paper's shipped file writes the paper's prompts, LAMA's relation
files load as they are, every placeholder fills as documented, and a bad file is one line
naming the file and the line."""

from __future__ import annotations

import json

import pytest
from support import fails_cleanly, vocabulary_prompts

from tacit.core.errors import TacitError
from tacit.norms import read_norms
from tacit.probes.elicit.prompts import elicitation_prompt
from tacit.probes.prince.scoring import PERSON_PROPERTIES
from tacit.probes.retrieve.fills import retrieval_fills
from tacit.templates import join_phrases, load_templates
from tacit.templates.reading import read_templates

# LAMA's relations.jsonl as published: extra keys, `[X]` the subject, `[Y]` the object
LAMA = [
    {
        "relation": "P19",
        "template": "[X] was born in [Y] .",
        "label": "place of birth",
        "description": "Most specific known birth location",
        "type": "N-1",
    },
    {
        "relation": "P20",
        "template": "[X] died in [Y] .",
        "label": "place of death",
        "description": "Most specific known death location",
        "type": "N-1",
    },
    {
        "relation": "P279",
        "template": "[X] is a subclass of [Y] .",
        "label": "subclass of",
        "description": "",
        "type": "N-1",
    },
]


def write(path, lines):
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def test_the_paper_file_writes_the_paper_prompts():
    paper = load_templates()
    assert paper.source == "paper" and paper.name == "paper.jsonl"
    assert paper.relations == ["is", "is a", "has", "has a", "made of"]
    assert elicitation_prompt("bear", "has") == "Everyone knows that a bear has <mask>."
    assert elicitation_prompt("apple", "is", prefix=False) == "An apple is <mask>."
    assert (
        elicitation_prompt("knife", "made of") == "Everyone knows that a knife is made of <mask>."
    )
    assert elicitation_prompt("coffee_machine", "has a", prefix=False) == (
        "A coffee machine has a <mask>."
    )
    vocab, spans = retrieval_fills(paper, spans=False), retrieval_fills(paper, spans=True)
    phrases = ["has fur", "is big", "has claws"]
    assert vocab["paper"](phrases) == "A <mask> has fur, is big, and has claws."
    assert spans["paper"](phrases[:2]) == "<mask> has fur and is big."
    assert vocab["paper"]([PERSON_PROPERTIES]) == (
        "A <mask> has parents, siblings, relatives, a home, a pet, a car, a spouse, and a job."
    )
    record = paper.record()
    assert record["file"] == "paper.jsonl" and len(record["sha256"]) == 64
    assert {
        "id": "paper",
        "relation": "has",
        "template": "{Everyone knows that} [a X] has [Y].",
    } in record["templates"]


def test_a_lama_relation_file_loads_as_it_is(tmp_path):
    templates = read_templates(write(tmp_path / "relations.jsonl", LAMA))
    assert templates.relations == ["P19", "P20", "P279"]
    (born,) = templates.for_relation("P19")
    assert born.id == "1" and born.concept == "X" and born.blank == "Y"
    assert born.fill(concept="Dante") == "Dante was born in <mask> ."
    assert templates.concept_text("bat_(animal)", born.concept) == "bat"
    assert templates.chosen_relations(None) == ["P19", "P20", "P279"]
    with pytest.raises(TacitError, match="no template for it .its relations: P19, P20, P279"):
        templates.chosen_relations(["has"])
    with pytest.raises(TacitError, match="no retrieval template"):
        templates.retrieval  # noqa: B018


# ParaRel's pattern files as published: one file per relation, `pattern` for the template
PARAREL = [
    {
        "pattern": "[X] is located in [Y] .",
        "lemma": "locate",
        "extended_lemma": "locate",
        "tense": "present",
    },
    {"pattern": "[X], which is located in [Y] .", "lemma": "locate", "extended_lemma": "locate"},
]


def test_a_pararel_pattern_file_loads_as_its_relation(tmp_path):
    templates = read_templates(write(tmp_path / "P131.jsonl", PARAREL))
    assert templates.relations == ["P131"]
    first, second = templates.for_relation("P131")
    assert (first.id, second.id) == ("1", "2")
    assert first.fill(concept="Baltimore") == "Baltimore is located in <mask> ."
    assert second.fill(concept="Baltimore") == "Baltimore, which is located in <mask> ."
    given = write(tmp_path / "patterns.jsonl", [{**PARAREL[0], "relation": "located in"}])
    assert read_templates(given).relations == ["located in"]
    both = write(tmp_path / "P17.jsonl", [{"pattern": "[X] is in [Y] .", "template": "[X] [Y]"}])
    with pytest.raises(TacitError, match=r"P17.jsonl, line 1: both `template` and `pattern`"):
        read_templates(both)


def test_placeholders_fill_as_documented(tmp_path):
    path = write(
        tmp_path / "t.jsonl",
        [
            {"template": "Something that [P] is called [a Y]."},
            {"id": "bare", "template": "[Y]: [P]."},
            {"relation": "has", "template": "{Everyone knows that} [a X] has [Y]."},
            {"relation": "has", "id": "start", "template": "[A X] usually has [Y]!"},
            {"relation": "is", "template": "It is well known: [X] is [Y]."},
        ],
    )
    templates = read_templates(path)
    called, bare = templates.retrieval
    assert (called.id, bare.id) == ("1", "bare")
    assert called.blank_ends_sentence and not bare.blank_ends_sentence
    vocab = retrieval_fills(templates, spans=False)
    assert (
        vocab["1"](["has fur", "is big"]) == "Something that has fur and is big is called a <mask>."
    )
    assert vocab["bare"](["has fur"]) == "<mask>: has fur."
    assert retrieval_fills(templates, spans=True)["1"](["has fur"]) == (
        "Something that has fur is called <mask>."
    )
    assert called.a_before_blank(spans=False) and not bare.a_before_blank(spans=False)
    paper, start = templates.for_relation("has")
    text = templates.concept_text
    assert paper.fill(concept=text("apple", paper.concept)) == (
        "Everyone knows that an apple has <mask>."
    )
    assert paper.fill(concept=text("apple", paper.concept), prefix=False) == "An apple has <mask>."
    assert start.fill(concept=text("hour", start.concept)) == "An hour usually has <mask>!"
    (plain,) = templates.for_relation("is")
    assert plain.fill(concept=text("coffee_machine", plain.concept)) == (
        "It is well known: coffee machine is <mask>."
    )
    assert join_phrases(["a", "b", "c"], "und", serial_comma=False) == "a, b und c"


def test_settings_give_articles_and_the_list_in_another_language(tmp_path):
    path = write(
        tmp_path / "de.jsonl",
        [
            {
                "settings": {
                    "language": "de",
                    "and": "und",
                    "pronoun": "es",
                    "articles": {"Bär": "ein", "Katze": "eine"},
                }
            },
            {"template": "[A Y] [P]."},
            {"relation": "hat", "template": "{Jeder weiß, dass} [a X] [Y] hat."},
        ],
    )
    templates = read_templates(path)
    assert not templates.settings.english and not templates.settings.serial_comma
    assert templates.properties(["hat Fell", "ist groß", "hat Krallen"]) == (
        "hat Fell, ist groß und hat Krallen"
    )
    (has,) = templates.for_relation("hat")
    assert has.fill(concept=templates.concept_text("Katze", has.concept)) == (
        "Jeder weiß, dass eine Katze <mask> hat."
    )
    assert templates.blank_phrase("Bär", "A Y") == "Ein Bär"
    assert templates.blank_phrase("Bär", "A Y", {"Bär": "der"}) == "Der Bär"  # --articles first
    with pytest.raises(TacitError, match="no article for 'Hund' in a de template"):
        templates.concept_text("Hund", "a X")  # never an English rule for a German word
    assert templates.concept_text("Hund", "X") == "Hund"
    with pytest.raises(TacitError, match="write the article in the template"):
        retrieval_fills(templates, spans=False)  # [A Y] over the vocabulary: which article?


BAD = [
    ("not json", "line 2: not JSON"),
    ('["a list"]', "line 2: expected a JSON object"),
    ({"relation": "has"}, "line 2: no `template`"),
    (
        {"template": "[X] has [Y]."},
        "line 2: '[X] has [Y].': a retrieval template (no `relation`) needs",
    ),
    ({"template": "[Y] [P] [P]."}, "needs the property list [P] once"),
    ({"template": "[Y] [P] of [X]."}, "it goes in the blank"),
    (
        {"relation": "has", "template": "[X] has [Z]."},
        "line 2: '[X] has [Z].': unknown placeholder [Z]",
    ),
    ({"relation": "has", "template": "[X] has <mask>."}, "write the blank as [Y]"),
    ({"relation": "has", "template": "[X] has [Y] and [Y]."}, "needs one blank ([Y]), found 2"),
    (
        {"relation": "has", "template": "[X] has [a Y]."},
        "is retrieval's (the concept in the blank)",
    ),
    ({"relation": "has", "template": "It has [Y]."}, "needs the concept once"),
    ({"relation": "has", "template": "[X] {really} has [Y]."}, "braces mark the optional prefix"),
    ({"template": "{Well,} [Y] [P]."}, "the optional prefix {...} is elicitation's"),
    (
        {"relation": "is", "id": "paper", "template": "[X] is [Y]."},
        "line 2: id 'paper' repeats line 1",
    ),
    ({"relation": "is", "id": "ensemble", "template": "[X] is [Y]."}, "names the ensemble"),
    ({"settings": {"colour": "red"}}, "line 2: unknown setting 'colour'"),
    ({"settings": {"articles": {"Bär": "der die"}}}, "must be one word"),
]


@pytest.mark.parametrize(("line", "message"), BAD, ids=[m for _, m in BAD])
def test_a_bad_template_file_is_one_line_naming_file_and_line(tmp_path, line, message):
    path = write(
        tmp_path / "bad.jsonl",
        [{"relation": "is", "id": "paper", "template": "[a X] is [Y]."}, line],
    )
    with pytest.raises(TacitError) as error:
        read_templates(path)
    assert str(error.value).startswith(f"{path}, line ") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_bad_template_files_from_the_command_line(tmp_path, tiny_bert, toy_norms_path):
    german = write(
        tmp_path / "de.jsonl", [{"settings": {"language": "de"}}, {"template": "[Y] [P]."}]
    )
    fails_cleanly(
        ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--templates", str(german)],
        "give `and`",
    )
    fails_cleanly(
        ["retrieve", "-m", tiny_bert, "--templates", str(tmp_path / "none.jsonl")],
        "--templates " + str(tmp_path / "none.jsonl") + ": no such file",
    )
    lama = write(tmp_path / "relations.jsonl", LAMA)
    fails_cleanly(
        [
            "elicit",
            "-m",
            tiny_bert,
            "--norms",
            toy_norms_path,
            "--templates",
            str(lama),
            "-r",
            "has",
        ],
        "--relation 'has': expected one of P19, P20, P279 (the relations of --templates",
    )
    fails_cleanly(
        ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--templates", str(lama)],
        "no retrieval template",
    )
    no_prefix = write(tmp_path / "plain.jsonl", [{"relation": "has", "template": "[A X] has [Y]."}])
    fails_cleanly(
        [
            "elicit",
            "-m",
            tiny_bert,
            "--norms",
            toy_norms_path,
            "--templates",
            str(no_prefix),
            "--no-prefix",
        ],
        "has no optional prefix",
    )


def test_the_paper_file_keeps_retrieval_drops(toy_norms_path, tiny_bert):
    """The vowel rule follows the word before the blank: the paper's "A <mask>" leaves apple
    out; a template that writes no article keeps it."""
    from tacit.hub.model_files import load_tokenizer
    from tacit.vocab import build_vocabulary

    norms = read_norms(toy_norms_path)
    vocab = build_vocabulary({"b": load_tokenizer(tiny_bert)})
    paper = vocabulary_prompts(norms, vocab, max_props=1)
    assert "apple" in set(paper.dropped["concept"]) and "template" not in paper.prompts
    kept = vocabulary_prompts(norms, vocab, max_props=1, a_rule=False)
    assert "apple" in set(kept.prompts["concept"])
