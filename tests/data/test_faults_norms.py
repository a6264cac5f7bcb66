"""Fault injection, norms files (issue 28, item 2 and part of 4): a `"` or a huge value in a
tab-separated file is text, never a change of the data; a malformed line is reported at its
own line; broken CSV quoting and a damaged workbook are one line, never a traceback."""

from __future__ import annotations

import errno
import os
import zipfile
from pathlib import Path

import pytest
from support import REAL_NORMS, TOY_NORMS, fails_cleanly, needs_shared, write_mcrae, write_norms

from tacit.core.paths import config_dir
from tacit.norms import read_norms


def install_fails(path: Path, message: str) -> str:
    """`probe norms install lab PATH` fails in one line naming the file, installs nothing."""
    line = fails_cleanly(["norms", "install", "lab", path], message)
    assert str(path) in line
    assert not (config_dir() / "norms.json").exists()
    return line


def with_feature(index: int, feature: str) -> list[tuple]:
    rows = [list(row) for row in TOY_NORMS]
    rows[index][2] = feature
    return [tuple(row) for row in rows]


@pytest.mark.parametrize(
    "feature",
    ['"does live in forests_woods', 'does live in "forests"', 'is "big', '"'],
)
def test_a_quote_in_a_cslb_feature_is_text(tmp_path, feature):
    # before: the quote opened a CSV quoted value that swallowed the lines after it (fewer
    # rows, one feature hundreds of characters long, exit 0), or a traceback
    norms = read_norms(write_norms(tmp_path / "norms.dat", with_feature(3, feature)))
    assert len(norms.table) == len(read_norms(write_norms(tmp_path / "plain.dat")).table)
    bear = norms.table[norms.table["concept"] == "bear"]
    assert feature in set(bear["feature"])
    assert norms.table["feature"].str.len().max() < 40


def test_a_value_of_any_length_in_a_tab_separated_file(tmp_path):
    # before: `_csv.Error: field larger than field limit (131072)`, a traceback
    long = "is " + "very " * 40_000 + "big"
    norms = read_norms(write_norms(tmp_path / "norms.dat", with_feature(1, long)))
    assert long in set(norms.table["feature"])


@pytest.mark.parametrize("suffix", [".dat", ".tsv"])
def test_a_malformed_line_is_reported_at_its_own_line(tmp_path, suffix):
    path = write_norms(tmp_path / f"norms{suffix}")
    lines = path.read_text().splitlines()
    lines[3] = '"' + lines[3]  # an open quote 7 lines before the broken line: harmless now
    lines[10] = lines[10].replace("\t", " ", 1)  # line 11: one field short
    path.write_text("\n".join(lines) + "\n")
    install_fails(path, f"{path}:11: 6 tab-separated fields, the header has 7")


def test_a_tab_separated_generic_table_and_mcrae_export_read_quotes_literally(tmp_path):
    table = tmp_path / "lab.tsv"
    table.write_text('concept\tfeature\tpf\nbear\t"has fur\t3\ncat\tis soft\t2\n')
    assert list(read_norms(table).table["feature"]) == ['"has fur', "is soft"]
    export = write_mcrae(tmp_path / "mcrae.tsv")
    lines = export.read_text().splitlines()
    lines[2] = lines[2].replace("has_keys", '"has_keys')
    export.write_text("\n".join(lines) + "\n")
    assert '"has_keys' in set(read_norms(export).table["feature"])


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ('bear,"has fur,3\ncat,is soft,2\n', 2, "opens a quoted value that does not close"),
        ('bear,has fur,3\ncat,"is" soft,2\n', 3, "text after the closing"),
        ("bear,has fur,3\ncat,is " + "soft " * 30_000 + ",2\n", 3, "longer than 131,072"),
        ('bear,has fur,3\ncat,is soft,2\ndog,"barks\n', 4, "opens a quoted value"),
    ],
)
def test_broken_csv_quoting_is_one_line_at_its_line(tmp_path, body, line, message):
    # before: an open quote swallowed the lines after it (or ended in a traceback at the end
    # of the file); a huge value ended in a `_csv.Error` traceback
    path = tmp_path / "lab.csv"
    path.write_text("concept,feature,pf\n" + body)
    install_fails(path, f"{path}:{line}: ")
    assert message in fails_cleanly(["norms", "show", "--norms", path], f"{path}:{line}: ")


def test_csv_quoting_within_a_line_still_works(tmp_path):
    path = tmp_path / "lab.csv"
    path.write_text('concept,feature,pf\nbear,"has fur, claws",3\ncat,"is ""soft""",2\n')
    assert list(read_norms(path).table["feature"]) == ["has fur, claws", 'is "soft"']


def test_only_real_line_ends_count(tmp_path):
    # a Unicode line separator inside a value is not a new line (a form feed, another line end
    # of str.splitlines, is a control character: refused, tests/data/test_control_characters.py)
    path = tmp_path / "lab.tsv"
    path.write_text("concept\tfeature\tpf\nbear\thas fur\u2028claws\t3\ncat\tis soft\n")
    install_fails(path, f"{path}:3: 2 tab-separated fields")


def _rewrite_member(source: Path, target: Path, member: str, damage) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            data = old.read(item.filename)
            new.writestr(item, damage(data) if item.filename == member else data)
    return target


@pytest.mark.parametrize("damage", ["cut xml", "garbled bytes", "cut file"])
def test_a_damaged_workbook_is_one_line(tmp_path, damage):
    # before: a damage in the sheet's XML ended in an `xml.etree.ElementTree.ParseError`
    # traceback (read-only openpyxl reads a sheet only while iterating its rows)
    good = write_mcrae(tmp_path / "good.xlsx")
    path = tmp_path / "mcrae.xlsx"
    sheet = "xl/worksheets/sheet1.xml"
    if damage == "cut xml":
        _rewrite_member(good, path, sheet, lambda data: data[: len(data) // 2])
    else:
        data = bytearray(good.read_bytes())
        if damage == "garbled bytes":  # the middle of the sheet's compressed bytes
            start = zipfile.ZipFile(good).getinfo(sheet).header_offset + 60
            data[start : start + 300] = b"A" * 300
        else:
            data = data[: len(data) // 2]
        path.write_bytes(bytes(data))
    line = install_fails(path, f"{path}: not a readable .xlsx workbook (")
    assert "download it again" in line


def test_a_norms_file_that_cannot_be_read(tmp_path, monkeypatch):
    path = write_norms(tmp_path / "norms.dat")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything: refuse the read the way the OS does
        denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

        real_open = os.open

        def refused(file, *args, **kwargs):
            if str(file) == str(path):
                raise denied
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", refused)
    try:
        install_fails(path, f"{path}: cannot read it (Permission denied)")
    finally:
        path.chmod(0o644)


@needs_shared
def test_a_quote_in_the_real_cslb_file(tmp_path):
    # before: `_csv.Error: field larger than field limit (131072)`, a traceback
    lines = REAL_NORMS.read_bytes().split(b"\r\n")
    fields = lines[100].split(b"\t")
    fields[3] = b'"' + fields[3]
    lines[100] = b"\t".join(fields)
    copy = tmp_path / "norms.dat"
    copy.write_bytes(b"\r\n".join(lines))
    norms = read_norms(copy)
    assert len(norms.table) == 22667 - 4
    assert fields[3].decode() in set(norms.table["feature"])
