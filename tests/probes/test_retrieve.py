"""Retrieval prompts: eligibility with reasons, property choice and order, the English list."""

import numpy as np
import pytest
from support import (
    REAL_NORMS,
    TOY_NORMS,
    needs_shared,
    real_bert_tokenizer,
    real_roberta_tokenizer,
    vocabulary_prompts,
    write_norms,
)

from tacit.core.errors import TacitError
from tacit.hub.model_files import load_tokenizer
from tacit.norms import read_norms
from tacit.probes.retrieve.prompts import (
    ABLATION_GRIDS,
    RANDOM_BASELINE,
    Condition,
    concept_properties,
    eligible_concepts,
    english_list,
    order_phrases,
    phrase_series,
    select_properties,
)
from tacit.vocab import build_vocabulary


@pytest.fixture(scope="module")
def toy(toy_norms_path, tiny_bert, tiny_roberta):
    vocab = build_vocabulary({"b": load_tokenizer(tiny_bert), "r": load_tokenizer(tiny_roberta)})
    return read_norms(toy_norms_path), vocab


def test_english_list():
    assert english_list(["a"]) == "a"
    assert english_list(["a", "b"]) == "a and b"
    assert english_list(["a", "b", "c", "d"]) == "a, b, c, and d"


def test_eligibility_reasons(toy):
    norms, vocab = toy
    eligible, dropped = eligible_concepts(norms, vocab)
    assert eligible == ["bear", "cat", "dog", "knife", "zebra"]
    assert dict(zip(dropped.concept, dropped.reason)) == {
        "apple": "vowel-initial (a/an)",
        "bat_(animal)": "sense label",
        "coffee_machine": "more than one word",
    }


def test_not_a_single_token_names_the_model(toy_norms_path, tiny_bert, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("cat\ndog\nknife\nzebra\n")
    vocab = build_vocabulary({"b": load_tokenizer(tiny_bert)}, vocab_file=words)
    _, dropped = eligible_concepts(read_norms(toy_norms_path), vocab)
    assert dict(zip(dropped.concept, dropped.reason))["bear"] == "not in the vocabulary file"


def test_requested_concepts(toy):
    norms, vocab = toy
    assert eligible_concepts(norms, vocab, ["dog", "cat"])[0] == ["dog", "cat"]
    with pytest.raises(TacitError, match="not in the norms: unicorn"):
        eligible_concepts(norms, vocab, ["cat", "unicorn"])
    eligible, dropped = eligible_concepts(norms, vocab, ["apple", "cat"])
    assert eligible == ["cat"] and list(dropped.itertuples(index=False)) == [
        ("apple", "vowel-initial (a/an)")
    ]


def test_properties_by_pf_with_alphabetical_ties(toy):
    norms, _ = toy
    bear = concept_properties(norms, "bear")
    # "lives in forests" and "eats fish" share pf 9: alphabetical by phrase
    assert list(bear.phrase[:6]) == [
        "has fur",
        "is big",
        "has claws",
        "eats fish",
        "lives in forests",
        "is an animal",
    ]
    assert list(concept_properties(norms, "bear", "functional").phrase) == [
        "eats fish",
        "hibernates",
        "climbs trees",
        "roars",
    ]


def test_selection_and_order(toy):
    norms, _ = toy
    props = concept_properties(norms, "bear")
    rng = np.random.default_rng(0)
    bottom = select_properties(props, "bottom", 2, rng)
    assert order_phrases(bottom, "increasing", rng) == ["is wild", "roars"]
    assert order_phrases(bottom, "decreasing", rng) == ["roars", "is wild"]
    picked = order_phrases(select_properties(props, "random", 3, rng), "random", rng)
    assert len(set(picked)) == 3 and set(picked) <= set(props.phrase)


def test_random_baseline_is_five_orders_of_five_sets(toy):
    norms, _ = toy
    props = concept_properties(norms, "bear")
    series = phrase_series(props, RANDOM_BASELINE, max_props=10, rng=np.random.default_rng(1))
    assert len(series) == 25 and all(len(s) == 10 for s in series)
    sets = [frozenset(s) for s in series]
    assert all(sets[i] == sets[i - i % 5] for i in range(25))  # each set in 5 orders
    assert len(set(sets)) > 1 and len({tuple(s) for s in series}) > 5


def test_prompts_grow_one_property_at_a_time(toy):
    norms, vocab = toy
    built = vocabulary_prompts(norms, vocab, max_props=3)
    bear = built.prompts[built.prompts.concept == "bear"]
    assert list(bear.prompt) == [
        "A <mask> has fur.",
        "A <mask> has fur and is big.",
        "A <mask> has fur, is big, and has claws.",
    ]
    assert list(bear.n_props) == [1, 2, 3]
    assert set(bear.target) == {"bear"}
    zebra = built.prompts[built.prompts.concept == "zebra"]
    assert list(zebra.prompt) == ["A <mask> has stripes."]
    assert built.short == {"all": ["zebra"]}
    with pytest.raises(TacitError, match="--max-props 0"):
        vocabulary_prompts(norms, vocab, max_props=0)
    with pytest.raises(TacitError, match="--select 'best'"):
        vocabulary_prompts(norms, vocab, [Condition(selection="best")])


def test_ordering_ablation_prompts(toy):
    norms, vocab = toy
    built = vocabulary_prompts(norms, vocab, ABLATION_GRIDS["ordering"], max_props=10, seed=3)
    prompts = built.prompts
    conditions = prompts.groupby(["selection", "order"])["sample"].nunique().to_dict()
    assert conditions == {
        ("bottom", "decreasing"): 1,
        ("bottom", "increasing"): 1,
        ("random", "random"): 25,
        ("top", "decreasing"): 1,
        ("top", "increasing"): 1,
    }
    bear = prompts[prompts.concept == "bear"]
    assert sorted(bear.n_props.unique()) == list(range(1, 11))
    assert len(bear) == 4 * 10 + 25 * 10
    top_inc = bear[(bear.selection == "top") & (bear.order == "increasing")]
    assert top_inc.prompt.iloc[0] == "A <mask> is dangerous."  # the 10th highest pf first
    again = vocabulary_prompts(
        norms, vocab, ABLATION_GRIDS["ordering"], max_props=10, seed=3
    ).prompts
    assert again.equals(prompts)
    other = vocabulary_prompts(
        norms, vocab, ABLATION_GRIDS["ordering"], max_props=10, seed=4
    ).prompts
    random_rows = prompts.selection == "random"
    assert not other[random_rows].prompt.equals(prompts[random_rows].prompt)
    assert other[~random_rows].equals(prompts[~random_rows])


def test_category_ablation_prompts(toy):
    norms, vocab = toy
    built = vocabulary_prompts(norms, vocab, ABLATION_GRIDS["category"], max_props=10)
    prompts = built.prompts
    assert set(prompts.category) == {"all", "visual", "functional", "encyclopaedic"}
    bear_functional = prompts[(prompts.concept == "bear") & (prompts.category == "functional")]
    assert list(bear_functional.prompt)[-1] == (
        "A <mask> eats fish, hibernates, climbs trees, and roars."
    )
    assert "bear" in built.short["functional"]  # 4 functional properties < 10: noted
    assert "zebra" not in set(prompts[prompts.category == "functional"].concept)


@pytest.mark.slow
@needs_shared
def test_real_norms_give_266_concepts_and_2660_prompts():
    vocab = build_vocabulary({"bert": real_bert_tokenizer(), "roberta": real_roberta_tokenizer()})
    built = vocabulary_prompts(read_norms(REAL_NORMS), vocab, max_props=10)
    assert built.prompts["concept"].nunique() == 266
    assert len(built.prompts) == 2660
    assert len(built.dropped) == 638 - 266
    assert built.dropped["reason"].value_counts().to_dict() == {
        "not a single token in bert": 273,
        "vowel-initial (a/an)": 47,
        "more than one word": 25,
        "not a single token in roberta": 17,
        "sense label": 10,
    }
    assert not built.prompts["concept"].str[0].isin(list("aeiou")).any()


def test_prompts_naming_their_target_are_counted(tiny_bert, toy_norms_path, tmp_path):
    from tacit.api import retrieve

    norms = write_norms(tmp_path / "n.dat", [*TOY_NORMS, ("cat", "functional", "is a cat", 30)])
    result = retrieve([tiny_bert], norms=norms, max_props=2, quiet=True)
    naming = result.manifest["counts"]["prompts_naming_their_target"]
    assert naming == {"prompts": 2, "concepts": ["cat"]}  # "is a cat" first, at 1 and 2 props


def test_intervals_depend_on_the_condition_not_on_the_models_path():
    import pandas as pd

    from tacit.probes.retrieve.summary import summarize_retrieval

    rng = np.random.default_rng(0)
    rows = pd.DataFrame(
        {
            "concept": [f"c{i}" for i in range(20)],
            "n_props": 1,
            "selection": "top",
            "order": "decreasing",
            "category": "all",
            "sample": 0,
            "reciprocal_rank": rng.random(20),
            "target_prob": rng.random(20),
            "target_prob_shared": rng.random(20),
            "rank": rng.integers(1, 30, 20),
        }
    )
    here = summarize_retrieval(rows.assign(model="/tmp/a/model"))
    there = summarize_retrieval(rows.assign(model="/home/b/model"))
    columns = ["mrr_ci_low", "mrr_ci_high", "target_prob_ci_low", "target_prob_ci_high"]
    assert here[columns].equals(there[columns])
    other_condition = summarize_retrieval(rows.assign(model="/tmp/a/model", order="increasing"))
    assert not here[columns].equals(other_condition[columns])


def test_one_property_is_singular(tiny_bert, toy_norms_path):
    """The leaderboard's and `probe compare`'s condition said "MRR, 1 properties"."""
    import tacit
    from tacit.probes import registry

    result = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, quiet=True)
    (label, _), *_ = registry.get("retrieve").conditions(result.summary, result.manifest)
    assert label == "1 property, top/decreasing/all"
