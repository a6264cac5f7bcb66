"""Control characters in text input (issue 42): a NUL, an escape or a form feed in a norms,
templates, items, candidates, vocabulary, concepts or articles file is refused in one line
naming the file, the line and the character (before: it reached the prompts, `"... and is
\\x00an animal."` in prompts.csv, exit 0). Tab and the line ends a file's lines are split at
(CSLB's CRLF) are text, as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import TOY_NORMS, fails_cleanly, write_mcrae, write_norms

from tacit.ask.spans import read_candidates
from tacit.core.errors import TacitError
from tacit.core.files import check_text, check_value
from tacit.lexicon import read_articles
from tacit.norms import read_norms
from tacit.probes.items.reading import read_items
from tacit.probes.shared_options import parse_concepts
from tacit.templates.reading import read_templates
from tacit.vocab.shared import read_vocab_file


def with_feature(index: int, feature: str) -> list[tuple]:
    rows = [list(row) for row in TOY_NORMS]
    rows[index][2] = feature
    return [tuple(row) for row in rows]


def refused(read, path: Path, message: str) -> str:
    with pytest.raises(TacitError) as error:
        read(path)
    text = str(error.value)
    assert str(path) in text and message in text, text
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("char", "name"), [("\x00", "U+0000 (NUL"), ("\x1b", "U+001B"), ("\x85", "U+0085")]
)
def test_a_control_character_in_a_cslb_norms_file(tmp_path, char, name):
    path = write_norms(tmp_path / "norms.dat", with_feature(5, f"is {char}an animal"))
    # line 7: the header, then the sixth row; column 24: after the five fields before it
    text = refused(read_norms, path, f"{path}, line 7: a control character, {name}")
    assert "at column " in text and "remove it" in text


def test_crlf_line_ends_and_tabs_are_text_not_control_characters(tmp_path):
    path = write_norms(tmp_path / "norms.dat", line_end="\r\n")
    assert len(read_norms(path).table) == len(TOY_NORMS) - 1  # dog's repeated pair is one
    old_mac = write_norms(tmp_path / "old.dat", line_end="\r")
    assert len(read_norms(old_mac).table) == len(read_norms(path).table)


def test_a_control_character_in_a_generic_table_and_a_mcrae_workbook(tmp_path):
    table = tmp_path / "lab.csv"
    table.write_text("concept,feature,pf\nbear,has fur,3\ncat,is\x0csoft,2\n")
    refused(read_norms, table, f"{table}, line 3: a control character, U+000C, at column 7")
    # a workbook's cell holds no control character but tab and line ends (XML refuses the
    # others); a line end in a cell (Alt+Enter) would break the prompt's sentence
    rows = [("bear", "is_big", "visual-form_and_surface", 9), ("cat", "has_\nfur", "tactile", 3)]
    book = write_mcrae(tmp_path / "mcrae.xlsx", rows)
    refused(read_norms, book, f"{book}: sheet 'concepts_features', row 3: a control character")


def test_the_issue_case_from_the_command_line(tmp_path, tiny_bert):
    norms = write_norms(tmp_path / "norms.dat", with_feature(5, "is \x00an animal"))
    out = tmp_path / "run"
    args = ["retrieve", "-m", tiny_bert, "--norms", norms, "--out", out, "--max-props", "3"]
    fails_cleanly(args, f"{norms}, line 7: a control character, U+0000 (NUL", out)
    fails_cleanly(["norms", "install", "lab", norms], f"{norms}, line 7: a control character")


def test_templates_raw_and_escaped(tmp_path):
    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"template": "[Y] [P].", "id": "a"}\n{"template": "\x1b[Y] [P].", "id": "b"}\n')
    refused(read_templates, raw, f"{raw}, line 2: a control character, U+001B")
    escaped = tmp_path / "escaped.jsonl"
    line = {"relation": "has", "template": "[A X] has \u0000[Y]."}
    escaped.write_text(json.dumps({"template": "[Y] [P]."}) + "\n" + json.dumps(line) + "\n")
    assert "\\u0000" in escaped.read_text()  # JSON's escape: no raw NUL in the file
    refused(read_templates, escaped, f"{escaped}, line 2: a control character, U+0000")


def test_items_as_json_lines_and_csv(tmp_path):
    jsonl = tmp_path / "items.jsonl"
    item = {"text": "[Y] has fur.", "candidates": ["A bear", "A\u0000 knife"], "answer": "A bear"}
    jsonl.write_text(json.dumps(item) + "\n")
    refused(read_items, jsonl, f"{jsonl}, line 1: a control character, U+0000")
    csv = tmp_path / "items.csv"
    csv.write_text("text,candidates,answer\n[Y] has fur.,A bear | A\x7fknife,A bear\n")
    refused(read_items, csv, f"{csv}, line 2: a control character, U+007F, at column 24")


def test_candidates_vocabulary_concepts_and_articles_files(tmp_path):
    candidates = tmp_path / "candidates.txt"
    candidates.write_text("A bear\nA\x00 cat\n")
    refused(read_candidates, candidates, f"{candidates}, line 2: a control character, U+0000")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("bear\ncat\ndog\x08\n")
    refused(read_vocab_file, vocab, f"{vocab}, line 3: a control character, U+0008")
    concepts = tmp_path / "concepts.txt"
    concepts.write_text("bear\n\x00cat\n")
    refused(lambda p: parse_concepts(f"@{p}"), concepts, f"{concepts}, line 2")
    articles = tmp_path / "articles.csv"
    articles.write_text("concept,article\nherb,a\x0bn\n")
    refused(read_articles, articles, f"{articles}, line 2: a control character, U+000B")


def test_lines_are_counted_as_an_editor_counts_them():
    with pytest.raises(TacitError, match=r"^f, line 4: a control character, U\+001F, at column 2"):
        check_text("a\r\nb\rc\nd\x1f\n", "f")
    check_text("tab\tand line ends\r\n\r\n", "f")  # nothing refused
    with pytest.raises(TacitError, match=r"^f, line 2: a control character, U\+000A, in 'a\\nb'"):
        check_value({"template": ["x", "a\nb"]}, "f, line 2")  # a value holds no line end
