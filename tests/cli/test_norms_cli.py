"""Any norms, end to end: McRae's workbook, a generic table and installed names drive every
probe from the command line and the API, with the same care as CSLB."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support import TINY_MCRAE, fails_cleanly, write_mcrae
from typer.testing import CliRunner

import tacit
from tacit.cli import app


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def mcrae_file(tmp_path):
    return write_mcrae(tmp_path / "mcrae.xlsx", TINY_MCRAE)


@pytest.mark.slow
@pytest.mark.parametrize("ablation", [None, "category", "ordering"])
def test_retrieve_on_mcrae_with_its_ablations(tiny_bert, mcrae_file, tmp_path, ablation):
    out = tmp_path / "run"
    extra = ["--ablation", ablation] if ablation else []
    result = invoke(
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        mcrae_file,
        "--max-props",
        3,
        *extra,
        "--out",
        out,
        "-q",
    )
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    assert set(prompts["concept"]) == {"bear", "cat", "knife"}
    assert "A <mask> has fur, is big, and has claws." in set(prompts["prompt"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["norms"]["format"] == "mcrae" and manifest["norms"]["feature_types"]
    if ablation == "category":  # McRae's BR_Labels mapped onto the paper's categories
        visual = prompts[(prompts["category"] == "visual") & (prompts["concept"] == "knife")]
        assert visual["prompt"].iloc[-1] == "A <mask> is made of metal and has a handle."


@pytest.mark.slow
def test_elicit_on_mcrae(tiny_bert, mcrae_file, tmp_path):
    out = tmp_path / "run"
    result = invoke("elicit", "-m", tiny_bert, "--norms", mcrae_file, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    has = prompts[(prompts["relation"] == "has") & (prompts["concept"] == "bear")].iloc[0]
    assert has["prompt"] == "Everyone knows that a bear has <mask>." and "fur:20" in has["gold"]
    made_of = prompts[prompts["relation"] == "made of"].iloc[0]
    assert made_of["gold"] == "metal:20"


@pytest.mark.slow
def test_cslb_file_and_the_same_norms_as_a_generic_table_give_identical_results(
    tiny_bert, toy_norms_path, tmp_path
):
    table = tacit.read_norms(toy_norms_path).table[["concept", "feature", "pf", "feature_type"]]
    generic = tmp_path / "mine.csv"
    table.rename(columns={"concept": "Word", "feature": "Property", "pf": "Count"}).to_csv(
        generic, index=False
    )
    runs = {}
    for name, norms in (
        ("cslb", [toy_norms_path]),
        (
            "generic",
            [
                generic,
                "--norms-columns",
                "concept=Word,feature=Property,pf=Count,feature_type=feature_type",
            ],
        ),
    ):
        for probe in ("retrieve", "elicit"):
            out = tmp_path / f"{name}-{probe}"
            result = invoke(probe, "-m", tiny_bert, "--norms", *norms, "--out", out, "-q")
            assert result.exit_code == 0, result.output
            runs[name, probe] = out
    for probe in ("retrieve", "elicit"):
        for file in ("prompts.csv", "summary.csv", "vocab.txt"):
            cslb = (runs["cslb", probe] / file).read_bytes()
            assert (runs["generic", probe] / file).read_bytes() == cslb, (probe, file)


@pytest.mark.slow
def test_a_users_own_small_table_by_installed_name(tiny_bert, tmp_path):
    own = tmp_path / "lab-norms.tsv"
    own.write_text(
        "concept\tfeature\tpf\nbear\thas fur\t3\nbear\tis big\t2\ncat\thas a tail\t4\n"
        "cat\tpurrs\t1.5\n"
    )
    result = invoke("norms", "install", "lab", own)
    assert result.exit_code == 0, result.output
    assert "installed as 'lab'" in result.stdout and "(generic)" in result.stdout
    shown = invoke("norms", "show")
    assert "* lab: generic, 2 concepts" in shown.stdout
    out = tmp_path / "run"
    result = invoke("retrieve", "-m", tiny_bert, "--norms", "lab", "--out", out, "-q")
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    assert "A <mask> has fur and is big." in set(prompts["prompt"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["norms"]["format"] == "generic" and not manifest["norms"]["feature_types"]
    # a table without feature types cannot drive the category ablation
    fails_cleanly(
        ["retrieve", "-m", tiny_bert, "--norms", "lab", "--ablation", "category"],
        "gives no feature types",
    )
    fails_cleanly(["retrieve", "-m", tiny_bert, "--norms", "nosuch"], "nosuch")


def test_bad_norms_options_are_one_line(tiny_bert, toy_norms_path, tmp_path):
    fails_cleanly(["norms", "install", "a", "b", "c"], "give a file, optionally after a name")
    fails_cleanly(
        ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--norms-format", "tsv"],
        "--norms-format 'tsv': expected one of cslb, mcrae, generic",
    )
    fails_cleanly(
        ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--norms-columns", "concept"],
        "--norms-columns",
    )


def test_norms_formats_are_declared_once():
    from tacit.core.choices import NORMS_FORMATS
    from tacit.norms import NORM_FORMATS

    assert NORM_FORMATS.builtin() == NORMS_FORMATS


@pytest.mark.slow
def test_remove_an_installed_norm_set_and_the_name_in_the_manifest(
    tiny_bert, toy_norms_path, tmp_path
):
    link = tmp_path / "linked.dat"
    link.symlink_to(toy_norms_path)
    assert invoke("norms", "install", "toy", link).exit_code == 0
    assert invoke("norms", "install", "other", toy_norms_path).exit_code == 0
    [entry, _] = tacit.norms.installed_norms()
    assert entry.path == link  # the path as given (made absolute): the link is not followed
    done = invoke("retrieve", "-m", tiny_bert, "--max-props", 1, "-q", "--out", tmp_path / "r")
    assert done.exit_code == 0, done.output
    norms = json.loads((tmp_path / "r" / "manifest.json").read_text())["norms"]
    assert norms["name"] == "toy" and norms["path"] == str(link)
    removed = invoke("norms", "remove", "toy")
    assert removed.exit_code == 0, removed.output
    assert "removed 'toy'" in removed.stdout and "the default is now 'other'" in removed.stdout
    assert link.is_file()  # the file itself stays
    assert [e.name for e in tacit.norms.installed_norms()] == ["other"]
    fails_cleanly(["norms", "remove", "toy"], "no installed norms named 'toy' (installed: other)")
    assert invoke("norms", "remove", "other").exit_code == 0
    fails_cleanly(["retrieve", "-m", tiny_bert], "no norms file")
