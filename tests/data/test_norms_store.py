"""Installed norm sets by name: install, list, default, load by name or path, old registries."""

import json

import pytest
from support import write_mcrae, write_norms

from tacit.core.errors import TacitError
from tacit.core.paths import config_dir
from tacit.norms import (
    install_norms,
    installed_norms,
    load_norms,
    read_norms,
    resolve_norms,
    resolve_norms_path,
    set_default_norms,
)


@pytest.fixture
def files(tmp_path):
    """A CSLB file, a McRae workbook and a generic table with other column names."""
    generic = tmp_path / "my norms.csv"
    generic.write_text("Word,Property,Count\nbear,has fur,3\ncat,purrs,2.5\n")
    return {
        "cslb": write_norms(tmp_path / "norms.dat"),
        "mcrae": write_mcrae(tmp_path / "CONCS_FEATS_concstats_brm.xlsx"),
        "generic": generic,
    }


MAPPING = {"concept": "Word", "feature": "Property", "pf": "Count"}


def test_install_several_under_names_and_list_them(files):
    install_norms(files["cslb"])
    install_norms(files["mcrae"])
    install_norms(files["generic"], columns=MAPPING)
    listed = {entry.name: entry for entry in installed_norms()}
    assert list(listed) == ["cslb", "mcrae", "my_norms"]  # default names
    assert [e.default for e in listed.values()] == [True, False, False]  # the first installed
    mcrae = listed["mcrae"]
    assert (mcrae.path, mcrae.format, mcrae.concepts, mcrae.columns) == (
        files["mcrae"].resolve(),
        "mcrae",
        len(read_norms(files["mcrae"]).concepts),
        None,
    )
    assert mcrae.sha256 == read_norms(files["mcrae"]).sha256 and mcrae.rows == 18
    assert listed["my_norms"].columns == MAPPING and listed["my_norms"].format == "generic"
    assert load_norms().format == "cslb"
    assert load_norms("mcrae").format == "mcrae"
    generic = load_norms("my_norms")  # read with the mapping it was installed with
    assert generic.columns == MAPPING and generic.table["pf"].tolist() == [3.0, 2.5]
    assert resolve_norms("mcrae").name == "mcrae" and resolve_norms("mcrae").format == "mcrae"
    assert load_norms(files["cslb"]).path == files["cslb"]  # a path is a path


def test_names_defaults_and_reinstalling(files, tmp_path):
    install_norms(files["mcrae"], "workbook")
    install_norms(files["cslb"], "norms-2013", default=True)
    assert [(e.name, e.default) for e in installed_norms()] == [
        ("workbook", False),
        ("norms-2013", True),
    ]
    set_default_norms("workbook")
    assert load_norms().format == "mcrae"
    other = write_norms(tmp_path / "other.dat", [("owl", "functional", "does hoot", 7)])
    install_norms(other, "workbook", format="cslb")  # a name taken: replaced, still default
    assert [(e.name, e.path, e.default) for e in installed_norms()][0] == (
        "workbook",
        other.resolve(),
        True,
    )
    assert load_norms().concepts == ["owl"]
    for bad in ("", "no/slash", "-dash", "x" * 65, "sp ace"):
        with pytest.raises(TacitError, match="norms name"):
            install_norms(files["cslb"], bad)
    with pytest.raises(TacitError, match=r"no installed norms named 'nope' \(installed: workb"):
        set_default_norms("nope")


def test_installed_norms_are_checked_before_use(files):
    install_norms(files["mcrae"])
    with open(files["mcrae"], "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(TacitError, match=r"\(mcrae\) changed since it was installed; run `probe"):
        load_norms("mcrae")
    files["mcrae"].unlink()
    with pytest.raises(TacitError, match=r"\(mcrae\) is gone; run `probe norms install mcrae PATH"):
        load_norms()


def test_format_options_apply_to_paths_not_names(files):
    install_norms(files["generic"], "mine", columns=MAPPING)
    assert load_norms("mine", format="generic", columns=MAPPING).format == "generic"  # the same
    with pytest.raises(TacitError, match="norms mine: installed as generic norms with columns"):
        load_norms("mine", format="cslb")
    with pytest.raises(TacitError, match="apply to a norms file given by path"):
        load_norms("mine", columns={"concept": "Word", "feature": "Property", "pf": "n"})
    assert load_norms(files["generic"], columns=MAPPING).columns == MAPPING


def test_unknown_names_and_where_runs_look(files, tmp_path, monkeypatch):
    with pytest.raises(TacitError, match="CSLB norms are handed out"):
        resolve_norms_path(None)
    with pytest.raises(TacitError, match=r"mcrae: no such norms file, nor installed norms of that"):
        load_norms("mcrae")
    monkeypatch.setenv("TACIT_NORMS", "mcrae")  # $TACIT_NORMS may name an installed set too
    install_norms(files["mcrae"], "mcrae")
    install_norms(files["cslb"], default=True)
    assert load_norms().format == "mcrae"  # the environment beats the installed default
    assert load_norms().name == "mcrae"
    monkeypatch.setenv("TACIT_NORMS", str(files["generic"]))
    assert load_norms(columns=MAPPING).format == "generic"
    assert load_norms(columns=MAPPING).name is None  # a file by path has no installed name
    monkeypatch.delenv("TACIT_NORMS")
    assert load_norms().format == "cslb"  # without it, the installed default
    monkeypatch.setenv("TACIT_NORMS", "mcrae")
    assert load_norms("cslb").format == "cslb"  # --norms beats both
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mcrae").write_bytes(files["cslb"].read_bytes())
    assert load_norms("mcrae").format == "cslb"  # a file of that name wins over the name


def test_a_registry_from_before_names_still_reads(files):
    """Before names, norms.json held one CSLB file: it reads as `cslb`, the default."""
    registry = config_dir() / "norms.json"
    registry.parent.mkdir(parents=True)
    old = {"path": str(files["cslb"].resolve()), "sha256": read_norms(files["cslb"]).sha256}
    registry.write_text(json.dumps(old, indent=2) + "\n")
    assert [(e.name, e.format, e.default) for e in installed_norms()] == [("cslb", "cslb", True)]
    assert load_norms().sha256 == old["sha256"]
    install_norms(files["mcrae"])  # rewritten in the new form, the old entry kept
    record = json.loads(registry.read_text())
    assert record["default"] == "cslb" and list(record["norms"]) == ["cslb", "mcrae"]
    assert record["norms"]["cslb"]["path"] == old["path"]


@pytest.mark.parametrize("content", ["not json", "[]", '{"norms": {"x": {"path": "p"}}}', "{}"])
def test_an_unreadable_registry_says_so(content):
    registry = config_dir() / "norms.json"
    registry.parent.mkdir(parents=True)
    registry.write_text(content)
    with pytest.raises(TacitError, match="norms.json: unreadable .*; move it away, then run"):
        installed_norms()
