"""The structure probe by scoring spans (`--candidates answers`): every feature, one-word and
multi-word, scored as exact spans in elicitation's blank, checked against plain transformers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from support import plain_span_scores, write_norms
from transformers import AutoTokenizer

import tacit
from tacit.models.base import Scorer
from tacit.norms.phrasing import answer_spans
from tacit.probes.structure.scoring import NOT_CANDIDATES, NOT_READ_WHOLE
from tacit.templates import load_templates

DRAWS = {"resamples": 20, "permutations": 20, "splits": 3}

# multi-word features, and two features that give the same text (`fur`)
SPAN_ROWS = [
    ("bear", "visual perceptual", "has fur_hair", 20),
    ("bear", "visual perceptual", "has sharp teeth", 9),
    ("bear", "visual perceptual", "is big_large", 18),
    ("bear", "taxonomic", "is an animal", 7),
    ("cat", "visual perceptual", "has fur", 25),
    ("cat", "visual perceptual", "has four legs_feet", 15),
    ("cat", "encyclopaedic", "is a pet", 14),
    ("dog", "visual perceptual", "has fur_hair", 22),
    ("dog", "visual perceptual", "has four legs_feet", 12),
    ("dog", "encyclopaedic", "is a pet", 20),
    ("knife", "visual perceptual", "is sharp", 19),
    ("knife", "visual perceptual", "has a handle", 10),
]


def read_written(directory):
    values = np.load(directory / "matrix.npz", allow_pickle=False)["values"]
    concepts = pd.read_csv(directory / "concepts.csv", keep_default_na=False)["concept"]
    features = pd.read_csv(directory / "features.csv", keep_default_na=False)["feature"]
    return pd.DataFrame(values, index=list(concepts), columns=list(features))


def counting_spans(monkeypatch) -> list[tuple[int, int]]:
    """Every (distinct prompts, distinct spans) the models were asked to score together."""
    asked: list[tuple[int, int]] = []
    scored = Scorer.score_spans

    def counting(self, templates, spans, *args, **kwargs):
        assert len(set(spans)) == len(spans)  # each distinct text once per prompt
        if kwargs.get("cache", True):  # the tie rule's sentences alone are not the matrix's
            asked.append((len(set(templates)), len(spans)))
        return scored(self, templates, spans, *args, **kwargs)

    monkeypatch.setattr(Scorer, "score_spans", counting)
    return asked


def spans_of(norms, relation):
    """The relation's candidate texts and each feature's, as the norms give them."""
    table = norms.table.drop_duplicates("feature")
    table = table[table["relation"] == relation]
    texts = {f: answer_spans(a) for f, a in zip(table["feature"], table["answer"])}
    return sorted({t for ts in texts.values() for t in ts}), texts


@pytest.mark.slow
def test_every_feature_is_its_spans_as_plain_transformers_scores_them(
    tiny_roberta, tmp_path, monkeypatch
):
    """A cell is the log-sum-exp of the feature's texts' span log-probabilities (l2r, plain
    transformers: one pass per token); every prompt scores each distinct text of its relation
    once; one-token words score as the vocabulary path reads them."""
    path = write_norms(tmp_path / "norms.dat", SPAN_ROWS)
    norms = tacit.read_norms(path)
    asked = counting_spans(monkeypatch)
    found = tacit.concept_structure(
        [tiny_roberta], norms=str(path), candidates="answers", quiet=True, seed=1, **DRAWS
    )
    prompts, counts = found.prompts, found.manifest["counts"]
    sizes = counts["spans_per_relation"]
    pairs = int(prompts["relation"].map(sizes).sum())
    assert sum(t * s for t, s in asked) == pairs == counts["span_scorings_per_model"]
    has, texts = spans_of(norms, "has")
    assert has.count("fur") == 1 and sizes["has"] == len(has)  # fur: two features, one text
    assert counts["features_scored"] == len({row[2] for row in SPAN_ROWS})
    assert counts["features_left_out_by_reason"] == {}  # RoBERTa's bytes read every text
    out = found.save(tmp_path / "run")
    matrix = read_written(out / "matrix" / tiny_roberta.strip("/").replace("/", "_"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["candidates"] == "answers"
    assert (out / "candidates-has.txt").read_text().splitlines() == has
    meta = json.loads(next((out / "matrix").glob("*/matrix.json")).read_text())
    assert '"candidates": "answers"' in json.dumps(meta) and '"span_scoring": "l2r"' in json.dumps(
        meta
    )
    asked_has = prompts[prompts["relation"] == "has"]
    plain, _ = plain_span_scores(tiny_roberta, list(asked_has["prompt"]), has, "l2r")
    at = {c: n for n, c in enumerate(asked_has["concept"])}
    checked = 0
    for feature, spans in texts.items():
        for concept in matrix.index:
            expected = logsumexp(plain[at[concept], [has.index(s) for s in spans]])
            assert matrix.loc[concept, feature] == pytest.approx(expected, abs=1e-4)
            checked += 1
    assert checked >= 16 and {"has sharp teeth", "has four legs_feet"} <= set(texts)
    # the one-word features of one token each: the vocabulary path's cells, the same
    by_vocab = tacit.concept_structure([tiny_roberta], norms=str(path), quiet=True, seed=1, **DRAWS)
    vocab = read_written(
        by_vocab.save(tmp_path / "vocab") / "matrix" / tiny_roberta.strip("/").replace("/", "_")
    )
    tokenizer = AutoTokenizer.from_pretrained(tiny_roberta)
    answer = dict(zip(norms.table["feature"], norms.table["answer"]))
    one_token = [
        f
        for f in vocab.columns
        if all(len(tokenizer.tokenize(" " + t)) == 1 for t in answer_spans(answer[f]))
    ]
    assert len(one_token) >= 3
    np.testing.assert_allclose(
        matrix.loc[vocab.index, one_token], vocab[one_token], rtol=1e-5, atol=1e-4
    )


def test_features_no_tokenizer_reads_are_counted(tiny_bert, toy_norms_path, tmp_path):
    """A text the tokenizer reads as an unknown token is not scored: a feature with no text
    left is left out, counted by reason in the manifest and the matrix; the dry run counts a
    sentence per prompt and candidate."""
    estimate = tacit.concept_structure(
        [tiny_bert],
        norms=str(toy_norms_path),
        candidates="answers",
        quiet=True,
        dry_run=True,
        dry_run_seconds=0,
    )
    norms = tacit.read_norms(toy_norms_path)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    table = norms.table.drop_duplicates("feature")
    table = table[table["relation"].isin(load_templates().relations)]
    unread = {
        f
        for f, a in zip(table["feature"], table["answer"])
        if all(tokenizer.unk_token in tokenizer.tokenize(t) for t in answer_spans(a))
    }
    readable = {
        r: sorted(
            {
                t
                for a in table.loc[table["relation"] == r, "answer"]
                for t in answer_spans(a)
                if tokenizer.unk_token not in tokenizer.tokenize(t)
            }
        )
        for r in dict.fromkeys(table["relation"])
    }
    asked = {r for r, spans in readable.items() if spans}
    concepts = len(norms.concepts)
    assert estimate.sentences == sum(concepts * len(readable[r]) for r in asked)
    assert "usual: one prompt per feature word" not in str(estimate)
    assert unread
    found = tacit.concept_structure(
        [tiny_bert],
        norms=str(toy_norms_path),
        candidates="answers",
        concepts=["bear", "cat", "dog", "knife"],
        quiet=True,
        seed=1,
        **DRAWS,
    )
    counts = found.manifest["counts"]
    assert counts["features_left_out_by_reason"] == {NOT_READ_WHOLE: len(unread)}
    assert counts["features_scored"] == len(table) - len(unread)
    assert set(counts["spans_not_read_whole"]) >= {"hair", "large"}
    out = found.save(tmp_path / "run")
    meta = json.loads(next((out / "matrix").glob("*/matrix.json")).read_text())
    assert meta["left_out"][NOT_READ_WHOLE]["count"] == len(unread)
    assert set(meta["left_out"][NOT_READ_WHOLE]["items"]) == unread


@pytest.mark.slow
def test_a_causal_models_spans_are_its_sentences(tiny_gpt2, tmp_path):
    """A causal LM's `sum` is its whole sentence's log-probability: a one-word feature's cell
    by spans is the vocabulary path's (log P(w | before) + log P(after | before, w)) plus
    log P(the text before the blank), the same for every feature of a concept's relation."""
    path = write_norms(tmp_path / "norms.dat", SPAN_ROWS)
    norms = tacit.read_norms(path)
    name = tiny_gpt2.strip("/").replace("/", "_")
    runs = [
        tacit.concept_structure([tiny_gpt2], norms=str(path), quiet=True, seed=1, **DRAWS, **given)
        for given in ({"candidates": "answers"}, {})
    ]
    spans, vocab = (
        read_written(r.save(tmp_path / str(n)) / "matrix" / name) for n, r in enumerate(runs)
    )
    relation = dict(zip(norms.table["feature"], norms.table["relation"]))
    common = [f for f in vocab.columns if f in spans.columns]
    offset = spans.loc[vocab.index, common] - vocab[common]
    for _, features in pd.Series(common).groupby([relation[f] for f in common]):
        block = offset[list(features)].to_numpy()
        np.testing.assert_allclose(block, block[:, :1].repeat(block.shape[1], 1), atol=1e-3)
    assert (offset.to_numpy() < -1).all()  # log P(before) of a random model: far below 0
    assert len({relation[f] for f in common}) >= 2 and len(common) >= 5


def test_a_file_of_candidates_keeps_the_features_it_names(tiny_bert, toy_norms_path, tmp_path):
    """`--candidates FILE`: a feature none of whose texts the file lists is left out, counted;
    each relation with a feature kept scores the file's spans."""
    listed = tmp_path / "candidates.txt"
    listed.write_text("fur\nclaws\n")
    found = tacit.concept_structure(
        [tiny_bert],
        norms=str(toy_norms_path),
        candidates=str(listed),
        concepts=["bear", "cat", "dog", "knife"],
        quiet=True,
        seed=1,
        **DRAWS,
    )
    counts = found.manifest["counts"]
    assert counts["spans_per_relation"] == {"has": 2}
    assert counts["features_scored"] == 2  # has fur_hair (fur), has claws
    assert counts["span_scorings_per_model"] == 4 * 2
    assert list(counts["features_left_out_by_reason"]) == [NOT_CANDIDATES]
