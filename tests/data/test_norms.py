"""Reading and validating norms files; installing them; finding the one a run uses."""

import pytest
from support import REAL_NORMS, TOY_NORMS, needs_shared, write_norms

from tacit.core.errors import TacitError
from tacit.norms import install_norms, load_norms, read_norms, resolve_norms_path
from tacit.norms.reader import NORM_COLUMNS
from tacit.probes.report import report_of


def test_reads_toy_norms_with_crlf(toy_norms_path):
    norms = read_norms(toy_norms_path)
    assert list(norms.table.columns) == NORM_COLUMNS
    assert norms.concepts[:3] == ["bear", "cat", "dog"]
    bear = norms.features_of("bear")
    assert bear.iloc[0].to_dict() == {
        "concept": "bear",
        "feature": "has fur_hair",
        "feature_type": "visual perceptual",
        "pf": 20,
        "relation": "has",
        "phrase": "has fur",
        "answer": "fur_hair",
    }
    assert norms.format == "cslb" and norms.feature_types
    assert len(norms.sha256) == 64


def test_duplicates_merge_by_distinct_participants(toy_norms_path):
    norms = read_norms(toy_norms_path)
    tails = norms.table[(norms.table.concept == "dog") & (norms.table.feature == "has a tail")]
    # rows "p 1..8" (pf 8, visual) and "p 7 8 / 9" (pf 3): participants 1..9
    assert tails[["pf", "feature_type"]].values.tolist() == [[9, "visual perceptual"]]
    assert norms.merged.to_dict("records") == [
        {"concept": "dog", "feature": "has a tail", "pfs": "8 3", "pf": 9}
    ]
    assert len(norms.table) == len(TOY_NORMS) - 1


def test_line_ends_do_not_matter(tmp_path):
    unix = read_norms(write_norms(tmp_path / "lf.dat", line_end="\n")).table
    dos = read_norms(write_norms(tmp_path / "crlf.dat", line_end="\r\n")).table
    assert unix.equals(dos)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty file"),
        ("concept,feature\nbear,has fur\n", "header lacks column(s) 'pf'"),  # a generic table
        ("domain\tfeature type\tconcept\tfeature\n", "header lacks column(s) 'pf'"),
        ("domain\tfeature type\tconcept\tfeature\tpf\n", "header only"),
        (
            "domain\tfeature type\tconcept\tfeature\tpf\nliving\tfunctional\tbear\tdoes eat\tmany\n",
            ":2: column 'pf' holds 'many', not a whole number",
        ),
        (
            "domain\tfeature type\tconcept\tfeature\tpf\nliving\tfunctional\tbear\tdoes eat\t-3\n",
            ":2: column 'pf' holds -3, below 1",
        ),
        (
            "domain\tfeature type\tconcept\tfeature\tpf\nliving\tsmell\tbear\tdoes eat\t3\n",
            ":2: column 'feature type' holds an unknown type 'smell'",
        ),
        (
            "domain\tfeature type\tconcept\tfeature\tpf\nliving\tfunctional\tbear\n",
            ":2: 3 tab-separated fields",
        ),
    ],
)
def test_bad_files_name_the_line_and_problem(tmp_path, content, message):
    path = tmp_path / "bad.dat"
    path.write_text(content)
    with pytest.raises(TacitError) as err:
        read_norms(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_other_formats_and_encodings(tmp_path, toy_norms_path):
    as_json = tmp_path / "norms.json"
    as_json.write_text('[{"concept": "bear", "feature": "has fur", "pf": 3}]')
    with pytest.raises(TacitError, match=r"norms.json:1: not a norms format tacit knows"):
        read_norms(as_json)
    as_csv = tmp_path / "norms.csv"  # CSLB's columns, comma-separated: a generic table
    as_csv.write_text("concept,feature,feature type,pf\nbear,has fur,visual perceptual,3\n")
    assert read_norms(as_csv).format == "generic"
    utf16 = tmp_path / "utf16.dat"
    utf16.write_bytes(toy_norms_path.read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(TacitError, match="not UTF-8"):
        read_norms(utf16)
    bom = tmp_path / "bom.dat"
    bom.write_bytes(b"\xef\xbb\xbf" + toy_norms_path.read_bytes())
    assert read_norms(bom).table.equals(read_norms(toy_norms_path).table)
    old_mac = tmp_path / "cr.dat"
    old_mac.write_bytes(toy_norms_path.read_bytes().replace(b"\r\n", b"\r"))
    assert read_norms(old_mac).table.equals(read_norms(toy_norms_path).table)
    with pytest.raises(TacitError, match="is a directory"):
        read_norms(tmp_path)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(TacitError, match="no such norms file"):
        read_norms(tmp_path / "nope.dat")
    binary = tmp_path / "norms.xlsx"
    binary.write_bytes(b"PK\x03\x04\xff\xfe\x00garbage")
    with pytest.raises(TacitError, match="not a readable .xlsx workbook"):
        read_norms(binary)


def test_install_then_runs_find_it(toy_norms_path, tmp_path, monkeypatch):
    with pytest.raises(TacitError, match="CSLB norms are handed out"):
        resolve_norms_path(None)
    monkeypatch.setenv("TACIT_NORMS", str(toy_norms_path))
    assert resolve_norms_path(None) == toy_norms_path
    copy = write_norms(tmp_path / "installed.dat")
    install_norms(copy)
    assert resolve_norms_path(None) == toy_norms_path  # the environment beats the installed
    monkeypatch.delenv("TACIT_NORMS")
    assert resolve_norms_path(None) == copy.absolute()  # then the installed default
    assert resolve_norms_path(toy_norms_path) == toy_norms_path  # --norms beats both
    assert load_norms().sha256 == read_norms(copy).sha256
    copy.write_text(copy.read_text() + "living\tfunctional\tcat\tdoes sleep\t3\t\t\n")
    with pytest.raises(TacitError, match="changed since it was installed"):
        resolve_norms_path(None)


def test_install_refuses_a_bad_file(tmp_path):
    bad = tmp_path / "bad.dat"
    bad.write_text("nothing here\n")
    with pytest.raises(TacitError, match="not a norms format tacit knows"):
        install_norms(bad)
    with pytest.raises(TacitError, match="no norms file"):
        resolve_norms_path(None)


@needs_shared
def test_real_cslb_file():
    norms = read_norms(REAL_NORMS)
    assert len(norms.concepts) == 638
    assert len(norms.table) == 22667 - 4  # four duplicated pairs merged
    assert sorted(norms.merged["concept"]) == ["hamster", "leopard", "poison", "tarantula"]
    assert norms.table["pf"].between(2, 30).all()
    assert not norms.table.duplicated(["concept", "feature"]).any()


@pytest.mark.skipif(not REAL_NORMS.is_file(), reason=f"CSLB's norms.dat not found at {REAL_NORMS}")
def test_the_papers_norms_are_known_by_their_sha256():
    """The paper's counts are printed only beside runs of the file the paper used: its sha256
    is a constant in tacit (CI may not have the file), checked here against the file."""
    from tacit.core.files import file_sha256
    from tacit.norms.cslb import PAPER_SHA256

    assert file_sha256(REAL_NORMS) == PAPER_SHA256 == read_norms(REAL_NORMS).sha256


def test_the_papers_counts_only_beside_the_papers_norms(tmp_path):
    import pandas as pd

    from tacit.norms.cslb import PAPER_SHA256
    from tacit.probes import registry

    summary = pd.DataFrame(
        {
            "model": ["m", "m"],
            "relation": ["has", "is"],
            "prefix": [True, True],
            "n_prompts": [4, 3],
            "n_concepts": [4, 3],
            "map_vocab": [0.5, 0.25],
            "map_vocab_ci_low": [0.4, 0.2],
            "map_vocab_ci_high": [0.6, 0.3],
            "map_sens": [0.7, 0.6],
            "spearman_mean": [0.1, None],
        }
    )
    elicit = registry.get("elicit")
    toy = {"norms": {"sha256": read_norms(write_norms(tmp_path / "n.dat")).sha256}}
    assert "paper_n_prompts" not in report_of(elicit).table(summary, toy)[0].frame
    papers = report_of(elicit).table(summary, {"norms": {"sha256": PAPER_SHA256}})[0].frame
    assert papers["paper_n_prompts"].tolist() == [564, 583]
