"""Matrices made from norms: every participant or a subset of CSLB's, the split-half ceiling
recomputed by hand from the lists, a model's norms written in CSLB's columns and read back by
tacit's norms reader, and two norm sets of two notations aligned."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import cosine_similarity
from support import HEADER, TOY_MCRAE, random_rows, write_norms

from tacit.core.errors import TacitError
from tacit.norms import read_norms
from tacit.structure import (
    align,
    compare_norms,
    from_norms,
    model_norms_table,
    noise_ceiling,
    participant_numbers,
    split_halves,
    write_model_norms,
)

ROWS = [  # (concept, feature type, feature, pf, participant list)
    ("bear", "visual perceptual", "has fur_hair", 4, "p 1 2 3 / 4"),
    ("bear", "visual perceptual", "is big_large", 3, "p 2 5 / 6"),
    ("bear", "functional", "does eat fish", 2, "p 1 6"),
    ("cat", "visual perceptual", "has fur_hair", 5, "p 1 2 3 4 / 5"),
    ("cat", "functional", "does purr", 3, "p 3 4 6"),
    ("dog", "functional", "does bark", 4, "p 2 3 4 5"),
    ("dog", "visual perceptual", "has fur_hair", 2, "p 1 / 1 6"),  # 1 in two groups
]


@pytest.fixture()
def small(tmp_path):
    return read_norms(write_norms(tmp_path / "norms.dat", ROWS))


def test_the_reader_keeps_participant_lists_and_domains(small, toy_norms_path):
    assert list(small.participants) == [r[4] for r in ROWS]
    assert small.domains == {"bear": "living", "cat": "living", "dog": "living"}
    toy = read_norms(toy_norms_path)  # dog / has a tail twice: its lists joined
    row = toy.table.index[(toy.table["concept"] == "dog") & (toy.table["feature"] == "has a tail")]
    assert participant_numbers(toy.participants[row[0]]) == list(range(1, 10))


def test_the_whole_matrix_and_a_subset_by_hand(small):
    whole = from_norms(small)
    assert whole.concepts == ("bear", "cat", "dog")
    assert whole.features == (
        "has fur_hair",
        "is big_large",
        "does eat fish",
        "does purr",
        "does bark",
    )
    assert whole.values[:, 0].tolist() == [4, 5, 2]  # the file's pf
    assert whole.relations[:2] == ("has", "is")
    subset = from_norms(small, participants={1, 2})
    # bear: fur 1 2, big 2, fish 1; cat: fur 1 2, purr -; dog: bark 2, fur 1 (once)
    assert subset.values.tolist() == [[2, 1, 1, 0], [2, 0, 0, 0], [1, 0, 0, 1]]
    assert subset.features == ("has fur_hair", "is big_large", "does eat fish", "does bark")
    assert subset.left_out == {"features none of the participants chosen listed": ("does purr",)}
    proportion = from_norms(small, value="proportion")
    # participants seen: bear 1 2 3 4 5 6, cat 1-6, dog 1-6
    assert proportion.values[0, 0] == pytest.approx(4 / 6)
    per_concept = from_norms(small, participants={"bear": [5, 6]})
    assert per_concept.concepts == ("bear",)
    assert per_concept.values.tolist() == [[2.0, 1.0]]  # big: 5 / 6; fish: 6
    assert from_norms(small, value="binary").values.max() == 1


def test_norms_without_lists_say_so(tmp_path):
    mcrae = pd.DataFrame(TOY_MCRAE, columns=["Concept", "Feature", "BR_Label", "Prod_Freq"])
    path = tmp_path / "mcrae.csv"
    mcrae.to_csv(path, index=False)
    norms = read_norms(path)
    assert norms.participants is None
    with pytest.raises(TacitError, match="no participant lists"):
        from_norms(norms, participants=[1])
    with pytest.raises(TacitError, match="n_participants"):
        from_norms(norms, value="proportion")
    assert from_norms(norms, value="proportion", n_participants=30).values.max() <= 1
    ceiling = noise_ceiling(norms)
    assert np.isnan(ceiling["reliability"].iloc[0])
    assert "no participant lists" in ceiling["reason"].iloc[0]


def random_norms(tmp_path, seed=0, concepts=10, features=12, people=10):
    """A CSLB file whose concepts share features by group, listed by random participants."""
    rows = random_rows(seed, concepts, features, people)
    return read_norms(write_norms(tmp_path / "random.dat", rows))


def test_split_halves_recomputed_from_the_lists(tmp_path):
    norms = random_norms(tmp_path)
    seed, n = 4, 5
    ours = split_halves(norms, n_splits=n, seed=seed)
    # the documented draw: one number per (concept, participant), concepts in order,
    # participants increasing; each concept's first half of them by that number is A
    lists = {}
    for concept, feature, cell in zip(
        norms.table["concept"], norms.table["feature"], norms.participants
    ):
        lists[(concept, feature)] = set(participant_numbers(cell))
    concepts, features = norms.concepts, list(dict.fromkeys(norms.table["feature"]))
    pool = {c: sorted({p for (k, _), ps in lists.items() if k == c for p in ps}) for c in concepts}
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(len(concepts), 1)
    for s in range(n):
        draw = iter(rng.random(sum(len(v) for v in pool.values())))
        halves = [np.zeros((len(concepts), len(features))) for _ in range(2)]
        for i, c in enumerate(concepts):
            keyed = sorted(zip([next(draw) for _ in pool[c]], pool[c]))
            half = len(keyed) // 2
            groups = [{p for _, p in keyed[:half]}, {p for _, p in keyed[half : 2 * half]}]
            for j, f in enumerate(features):
                for h in (0, 1):
                    halves[h][i, j] = len(lists.get((c, f), set()) & groups[h])
        a, b = cosine_similarity(halves[0]), cosine_similarity(halves[1])
        assert ours[s] == pytest.approx(spearmanr(a[iu], b[iu])[0])
    ceiling = noise_ceiling(norms, n_splits=n, seed=seed)
    assert ceiling["reliability"].iloc[0] == pytest.approx(np.mean(2 * ours / (1 + ours)))
    assert ceiling["reason"].iloc[0] == ""


def counts_of_draws():
    return pd.DataFrame(
        {
            "concept": ["bear", "bear", "bear", "bear", "cat", "cat", "cat"],
            "feature": [
                "has fur_hair",
                "has fur_hair",
                "has fur_hair",
                "is big_large",
                "does purr",
                "does purr",
                "has fur_hair",
            ],
            "draw": [1, 2, 3, 1, 1, 2, 2],
            "count": [1, 2, 1, 1, 1, 0, 1],
            "wording": ["fur", "hair", "fur", "big", "purrs", "purrs", "fur"],
        }
    )


def test_a_models_norms_round_trip_through_the_norms_reader(tmp_path):
    path = tmp_path / "model.dat"
    record = write_model_norms(
        counts_of_draws(),
        path,
        feature_types={"has fur_hair": "visual perceptual"},
        domains={"bear": "living"},
    )
    norms = read_norms(path)  # as --norms reads it: recognised as CSLB's
    assert norms.format == "cslb"
    table = norms.table.set_index(["concept", "feature"])
    assert table.loc[("bear", "has fur_hair"), "pf"] == 3
    assert table.loc[("cat", "does purr"), "pf"] == 1  # a count of 0 is no listing
    assert table.loc[("bear", "has fur_hair"), "feature_type"] == "visual perceptual"
    assert table.loc[("bear", "is big_large"), "relation"] == "is"
    lists = dict(zip(zip(norms.table["concept"], norms.table["feature"]), norms.participants))
    assert lists[("bear", "has fur_hair")] == "p 1 3 / 2"  # grouped by wording
    assert norms.domains == {"bear": "living"}
    assert record["untyped"] == {
        "features typed encyclopaedic (no type given)": ["does purr", "is big_large"]
    }
    # the model's draws are its participants: subsets and split halves work on them
    assert from_norms(norms, participants=[2]).values.tolist() == [[1.0], [1.0]]
    assert path.read_text().splitlines()[0] == HEADER  # CSLB's own columns, in its order


def test_model_norms_leave_out_rare_pairs_and_refuse_bad_counts(tmp_path):
    table, record = model_norms_table(counts_of_draws(), min_pf=2)
    assert list(zip(table["concept"], table["feature"])) == [("bear", "has fur_hair")]
    assert record["left_out"] == {
        "pairs given by fewer than 2 draws": [
            "bear: is big_large",
            "cat: does purr",
            "cat: has fur_hair",
        ]
    }
    bad = counts_of_draws().assign(draw=[1, 2, 0, 1, 1, 2, 2])
    with pytest.raises(TacitError, match="counts row 3: draw '0'"):
        model_norms_table(bad)
    with pytest.raises(TacitError, match="lack column"):
        model_norms_table(counts_of_draws().drop(columns="count"))
    with pytest.raises(TacitError, match="nothing to write"):
        write_model_norms(counts_of_draws(), tmp_path / "x.dat", min_pf=9)
    assert not (tmp_path / "x.dat").exists()


def test_two_notations_align_on_concepts_and_features(tmp_path, toy_norms_path):
    mcrae = pd.DataFrame(TOY_MCRAE, columns=["Concept", "Feature", "BR_Label", "Prod_Freq"])
    mcrae.to_csv(tmp_path / "mcrae.csv", index=False)
    a = from_norms(read_norms(tmp_path / "mcrae.csv"))
    b = from_norms(read_norms(toy_norms_path))
    done = align(a, b, features=True)
    assert set(done.a.concepts) == set(a.concepts) & set(b.concepts)
    assert done.a.concepts == done.b.concepts and done.a.features == done.b.features
    # McRae's is_furry/fuzzy is not CSLB's has fur_hair; has_4_legs would be has four legs
    pairs = {r.reason: r.count for r in done.report.itertuples() if r.side == "both"}
    assert sum(pairs.values()) == len(done.a.concepts) + len(done.a.features)
    left = done.report[done.report["side"] != "both"]
    assert (left["count"] > 0).all()
    # McRae's an_animal, beh_-_barks, beh_-_flies are CSLB's is an animal, does bark, does fly
    assert done.a.features == (
        "is an animal",
        "has a tail",
        "does bark",
        "made of metal",
        "is sharp",
        "does fly",
        "is brown",
    )
    got = done.a.table()
    assert got.loc["dog", "does bark"] == a.table().loc["dog", "beh_-_barks"] == 21
    assert got.loc["bear", "is an animal"] == a.table().loc["bear", "an_animal"] == 12
    assert done.b.table().loc["bear", "is an animal"] == b.table().loc["bear", "is an animal"]


def test_compare_norms_writes_every_table_and_figure(tmp_path):
    first, second = random_norms(tmp_path, seed=1), random_norms(tmp_path / "..", seed=2)
    categories = {f"c{c}": f"g{c % 3}" for c in range(10)}
    found = compare_norms(
        first, second, categories=categories, n_resamples=10, n_permutations=10, n_splits=3
    )
    assert {"rsa", "ceiling", "verification", "calibration", "categories", "map", "prior"} <= set(
        found.tables
    )
    assert found.tables["ceiling"]["reason"].tolist() == ["", ""]  # both have lists
    out = found.write(tmp_path / "out")
    names = {p.name for p in out.iterdir()}
    assert {"rsa.csv", "rsa.png", "map.png", "reliability.png", "structure.json", "a", "b"} <= names
    assert pd.read_csv(out / "rsa.csv")["value"].iloc[0] == pytest.approx(
        found.tables["rsa"]["value"].iloc[0]
    )
