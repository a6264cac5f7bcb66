"""mLAMA's released files as cloze items (tacit.probes.items.mlama), on a small release in
mLAMA's layout the test writes (invented rows, not mLAMA's data): what becomes an item, what is
dropped and why, and the converted file run by the items probe."""

from __future__ import annotations

import json

import pytest
from support import fails_cleanly, write_mlama
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.probes.items import mlama
from tacit.probes.items.reading import read_items


def test_each_triple_an_item_ranked_among_its_relations_objects(tmp_path):
    conversion = mlama.mlama_items(write_mlama(tmp_path), "de")
    p1, p2 = ["fur", "claws"], ["metal", "fur"]
    expected = [
        ("P1/1", "bear hat [Y] .", p1, "fur"),
        ("P1/2", "cat hat [Y] .", p1, "claws"),
        ("P1/3", "zebra hat [Y] .", p1, "fur"),
        ("P2/1", "knife ist aus [Y] .", p2, "metal"),
        ("P2/2", "apple ist aus [Y] .", p2, "fur"),
    ]
    assert conversion.items == [
        {"id": i, "group": i.split("/")[0], "text": t, "candidates": c, "answer": a}
        for i, t, c, a in expected
    ]
    assert conversion.read == 13 and conversion.relations == {"P1": 3, "P2": 2}
    assert conversion.dropped == {
        mlama.REPEATED: 1,
        mlama.EMPTY: 1,
        mlama.BRACKETED: 1,
        mlama.BAD_TEMPLATE: 1,
        mlama.NO_TEMPLATE: 2,
        mlama.ONE_OBJECT: 2,
    }
    assert len(conversion.items) + sum(conversion.dropped.values()) == conversion.read


def test_relations_can_be_chosen(tmp_path):
    conversion = mlama.mlama_items(write_mlama(tmp_path), "de", relations=["P2"])
    assert conversion.relations == {"P2": 2} and conversion.read == 2
    with pytest.raises(TacitError, match="no triples of relation P9"):
        mlama.mlama_items(tmp_path, "de", relations=["P9"])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f: None, "no folder fr/ of mLAMA's release (languages there: de)"),
        (lambda f: (f / "P1.jsonl").write_text("{oops\n"), "P1.jsonl, line 1: not JSON"),
        (lambda f: (f / "P1.jsonl").write_text('{"sub_label": "a"}\n'), "expected the keys"),
    ],
)
def test_bad_release_files_are_one_line(tmp_path, change, message):
    write_mlama(tmp_path)
    change(tmp_path / "de")
    language = "fr" if "fr/" in message else "de"
    with pytest.raises(TacitError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mlama.mlama_items(tmp_path, language)


def test_nothing_to_keep_is_an_error_saying_why(tmp_path):
    write_mlama(tmp_path)
    with pytest.raises(TacitError, match="no triple could be made an item .*its relation has no"):
        mlama.mlama_items(tmp_path, "de", relations=["P4"])


@pytest.mark.slow
def test_converted_from_the_command_line_and_run_by_the_items_probe(tmp_path, tiny_bert):
    release = write_mlama(tmp_path / "mlama1.1")
    out = tmp_path / "de.jsonl"
    done = CliRunner().invoke(
        app, ["convert", "mlama", str(release), "--language", "de", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    assert "5 items of 13 triples, 2 relations, 10 candidates in all" in done.stdout
    assert f"dropped 2 triples: {mlama.NO_TEMPLATE}" in done.stdout
    assert f"dropped 1 triples: {mlama.REPEATED}" in done.stdout
    assert [json.loads(line) for line in out.read_text().splitlines()] == (
        mlama.mlama_items(release, "de").items
    )
    result = tacit.items(out, models=[tiny_bert], quiet=True)
    assert result.manifest["counts"]["items_by_group"] == {"P1": 3, "P2": 2}
    assert set(result.summary["group"]) == {"P1", "P2", "all"}
    fails_cleanly(
        ["convert", "mlama", release, "--language", "xx", "--out", tmp_path / "xx.jsonl"],
        "no folder xx/",
    )
    assert not (tmp_path / "xx.jsonl").exists()


def test_the_python_function_writes_the_same_file(tmp_path):
    release = write_mlama(tmp_path / "release")
    conversion = tacit.convert_mlama(release, "de", tmp_path / "items.jsonl")
    items, _ = read_items(tmp_path / "items.jsonl")
    assert items["id"].nunique() == len(conversion.items) == 5
