"""Generic norms tables: the same prompts and gold answers as CSLB, other column names, any pf,
and one-line errors for bad files."""

import json

import pandas as pd
import pytest
from support import TOY_NORMS, vocabulary_prompts

from tacit.core.choices import RELATIONS
from tacit.core.errors import TacitError
from tacit.hub.model_files import load_tokenizer
from tacit.norms import parse_columns, read_norms
from tacit.norms.generic import DEFAULT_FEATURE_TYPE
from tacit.probes.elicit.prompts import (
    build_elicitation_prompts,
    gold_answers,
    parse_gold,
)
from tacit.probes.retrieve.prompts import ABLATION_GRIDS
from tacit.vocab import build_vocabulary


@pytest.fixture(scope="module")
def vocab(tiny_bert, tiny_roberta):
    return build_vocabulary({"b": load_tokenizer(tiny_bert), "r": load_tokenizer(tiny_roberta)})


def write_table(path, rows, header=("concept", "feature", "pf", "feature_type"), sep=None):
    """A generic table: CSV, or TSV for a .tsv path, written with pandas (quoting as needed)."""
    sep = sep or ("\t" if path.suffix == ".tsv" else ",")
    pd.DataFrame(rows, columns=list(header)).to_csv(path, sep=sep, index=False)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_toy_cslb_norms_as_a_generic_table_give_the_same_prompts(
    toy_norms_path, vocab, tmp_path, suffix
):
    """One row per concept-feature pair (CSLB's duplicate already merged, as read)."""
    cslb = read_norms(toy_norms_path)
    rows = cslb.table[["concept", "feature", "pf", "feature_type"]]
    generic = read_norms(write_table(tmp_path / f"toy{suffix}", rows.values.tolist()))
    assert generic.format == "generic" and generic.feature_types
    pd.testing.assert_frame_equal(generic.table, cslb.table)
    conditions = [*ABLATION_GRIDS["ordering"], *ABLATION_GRIDS["category"]]
    want = vocabulary_prompts(cslb, vocab, conditions, max_props=10)
    got = vocabulary_prompts(generic, vocab, conditions, max_props=10)
    pd.testing.assert_frame_equal(got.prompts, want.prompts)
    pd.testing.assert_frame_equal(got.dropped, want.dropped)
    golds, want_golds = (
        gold_answers(generic, vocab, RELATIONS),
        gold_answers(cslb, vocab, RELATIONS),
    )
    pd.testing.assert_frame_equal(golds.answers, want_golds.answers)
    pd.testing.assert_frame_equal(golds.excluded, want_golds.excluded)
    pd.testing.assert_frame_equal(
        build_elicitation_prompts(golds.answers, RELATIONS, [True]),
        build_elicitation_prompts(want_golds.answers, RELATIONS, [True]),
    )


# A generic table's features, ready phrases or CSLB-style text: (feature, phrase, relation, answer)
FEATURES = [
    ("has fur", "has fur", "has", "fur"),
    ("has fur_hair", "has fur", "has", "fur_hair"),
    ("flies", "flies", "other", ""),
    ("does fly", "flies", "does", ""),
    ("is made of metal", "is made of metal", "made of", "metal"),
    ("made of metal", "is made of metal", "made of", "metal"),
    ("is an animal", "is an animal", "is a", "animal"),
    ("has  a   tail", "has a tail", "has a", "tail"),
]


def test_ready_phrases_and_cslb_text_read_alike(tmp_path):
    rows = [("bear", feature, 3) for feature, *_ in FEATURES]
    path = write_table(tmp_path / "t.csv", rows, header=("concept", "feature", "pf"))
    table = read_norms(path).table
    got = table[["feature", "phrase", "relation", "answer"]].values.tolist()
    assert got == [[" ".join(feature.split()), *rest] for feature, *rest in FEATURES]
    assert set(table["feature_type"]) == {DEFAULT_FEATURE_TYPE}


def test_a_users_own_table_with_other_column_names(vocab, tmp_path):
    rows = [
        ("bear", "has fur", 30),
        ("bear", "is big", 12.5),
        ("bear", "eats fish", 4),
        ("cat", "has fur", 20),
        ("cat", "purrs", 0),
        ("knife", "cuts", 7),
        ("knife", "is made of metal", 7),
    ]
    path = write_table(tmp_path / "mine.txt", rows, header=("Word", "Property", "Count"), sep=";")
    columns = parse_columns("concept=Word,feature=Property,pf=Count")
    norms = read_norms(path, columns=columns)
    assert norms.format == "generic" and norms.columns == columns and not norms.feature_types
    assert norms.table["pf"].dtype == float
    prompts = vocabulary_prompts(norms, vocab, max_props=3).prompts
    bear = prompts[prompts.concept == "bear"]
    assert bear.prompt.tolist() == [
        "A <mask> has fur.",
        "A <mask> has fur and is big.",
        "A <mask> has fur, is big, and eats fish.",
    ]
    knife = prompts[prompts.concept == "knife"].prompt.tolist()
    assert knife[-1] == "A <mask> cuts and is made of metal."  # pf tie: alphabetical
    assert read_norms(path, columns={"concept": "word", "feature": "property", "pf": "count"})


def test_fractional_pf_round_trips_through_the_gold_string(vocab, tmp_path):
    rows = [("bear", "has fur", 2.5), ("bear", "has claws", 20), ("cat", "has fur", 0)]
    norms = read_norms(write_table(tmp_path / "f.csv", rows, header=("concept", "feature", "pf")))
    golds = gold_answers(norms, vocab, ["has"])
    prompts = build_elicitation_prompts(golds.answers, ["has"], [True])
    gold = dict(zip(prompts.concept, prompts.gold))
    assert gold["bear"] == "claws:20.0 fur:2.5"
    assert parse_gold(gold["bear"]) == [("claws", 20.0), ("fur", 2.5)]
    assert parse_gold("fur:20 claws:12") == [("fur", 20), ("claws", 12)]  # CSLB: ints
    assert isinstance(parse_gold("fur:20")[0][1], int)
    assert parse_gold("x:1e-05") == [("x", 1e-05)]


def test_duplicates_merge_to_the_larger_pf(tmp_path):
    """Without participant lists the larger pf is kept (CSLB, which lists participants, gives
    dog / has a tail 9 from the lists of its rows of 8 and 3)."""
    rows = [(c, f, pf, t) for c, t, f, pf, *_ in TOY_NORMS]
    norms = read_norms(write_table(tmp_path / "dups.csv", rows))
    assert norms.merged.to_dict("records") == [
        {"concept": "dog", "feature": "has a tail", "pfs": "8 3", "pf": 8}
    ]
    tail = norms.table[(norms.table.concept == "dog") & (norms.table.feature == "has a tail")]
    assert tail[["pf", "feature_type"]].values.tolist() == [[8, "visual perceptual"]]


def test_a_tsv_with_cslb_column_names_but_not_cslb_is_generic(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("concept\tfeature\tfeature type\tpf\nbear\thas fur\tvisual perceptual\t2.5\n")
    norms = read_norms(path)
    assert norms.format == "generic" and norms.table["pf"].tolist() == [2.5]


def test_feature_types_are_checked_and_any_case(tmp_path):
    rows = [("bear", "has fur", 3, "Visual Perceptual")]
    path = write_table(
        tmp_path / "t.csv", rows, header=("concept", "feature", "pf", "Feature Type")
    )
    assert read_norms(path).table["feature_type"].tolist() == ["visual perceptual"]
    bad = write_table(tmp_path / "bad.csv", [("bear", "has fur", 3, "smell")])
    with pytest.raises(TacitError, match=r"bad.csv:2: column 'feature_type' holds an unknown type"):
        read_norms(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("concept=Word,feature", "expected KEY=NAME pairs separated by commas"),
        ("=Word", "expected KEY=NAME pairs"),
        ("", "expected KEY=NAME pairs"),
        ("concept=Word,word=Property", "unknown column key(s) 'word'; keys: concept, feature, pf"),
        ("concept=Word,concept=Name", "key(s) concept given twice"),
        ("concept=Word,feature=Word", "header name(s) 'Word' given twice"),
        ("concept=", "no header name for concept"),
    ],
)
def test_bad_column_mappings(text, message):
    """Named as the caller wrote it: `norms_columns` in Python, `--norms-columns` on the
    command line (tacit.core.option_names)."""
    from tacit.core.option_names import from_command_line

    with pytest.raises(TacitError) as err:
        parse_columns(text)
    assert message in str(err.value) and str(err.value).startswith("norms_columns ")
    with from_command_line(), pytest.raises(TacitError) as err:
        parse_columns(text)
    assert message in str(err.value) and str(err.value).startswith("--norms-columns ")


HEADER = "concept,feature,pf\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (HEADER + "bear,has fur,many\n", ":2: column 'pf' holds 'many', not a number"),
        (HEADER + "bear,has fur,-2\n", ":2: column 'pf' holds -2, a negative number"),
        (HEADER + "bear,has fur,nan\n", ":2: column 'pf' holds 'nan', not a number"),
        (HEADER + "bear,has fur,3\n,has claws,2\n", ":3: column 'concept' is empty"),
        (HEADER + "bear, ,3\n", ":2: column 'feature' is empty"),
        (HEADER + "bear,has fur,\n", ":2: column 'pf' is empty"),
        (HEADER + "bear,has fur\n", ":2: 2 comma-separated fields, the header has 3"),
        (HEADER + "bear,has fur, claws,3\n", "4 comma-separated fields, the header has 3 (an unq"),
        (HEADER, "header only, no norms"),
        ("concept,feature,count\nbear,has fur,3\n", ":1: header lacks column(s) 'pf'"),
        ("word\tproperty\n", ":1: not a norms format tacit knows (header: 'word | property')"),
    ],
)
def test_bad_tables_name_the_line_column_and_problem(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(TacitError) as err:
        read_norms(path)
    assert str(err.value).startswith(str(path)) and message in str(err.value), str(err.value)
    assert "\n" not in str(err.value)


def test_missing_columns_say_which_and_what_was_found(tmp_path):
    path = write_table(tmp_path / "t.csv", [("bear", "fur", 3)], header=("Word", "Property", "n"))
    with pytest.raises(TacitError) as err:
        read_norms(path, columns={"concept": "Word", "feature": "Property", "pf": "Count"})
    assert "header lacks column(s) 'Count'" in str(err.value)
    assert "pf (as 'Count')" in str(err.value) and "(found: Word, Property, n)" in str(err.value)


def test_unknown_formats_list_the_known_ones_in_a_short_line(tmp_path):
    records = [{"concept": f"c{i}", "feature": "has fur " * 20, "pf": i} for i in range(60)]
    as_json = tmp_path / "norms.json"
    as_json.write_text(json.dumps(records))
    assert len(as_json.read_text().splitlines()[0]) > 8000
    with pytest.raises(TacitError) as err:
        read_norms(as_json)
    text = str(err.value)
    assert "not a norms format tacit knows" in text and len(text) < 700, len(text)
    for known in ("cslb (", "mcrae (", "generic (", "format= (--norms-format)"):
        assert known in text
    assert "\n" not in text
    with pytest.raises(TacitError, match="header lacks column"):
        read_norms(as_json, format="generic")
