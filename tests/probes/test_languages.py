"""Other languages (issue 29): a German norms table (a generic table that names each feature's
relation and answer) with German templates runs retrieval and elicitation end to end on a tiny
model with the real bert-base-cased tokenizer; articles and the property list come from the
template file, never from English rules; the single-token and whole-word checks take any
script the tokenizer knows."""

from __future__ import annotations

import json

import pytest
from support import fails_cleanly, needs_shared, real_bert_tokenizer, real_roberta_tokenizer

import tacit
from tacit.norms import read_norms
from tacit.vocab.shared import single_token_words, word_token_id

GERMAN = """concept,feature,pf,relation,answer
Wolf,hat Fell,20,hat,Fell
Wolf,ist ein Tier,15,ist ein,Tier
Wolf,heult nachts,6,,
Katze,hat Fell,22,hat,Fell
Katze,ist ein Tier,12,ist ein,Tier
Katze,hat Krallen,9,hat,Krallen
Mann,ist ein Mensch,18,ist ein,Mensch
Mann,hat ein Auto,7,hat,Auto
Auto,ist rot,10,ist,rot
Auto,fährt schnell,8,,
"""
SETTINGS = {
    "language": "de",
    "and": "und",
    "pronoun": "es",
    "articles": {"Wolf": "ein", "Katze": "eine", "Mann": "ein", "Auto": "ein"},
}
TEMPLATES = [
    {"settings": SETTINGS},
    {"id": "ein", "template": "Ein [Y] [P]."},
    {"relation": "hat", "template": "{Jeder weiß, dass} [a X] [Y] hat."},
    {"relation": "ist ein", "template": "{Jeder weiß, dass} [a X] ein [Y] ist."},
    {"relation": "ist", "template": "{Jeder weiß, dass} [a X] [Y] ist."},
]
SPANS = [
    {"settings": SETTINGS},
    {"template": "[A Y] [P]."},
    {"relation": "hat", "template": "[A X] hat [Y]."},
]


@pytest.fixture(scope="module")
def german(tmp_path_factory):
    root = tmp_path_factory.mktemp("german")
    (root / "normen.csv").write_text(GERMAN, encoding="utf-8")
    for name, lines in (("de.jsonl", TEMPLATES), ("de-spans.jsonl", SPANS)):
        (root / name).write_text(
            "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in lines), encoding="utf-8"
        )
    return root


def test_the_table_keeps_its_own_words(german):
    norms = read_norms(german / "normen.csv")
    table = norms.table.set_index(["concept", "feature"])
    assert table.loc[("Wolf", "hat Fell"), ["relation", "answer", "phrase"]].tolist() == [
        "hat",
        "Fell",
        "hat Fell",
    ]
    assert table.loc[("Wolf", "heult nachts"), ["relation", "answer"]].tolist() == ["other", ""]
    assert table.loc[("Auto", "fährt schnell"), "phrase"] == "fährt schnell"  # no English rule


@pytest.mark.slow
def test_german_retrieval_and_elicitation_over_the_vocabulary(german, real_bert, tmp_path):
    out = tmp_path / "retrieve"
    result = tacit.retrieve(
        [real_bert],
        norms=str(german / "normen.csv"),
        max_props=3,
        templates=str(german / "de.jsonl"),
        quiet=True,
    )
    prompts = result.prompts
    assert set(prompts["concept"]) == {"Wolf", "Mann", "Auto"}  # one token each; Auto kept
    assert "Ein <mask> hat Fell, ist ein Tier und heult nachts." in set(prompts["prompt"])
    dropped = result.dropped.set_index("concept")["reason"]
    assert dropped["Katze"].startswith("not a single token")  # Katz ##e
    result.save(out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["templates"]["settings"]["language"] == "de"
    elicit = tacit.elicit(
        [real_bert],
        norms=str(german / "normen.csv"),
        templates=str(german / "de.jsonl"),
        quiet=True,
    )
    rows = elicit.prompts.set_index(["relation", "concept"])
    assert rows.loc[("hat", "Katze"), "prompt"] == "Jeder weiß, dass eine Katze <mask> hat."
    assert rows.loc[("ist ein", "Wolf"), "prompt"] == "Jeder weiß, dass ein Wolf ein <mask> ist."
    assert rows.loc[("hat", "Katze"), "gold"] == "Fell:22"  # Krallen: not one token
    assert ("ist ein", "Mann") not in rows.index  # Mensch: not one token
    assert list(elicit.summary["relation"]) == ["hat", "ist ein", "ist", "all"]  # all: pooled
    excluded = elicit.extra["excluded"].set_index("relation")
    assert excluded.loc["hat", "out_of_vocabulary"] == 1
    assert "paper's" not in str(elicit)  # the paper's counts: its norms and templates only


@pytest.mark.slow
def test_german_spans_take_their_articles_from_the_template_file(german, real_bert, tmp_path):
    result = tacit.retrieve(
        [real_bert],
        norms=str(german / "normen.csv"),
        max_props=2,
        templates=str(german / "de-spans.jsonl"),
        candidates="concepts",
        quiet=True,
    )
    spans = result.files["candidates.txt"].splitlines()
    assert spans == ["Ein Wolf", "Eine Katze", "Ein Mann", "Ein Auto"]
    assert "<mask> hat Fell und ist ein Tier." in set(result.prompts["prompt"])
    elicit = tacit.elicit(
        [real_bert],
        norms=str(german / "normen.csv"),
        relations=["hat"],
        templates=str(german / "de-spans.jsonl"),
        candidates="answers",
        normalize="pmi",
        quiet=True,
    )
    rows = elicit.prompts.set_index("concept")
    assert rows.loc["Katze", "prompt"] == "Eine Katze hat <mask>."
    assert rows.loc["Katze", "gold"] == "Fell:22 | Krallen:9"  # Krallen too: any span
    articles = tmp_path / "articles.csv"
    articles.write_text("concept,article\nWolf,der\nKatze,die\nMann,der\nAuto,das\n")
    shown = tacit.retrieve(
        [real_bert],
        norms=str(german / "normen.csv"),
        max_props=1,
        templates=str(german / "de-spans.jsonl"),
        candidates="concepts",
        articles=str(articles),
        quiet=True,
    )
    assert shown.files["candidates.txt"].splitlines()[:2] == ["Der Wolf", "Die Katze"]


def test_no_english_article_for_a_german_concept(german, real_bert, tmp_path):
    lacking = tmp_path / "lacking.jsonl"
    settings = {**SETTINGS, "articles": {"Wolf": "ein"}}
    lacking.write_text(
        "".join(
            json.dumps(t, ensure_ascii=False) + "\n" for t in [{"settings": settings}, *SPANS[1:]]
        )
    )
    fails_cleanly(
        [
            "retrieve",
            "-m",
            real_bert,
            "--norms",
            german / "normen.csv",
            "--templates",
            lacking,
            "--candidates",
            "concepts",
        ],
        "no article for 'Katze' in a de template",
    )


@pytest.mark.slow
@needs_shared
def test_single_token_words_in_any_script():
    """Whole words after a space, decoded back whole: accents, umlauts and CJK as the
    tokenizer has them; words it splits are not words of the vocabulary."""
    tokenizers = {"bert": real_bert_tokenizer(), "roberta": real_roberta_tokenizer()}
    bert = single_token_words(tokenizers["bert"])
    assert {"Müller", "Zürich", "für", "café", "犬", "Fell"} <= set(bert)
    assert not {"Bär", "Löwe", "über", "日本"} & set(bert)
    roberta = single_token_words(tokenizers["roberta"])
    assert {"café", "naïve", "Metall", "Fell"} <= set(roberta)
    assert not {"Bär", "für", "Müller"} & set(roberta)  # ĠMÃ¼ ller: a byte-level piece
    for name, words in (("bert", bert), ("roberta", roberta)):
        foreign = sorted(w for w in words if not w.isascii())
        assert len(foreign) > 50, name
        for word in foreign[:: max(1, len(foreign) // 200)]:  # each one token, as a whole word
            assert word_token_id(tokenizers[name], word) == words[word], (name, word)
