"""Norms, items and template files named `hf://datasets/OWNER/NAME[@REVISION]/PATH`
(tacit.hub.dataset_files), read offline from a Hugging Face cache the test lays out as the Hub's
downloads leave it: huggingface_hub's own hf_hub_download finds the files, so URL parsing,
revisions, errors and the manifest's record are all the real ones. No test reaches the
internet (HF_HUB_OFFLINE)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import huggingface_hub.constants
import pytest
from support import fails_cleanly
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.hub.dataset_files import fetch_hub_file, parse_hub_url

COMMITS = {"main": "a" * 40, "v1": "b" * 40}
ITEMS = [
    {"text": "[Y] has fur.", "candidates": ["A bear", "A knife"], "answer": "A bear"},
    {"text": "A knife is made of [Y].", "candidates": ["metal", "fur"], "answer": "metal"},
]
TEMPLATES = [{"relation": "has", "template": "[A X] has [Y]."}]


@pytest.fixture
def hub(tmp_path, monkeypatch, toy_norms_path) -> Path:
    """A cache holding the dataset `someone/facts` at main and at the tag v1 (v1's items file
    has one item only), offline."""
    cache = tmp_path / "hf-cache"
    repo = cache / "datasets--someone--facts"
    (repo / "refs").mkdir(parents=True)
    for ref, commit in COMMITS.items():
        snapshot = repo / "snapshots" / commit
        (snapshot / "data").mkdir(parents=True)
        items = ITEMS if ref == "main" else ITEMS[:1]
        (snapshot / "data" / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
        (snapshot / "templates.jsonl").write_text(json.dumps(TEMPLATES[0]) + "\n")
        shutil.copy(toy_norms_path, snapshot / "norms.dat")
        (repo / "refs" / ref).write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return cache


@pytest.mark.parametrize(
    "url, repo, revision, path",
    [
        ("hf://datasets/someone/facts/data/items.jsonl", "someone/facts", None, "data/items.jsonl"),
        ("hf://datasets/someone/facts@v1/items.csv", "someone/facts", "v1", "items.csv"),
        ("hf://datasets/a/b@refs%2Fpr%2F3/x.jsonl", "a/b", "refs/pr/3", "x.jsonl"),
    ],
)
def test_a_url_names_dataset_revision_and_file(url, repo, revision, path):
    hub = parse_hub_url(url, "ITEMS")
    assert (hub.repo, hub.revision, hub.path_in_repo) == (repo, revision, path)


@pytest.mark.parametrize(
    "url, message",
    [
        ("hf://someone/facts/items.jsonl", "tacit reads files of Hub datasets"),
        ("hf://models/someone/bert/items.jsonl", "tacit reads files of Hub datasets"),
        ("hf://datasets/someone/facts", "expected hf://datasets/OWNER/NAME"),
        ("hf://datasets/someone/facts@/items.jsonl", "expected hf://datasets/OWNER/NAME"),
        ("hf://datasets/someone/facts/data//items.jsonl", "expected hf://datasets/OWNER/NAME"),
    ],
)
def test_a_malformed_url_is_one_line_saying_the_form(url, message):
    with pytest.raises(TacitError, match=message) as raised:
        parse_hub_url(url, "ITEMS")
    assert str(raised.value).startswith(f"ITEMS {url}: ")


def test_a_cached_file_is_found_offline_with_its_commit(hub):
    fetched = fetch_hub_file("hf://datasets/someone/facts/data/items.jsonl", "ITEMS")
    assert fetched.commit == COMMITS["main"]
    assert fetched.path.read_text().count("\n") == 2
    tagged = fetch_hub_file("hf://datasets/someone/facts@v1/data/items.jsonl", "ITEMS")
    assert tagged.commit == COMMITS["v1"] and tagged.path.read_text().count("\n") == 1
    pinned = fetch_hub_file(f"hf://datasets/someone/facts@{COMMITS['v1']}/norms.dat", "--norms")
    assert pinned.commit == COMMITS["v1"]
    assert tagged.record() == {
        "source": "hf://datasets/someone/facts@v1/data/items.jsonl",
        "commit": COMMITS["v1"],
    }


@pytest.mark.parametrize(
    "url",
    [
        "hf://datasets/someone/other/items.jsonl",  # a dataset never downloaded
        "hf://datasets/someone/facts/missing.jsonl",  # a file of it never downloaded
        "hf://datasets/someone/facts@v2/data/items.jsonl",  # a revision never downloaded
    ],
)
def test_a_file_not_in_the_cache_offline_is_one_line_naming_the_url(hub, url):
    with pytest.raises(TacitError) as raised:
        fetch_hub_file(url, "ITEMS")
    assert str(raised.value) == (
        f"ITEMS {url}: not in the Hugging Face cache, and the Hub cannot be reached "
        "(offline, or HF_HUB_OFFLINE is set): fetch it once online"
    )


def test_items_from_the_hub_run_and_are_recorded_with_the_commit(hub, tiny_bert):
    url = "hf://datasets/someone/facts@v1/data/items.jsonl"
    result = tacit.items(url, models=[tiny_bert], quiet=True)
    record = result.manifest["items"]
    assert record["source"] == url and record["commit"] == COMMITS["v1"]
    assert record["name"] == "items.jsonl" and len(record["sha256"]) == 64
    assert result.manifest["counts"]["items"] == 1


@pytest.mark.slow
def test_items_from_the_hub_on_the_command_line(hub, tiny_bert, tmp_path):
    url = "hf://datasets/someone/facts/data/items.jsonl"
    out = tmp_path / "run"
    done = CliRunner().invoke(app, ["items", url, "-m", tiny_bert, "--out", str(out), "-q"])
    assert done.exit_code == 0, done.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["items"]["commit"] == COMMITS["main"]
    assert manifest["items"]["source"] == url
    missing = "hf://datasets/someone/facts/none.jsonl"
    fails_cleanly(["items", missing, "-m", tiny_bert], f"ITEMS {missing}: not in the Hugging")


def test_a_bad_item_from_the_hub_names_the_url_and_line(hub, tiny_bert):
    snapshot = hub / "datasets--someone--facts" / "snapshots" / COMMITS["main"]
    (snapshot / "bad.jsonl").write_text('{"text": "no blank", "candidates": ["a", "b"]}\n')
    url = "hf://datasets/someone/facts/bad.jsonl"
    fails_cleanly(["items", url, "-m", tiny_bert], f"{url}, line 1: ")


def test_templates_from_the_hub_are_recorded_with_the_commit(hub):
    url = "hf://datasets/someone/facts@v1/templates.jsonl"
    templates = tacit.load_templates(url)
    assert [t.text for t in templates.templates] == ["[A X] has [Y]."]
    record = templates.record()
    assert record["source"] == url and record["commit"] == COMMITS["v1"]
    assert record["file"] == "templates.jsonl"
    assert "commit" not in tacit.load_templates("paper").record()
    with pytest.raises(TacitError, match="^templates hf://datasets/someone/facts/t.jsonl: not in"):
        tacit.load_templates("hf://datasets/someone/facts/t.jsonl")


@pytest.mark.slow
def test_norms_from_the_hub_run_and_are_recorded_with_the_commit(hub, tiny_bert, toy_norms_path):
    url = "hf://datasets/someone/facts/norms.dat"
    norms = tacit.load_norms(url)
    assert norms.table.equals(tacit.read_norms(toy_norms_path).table)
    result = tacit.retrieve([tiny_bert], norms=url, max_props=1, quiet=True)
    record = result.manifest["norms"]
    assert record["source"] == url and record["commit"] == COMMITS["main"]
    assert record["sha256"] == tacit.read_norms(toy_norms_path).sha256
    assert (
        "source"
        not in tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, quiet=True).manifest[
            "norms"
        ]
    )


@pytest.mark.slow
def test_norms_installed_from_the_hub_are_recorded_with_the_commit(hub, tiny_bert, monkeypatch):
    monkeypatch.setenv("TACIT_CONFIG_DIR", str(hub.parent / "config"))
    url = f"hf://datasets/someone/facts@{COMMITS['v1']}/norms.dat"
    done = CliRunner().invoke(app, ["norms", "install", "toy", url])
    assert done.exit_code == 0, done.output
    assert "installed as 'toy'" in done.output
    shown = CliRunner().invoke(app, ["norms", "show", "--norms", "toy"])
    assert f"* toy: cslb, 8 concepts, {url} (cached at " in shown.output
    result = tacit.retrieve([tiny_bert], norms="toy", max_props=1, quiet=True)
    record = result.manifest["norms"]
    assert (record["name"], record["source"], record["commit"]) == ("toy", url, COMMITS["v1"])
    missing = "hf://datasets/someone/facts/none.dat"
    fails_cleanly(["norms", "install", missing], f"probe norms install {missing}: not in the")


def test_mcrae_without_registration_is_one_documented_command(
    tmp_path, monkeypatch, tiny_bert, toy_norms_path
):
    """Issue 47: the first run needs norms, CSLB's come after registration. The "no norms file"
    error gives the one command that installs McRae's from a copy on the Hub (its dataset and
    file pinned to a commit), as the README and docs/norms.md do; run here on a cache holding a
    stand-in file of the same shape at that path (the Hub cannot be reached)."""
    from support import REPO, write_mcrae

    from tacit.hub.dataset_files import parse_hub_url
    from tacit.norms.store import MCRAE_HUB

    command = f"probe norms install mcrae {MCRAE_HUB}"
    monkeypatch.setenv("TACIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("TACIT_NORMS", raising=False)
    line = fails_cleanly(["retrieve", "-m", tiny_bert], "no norms file")
    assert line.endswith(command + "`")
    for documented in (REPO / "README.md", REPO / "docs" / "norms.md"):
        assert command in " ".join(documented.read_text().split()), documented
    hub = parse_hub_url(MCRAE_HUB, "--norms")
    cache = tmp_path / "hf-cache"
    repo = cache / f"datasets--{hub.repo.replace('/', '--')}"
    snapshot = repo / "snapshots" / str(hub.revision)
    snapshot.mkdir(parents=True)
    write_mcrae(snapshot / hub.path_in_repo)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    done = CliRunner().invoke(app, command.split()[1:])
    assert done.exit_code == 0, done.output
    assert "installed as 'mcrae'" in done.output
    result = tacit.retrieve([tiny_bert], max_props=1, quiet=True)  # the default now
    record = result.manifest["norms"]
    assert (record["name"], record["format"]) == ("mcrae", "mcrae")
    assert (record["source"], record["commit"]) == (MCRAE_HUB, hub.revision)
