"""McRae et al. (2005) norms: the workbook and its CSV/TSV export, phrasing rules, errors."""

import pandas as pd
import pytest
from support import REAL_MCRAE, TOY_MCRAE, mcrae_frame, needs_mcrae, write_mcrae

from tacit.core.errors import TacitError
from tacit.norms import read_norms
from tacit.norms.mcrae import BR_LABELS
from tacit.norms.mcrae_phrasing import RULES, describe, rule_counts, rule_of
from tacit.norms.phrasing import one_word_answers
from tacit.norms.tables import xlsx_rows


@pytest.fixture(scope="module")
def toy_xlsx(tmp_path_factory):
    return write_mcrae(tmp_path_factory.mktemp("mcrae") / "CONCS_FEATS_concstats_brm.xlsx")


def test_workbook_and_its_exports_give_the_same_norms(toy_xlsx, tmp_path):
    norms = read_norms(toy_xlsx)
    assert norms.format == "mcrae" and norms.feature_types
    for suffix in (".csv", ".tsv"):
        export = read_norms(write_mcrae(tmp_path / f"sheet{suffix}"))
        assert export.format == "mcrae"
        pd.testing.assert_frame_equal(export.table, norms.table)
        pd.testing.assert_frame_equal(export.merged, norms.merged)
    assert len(norms.table) == len(TOY_MCRAE) - 1
    assert norms.merged.to_dict("records") == [
        {"concept": "pen", "feature": "used_for_writing", "pfs": "16 5", "pf": 16}
    ]  # no participant lists: the larger pf, as CSLB without lists
    assert norms.concepts[:3] == ["accordion", "bat_(animal)", "bear"]


def test_the_columns_probes_read(toy_xlsx):
    table = read_norms(toy_xlsx).table.set_index(["concept", "feature"])
    assert table.loc[("dog", "has_4_legs")].to_dict() == {
        "feature_type": "visual perceptual",
        "pf": 15,
        "relation": "has",
        "phrase": "has 4 legs",
        "answer": "4 legs",
    }
    assert table.loc[("bear", "is_furry/fuzzy"), ["phrase", "answer"]].tolist() == [
        "is furry",
        "furry_fuzzy",
    ]
    assert table.loc[("bear", "an_animal"), ["relation", "answer"]].tolist() == ["is a", "animal"]
    assert table.loc[("knife", "made_of_metal"), ["relation", "answer"]].tolist() == [
        "made of",
        "metal",
    ]
    assert table.loc[("bat_(animal)", "beh_-_flies"), ["phrase", "relation"]].tolist() == [
        "flies",
        "does",
    ]
    assert table["pf"].dtype == "int64"


def test_answers_use_one_notation():
    """McRae's `_` is a space, its `/` an alternative: `4 legs` is two words, not two answers."""
    assert one_word_answers(describe("has_4_legs")[2]) is None
    assert one_word_answers(describe("is_furry/fuzzy")[2]) == ["furry", "fuzzy"]
    assert one_word_answers(describe("has_paddles/is_paddled")[2]) == ["paddles"]


@pytest.mark.parametrize(("label", "feature_type"), list(BR_LABELS.items()))
def test_br_labels_map_onto_feature_types(tmp_path, label, feature_type):
    path = write_mcrae(tmp_path / "one.csv", [("bear", "is_big", label, 5)])
    assert read_norms(path).table["feature_type"].tolist() == [feature_type]


# One McRae feature of every shape: feature, phrase, relation, answer.
SHAPES = [
    ("beh_-_bark_peals_off", "has bark that peels off", "has", "bark that peels off"),  # fix
    ("inbeh_-_water_flows_through_it", "lets water flow through it", "does", ""),
    ("has_>_4_wheels", "has more than 4 wheels", "has", "more than 4 wheels"),
    ("worn_by_men_-_kilt", "is worn by men", "is", "worn by men"),
    ("beh_-_flies", "flies", "does", ""),
    ("beh_-_is_nocturnal", "is nocturnal", "is", "nocturnal"),
    ("beh_-_does_tricks", "does tricks", "does", ""),
    ("inbeh_-_produces_music", "produces music", "does", ""),
    ("eg_-_granny_smith", "can be granny smith", "other", ""),
    ("eg_weeping", "can be weeping", "other", ""),
    ("a_baby_is_a_kitten", "has a baby called a kitten", "has a", "baby called a kitten"),
    ("a_jewelry", "is jewelry", "is", "jewelry"),
    ("a_coniferous", "is coniferous", "is", "coniferous"),
    ("a_musical_instrument", "is a musical instrument", "is a", "musical instrument"),
    ("an_animal", "is an animal", "is a", "animal"),
    ("made_of_metal", "is made of metal", "made of", "metal"),
    ("used_long_ago", "was used long ago", "other", ""),
    ("used_for_cooking", "is used for cooking", "is", "used for cooking"),
    (
        "used_for_locking/unlocking_doors",
        "is used for locking doors",
        "is",
        "used for locking_unlocking doors",
    ),
    ("worn_on_feet", "is worn on feet", "is", "worn on feet"),
    ("found_in_kitchens", "is found in kitchens", "is", "found in kitchens"),
    ("eaten_as_prunes_(dried)", "is eaten as prunes", "is", "eaten as prunes"),
    ("made_by_bees", "is made by bees", "is", "made by bees"),
    ("associated_with_Dracula", "is associated with Dracula", "is", "associated with Dracula"),
    ("bought/sold_in_stores", "is bought in stores", "is", "bought_sold in stores"),
    ("is_red", "is red", "is", "red"),
    ("is_furry/fuzzy", "is furry", "is", "furry_fuzzy"),
    ("has_keys", "has keys", "has", "keys"),
    ("has_a_flat_head_(slot)", "has a flat head", "has a", "flat head"),
    ("has_an_udder", "has an udder", "has a", "udder"),
    ("has_paddles/is_paddled", "has paddles", "has", "paddles_is paddled"),
    ("different_colours", "comes in different colours", "does", ""),
    ("part_of_a_tree", "is part of a tree", "is", "part of a tree"),
    ("symbol_of_peace", "is a symbol of peace", "is a", "symbol of peace"),
    ("symbol", "is a symbol", "is a", "symbol"),
    ("king_of_the_jungle", "is the king of the jungle", "is", "the king of the jungle"),
    ("like_a_bee", "is like a bee", "is", "like a bee"),
    ("clothing", "is clothing", "is", "clothing"),
    ("lives_in_water", "lives in water", "does", ""),
    ("tastes_hot/spicy", "tastes hot", "does", ""),
    ("requires_a_license", "requires a license", "does", ""),
    ("Frisbee_thrower", "Frisbee thrower", "other", ""),  # made up: no rule of its own
]


@pytest.mark.parametrize(("feature", "phrase", "relation", "answer"), SHAPES)
def test_feature_shapes(feature, phrase, relation, answer):
    assert describe(feature) == (phrase, relation, answer)


def test_every_rule_has_a_tested_example_that_reaches_it():
    shapes = {feature for feature, *_ in SHAPES}
    for rule in RULES[:-1]:
        assert rule_of(rule.example) is rule, rule.shape
        assert any(rule_of(feature) is rule for feature in shapes), rule.shape
    assert rule_of("Frisbee_thrower") is RULES[-1]


def test_rule_counts_cover_every_feature():
    features = [feature for feature, *_ in SHAPES]
    counts = rule_counts(features)
    assert list(counts.columns) == ["shape", "example", "phrase", "features"]
    assert list(counts["shape"]) == [rule.shape for rule in RULES]
    assert counts["features"].sum() == len(features)
    assert counts.set_index("shape").loc["made_of_X -> is made of X", "features"] == 1
    assert counts.loc[counts["example"] == "made_of_metal", "phrase"].item() == "is made of metal"


def _bad(path, position, column, value):
    frame = mcrae_frame().astype(object)
    frame.iloc[position, frame.columns.get_loc(column)] = value
    if path.suffix == ".xlsx":
        frame.to_excel(path, sheet_name="concepts_features", index=False)
    else:
        frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])
@pytest.mark.parametrize(
    ("position", "column", "value", "message"),
    [
        (2, "Prod_Freq", "many", "column 'Prod_Freq' holds 'many', not a whole number"),
        (2, "Prod_Freq", -3, "column 'Prod_Freq' holds -3, below 1"),
        (2, "Prod_Freq", 2.5, "column 'Prod_Freq' holds '2.5', not a whole number"),
        (2, "BR_Label", "smelly", "column 'BR_Label' holds 'smelly', not a McRae feature class"),
        (2, "Concept", "", "column 'Concept' is empty"),
        (2, "Feature", None, "column 'Feature' is empty"),
        (2, "Prod_Freq", None, "column 'Prod_Freq' is empty"),
    ],
)
def test_bad_rows_name_file_row_column_and_value(
    tmp_path, suffix, position, column, value, message
):
    path = _bad(tmp_path / f"bad{suffix}", position, column, value)
    with pytest.raises(TacitError) as err:
        read_norms(path)
    text = str(err.value)
    where = "sheet 'concepts_features', row 4: " if suffix == ".xlsx" else f"{path}:4: "
    assert text.startswith(str(path)) and where in text and message in text, text
    assert "\n" not in text


def test_wrong_sheet_missing_columns_and_unreadable_workbooks(tmp_path):
    other = write_mcrae(tmp_path / "other.xlsx", sheet="Sheet1")
    with pytest.raises(TacitError, match=r"no sheet 'concepts_features' \(sheets: 'Sheet1', 'var"):
        read_norms(other)
    frame = mcrae_frame().drop(columns=["BR_Label", "Prod_Freq"])
    lacking = tmp_path / "lacking.xlsx"
    frame.to_excel(lacking, sheet_name="concepts_features", index=False)
    with pytest.raises(TacitError) as err:
        read_norms(lacking)
    assert "sheet 'concepts_features', row 1: header lacks column(s) 'BR_Label', 'Prod_Freq'" in (
        str(err.value)
    )
    assert "(found: Concept, Feature, WB_Label, Rank_PF)" in str(err.value)
    csv = tmp_path / "lacking.csv"
    frame.drop(columns=["Feature"]).assign(BR_Label="taxonomic").to_csv(csv, index=False)
    with pytest.raises(TacitError, match=r"lacking.csv:1: header lacks column\(s\) 'Feature'"):
        read_norms(csv)
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    with pytest.raises(TacitError, match=r"broken.xlsx: not a readable .xlsx workbook \("):
        read_norms(broken)
    old = tmp_path / "old.xls"
    old.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64)
    with pytest.raises(TacitError, match="Excel 97-2003"):
        read_norms(old)


def test_format_can_be_said(toy_xlsx, tmp_path):
    assert read_norms(toy_xlsx, format="mcrae").format == "mcrae"
    with pytest.raises(TacitError, match="a generic table must be CSV or TSV"):
        read_norms(toy_xlsx, format="generic")
    with pytest.raises(TacitError, match="not UTF-8"):  # CSLB files are text
        read_norms(toy_xlsx, format="cslb")
    with pytest.raises(TacitError, match="apply to generic tables only"):
        read_norms(toy_xlsx, format="mcrae", columns={"concept": "Concept"})
    with pytest.raises(
        TacitError, match="no norms format named 'xlsx': expected one of cslb, mcrae"
    ):
        read_norms(toy_xlsx, format="xlsx")


@pytest.fixture(scope="module")
def real_mcrae():
    return read_norms(REAL_MCRAE)


@pytest.mark.slow
@needs_mcrae
def test_real_workbook(real_mcrae):
    """7,259 rows: two concept-feature pairs occur twice (harpoon / used_for_killing, pf 8 and
    6; pen / used_for_writing, 16 and 5), merged, so 7,257 rows remain; 541 concepts."""
    table = real_mcrae.table
    assert len(real_mcrae.concepts) == 541
    assert len(table) == 7259 - 2
    assert real_mcrae.merged.to_dict("records") == [
        {"concept": "harpoon", "feature": "used_for_killing", "pfs": "8 6", "pf": 8},
        {"concept": "pen", "feature": "used_for_writing", "pfs": "16 5", "pf": 16},
    ]
    assert table["pf"].between(5, 30).all()
    assert table["feature_type"].value_counts().to_dict() == {
        "visual perceptual": 2336 + 424 + 339,
        "functional": 1518 - 2,
        "encyclopaedic": 1417,
        "taxonomic": 730,
        "other perceptual": 245 + 142 + 84 + 24,
    }
    assert "bat_(animal)" in real_mcrae.concepts


@pytest.mark.slow
@needs_mcrae
def test_every_real_feature_reads_as_a_clean_phrase(real_mcrae):
    table = real_mcrae.table
    phrases = table["phrase"]
    assert (phrases.str.len() > 0).all()
    assert not phrases.str.contains(r"[_/()>]| - |  ").any()
    assert (phrases == phrases.str.strip()).all()
    first = phrases.str.split(" ").str[0]
    assert set(first[table["relation"].isin(["is", "is a", "made of"])]) == {"is"}
    assert set(first[table["relation"].isin(["has", "has a"])]) == {"has"}
    answering = table["relation"].isin(["is", "is a", "has", "has a", "made of"])
    assert (table.loc[answering, "answer"].str.len() > 0).all()
    assert (table.loc[~answering, "answer"] == "").all()


@pytest.mark.slow
@needs_mcrae
def test_real_rule_counts_add_up():
    """Every one of the 7,259 rows' features is handled by a rule of its own shape."""
    header, rows = xlsx_rows(REAL_MCRAE, "concepts_features")
    at = header.index("Feature")
    counts = rule_counts(cells[at] for _, cells in rows)
    assert counts["features"].sum() == 7259
    assert counts.set_index("shape")["features"].iloc[-1] == 0  # nothing falls through
    assert (counts["features"].iloc[:-1] > 0).all()
