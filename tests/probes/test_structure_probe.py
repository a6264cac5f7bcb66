"""`probe structure`: two norm sets with no model, and a model's matrix by scoring, each
analysis recomputed from the written files with numpy, scipy and scikit-learn; one pass per
prompt; one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import cosine_similarity
from support import fails_cleanly, probe_in_one_thread, random_rows, write_norms
from transformers import AutoModelForMaskedLM, AutoTokenizer

import tacit
from tacit.models.base import Scorer

DRAWS = {"resamples": 20, "permutations": 20, "splits": 3}


@pytest.fixture()
def two_norm_sets(tmp_path):
    a = write_norms(tmp_path / "a.dat", random_rows(1))
    b = write_norms(tmp_path / "b.dat", random_rows(2))
    categories = tmp_path / "concepts.csv"
    categories.write_text("concept,category\n" + "".join(f"c{c},g{c % 3}\n" for c in range(9)))
    return a, b, categories


def upper(similarity: np.ndarray) -> np.ndarray:
    return similarity[np.triu_indices(len(similarity), k=1)]


def read_written(directory):
    """A matrix directory read with numpy and pandas alone."""
    values = np.load(directory / "matrix.npz", allow_pickle=False)["values"]
    concepts = pd.read_csv(directory / "concepts.csv", keep_default_na=False)["concept"]
    features = pd.read_csv(directory / "features.csv", keep_default_na=False)["feature"]
    return pd.DataFrame(values, index=list(concepts), columns=list(features))


@pytest.mark.slow
def test_two_norm_sets_from_the_command_line_recomputed(two_norm_sets, tmp_path):
    a, b, categories = two_norm_sets
    out = tmp_path / "run"
    args = ["structure", "--norms", a, "--against", b, "--categories", categories]
    args += [f"--{k}={v}" for k, v in DRAWS.items()] + ["--seed", "3", "--out", out]
    done = probe_in_one_thread(args)
    assert done.exit_code == 0, done.output
    summary = pd.read_csv(out / "summary.csv")
    assert summary["model"].tolist() == ["a.dat"]
    compared, reference = read_written(out / "matrix" / "a.dat"), read_written(out / "reference")
    shared = [c for c in reference.index if c in compared.index]
    assert len(shared) == 9
    # proportions of the 10 people; cosine similarities; Spearman's rho of the upper triangles
    rho = spearmanr(
        upper(cosine_similarity(compared.loc[shared].to_numpy())),
        upper(cosine_similarity(reference.loc[shared].to_numpy())),
    ).statistic
    assert summary["rsa"].iloc[0] == pytest.approx(rho, abs=1e-6)
    assert summary["rsa_ci_low"].iloc[0] <= rho <= summary["rsa_ci_high"].iloc[0]
    rsa = pd.read_csv(out / "rsa.csv")
    assert set(rsa["scope"]) == {"all", "domain", "category"}
    ceiling = pd.read_csv(out / "ceiling.csv")
    assert ceiling["of"].tolist() == ["b.dat", "a.dat"]  # the reference's people first
    assert summary["ceiling_fraction"].iloc[0] == pytest.approx(
        rho / ceiling["reliability"].iloc[0], abs=1e-6
    )
    for figure in ("rsa", "categories", "map", "prior", "verification"):
        assert (out / f"{figure}.png").read_bytes()[:4] == b"\x89PNG"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["probe"] == "structure" and manifest["seed"] == 3
    assert manifest["norms"]["sha256"] != manifest["against"]["sha256"]
    assert manifest["options"]["similarity"] == "cosine"
    assert "left_out" in manifest["counts"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give --model"),
        (["--against", "NORMS", "--model", "MODEL"], "give no --model"),
        (["--against", "NORMS", "--limit", "2"], "--limit is for a model's run"),
        (["--model", "MODEL", "--write-norms", "out.dat"], "--write-norms is for --by generation"),
        (["--model", "MODEL", "--participants", "30"], "--participants is for two norm sets"),
        (["--against", "missing.dat"], "missing.dat"),
        (["--model", "MODEL", "--verification", "yes-no"], "yes-no is asked by generation"),
        (["--against", "NORMS", "--verification", "yes-no"], "yes-no asks a model"),
        (
            ["--model", "MODEL", "--by", "generation", "--verification", "yes-no"]
            + ["--write-norms", "o.dat"],
            "--verification yes-no lists nothing",
        ),
    ],
)
def test_bad_input_is_one_line(extra, message, tiny_bert, toy_norms_path, tmp_path):
    named = {"NORMS": str(toy_norms_path), "MODEL": tiny_bert}
    extra = [named.get(x, x) for x in extra]
    fails_cleanly(
        ["structure", "--norms", toy_norms_path, *extra, "--out", tmp_path / "o"],
        message,
        tmp_path / "o",
    )


@pytest.mark.slow
def test_the_scoring_matrix_is_the_plain_models(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    """Every feature's cell is log(sum of its words' probabilities at the mask), as plain
    transformers computes it; every prompt is scored once, whatever its number of features."""
    asked: list[int] = []
    scored = Scorer.score_vocab

    def counting(self, prompts, *args, **kwargs):
        asked.append(len(prompts))
        return scored(self, prompts, *args, **kwargs)

    monkeypatch.setattr(Scorer, "score_vocab", counting)
    concepts = ["bear", "cat", "dog", "knife", "apple"]
    found = tacit.concept_structure(
        [tiny_bert], norms=str(toy_norms_path), concepts=concepts, quiet=True, seed=1, **DRAWS
    )
    prompts = found.prompts
    assert sum(asked) == len(prompts) == len(set(prompts["prompt"]))
    counts = found.manifest["counts"]
    assert counts["prompts_per_model"] == len(prompts)
    assert sum(counts["features_left_out_by_reason"].values()) > 0  # counted, not lost
    out = found.save(tmp_path / "run")
    matrix = read_written(out / "matrix" / tiny_bert.strip("/").replace("/", "_"))
    features = pd.read_csv(out / "reference" / "features.csv", keep_default_na=False)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    norms = tacit.read_norms(toy_norms_path).table.drop_duplicates("feature").set_index("feature")
    checked = 0
    for concept in matrix.index:
        for feature in matrix.columns:
            relation = norms.loc[feature, "relation"]
            row = prompts[(prompts["concept"] == concept) & (prompts["relation"] == relation)]
            text = row["prompt"].iloc[0].replace("<mask>", tokenizer.mask_token)
            encoded = tokenizer(text, return_tensors="pt")
            with torch.no_grad():
                logits = model(**encoded).logits[0]
            at = int((encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
            logs = torch.log_softmax(logits[at].double(), dim=-1)
            words = [w for w in norms.loc[feature, "answer"].split("_") if w in tokenizer.vocab]
            ids = tokenizer.convert_tokens_to_ids(words)
            expected = float(torch.logsumexp(logs[ids], dim=0))
            assert matrix.loc[concept, feature] == pytest.approx(expected, abs=1e-4)
            checked += 1
    assert checked >= 10
    assert set(matrix.columns) <= set(features["feature"])
    # RSA by correlation (log-probabilities are negative), recomputed from the files
    reference = read_written(out / "reference").loc[list(matrix.index)]
    rho = spearmanr(
        upper(np.corrcoef(matrix.to_numpy())), upper(np.corrcoef(reference.to_numpy()))
    ).statistic
    assert found.summary["rsa"].iloc[0] == pytest.approx(rho, abs=1e-6)


def test_a_dry_run_counts_both_ways(tiny_bert, toy_norms_path):
    estimate = tacit.concept_structure(
        [tiny_bert], norms=str(toy_norms_path), quiet=True, dry_run=True, dry_run_seconds=0
    )
    text = str(estimate)
    assert f"{estimate.sentences:,} sentences per model" in text
    line = next(x for x in text.splitlines() if "usual: one prompt per feature word" in x)
    usual = int(line.split(": ")[2].split(" ")[0].replace(",", ""))
    assert usual > estimate.sentences  # every word of its relation in a pass of its own


def test_the_probe_and_the_analyses_keep_their_names():
    import tacit.structure as structure

    assert callable(structure.compare_norms)
    assert tacit.concept_structure is tacit.api.structure
    assert tacit.structure is structure  # the package, not shadowed by the probe's function
    assert "concept_structure" in dir(tacit) and "structure" not in tacit.__all__


def test_a_matrix_of_scored_rows_by_hand(toy_norms_path):
    """A feature's cell: the log-sum-exp of its words' scores, the mean over templates."""
    from tacit.probes.structure.scoring import Features, scored_matrix
    from tacit.structure import from_norms

    reference = from_norms(tacit.read_norms(toy_norms_path))
    features = Features(
        {"has": ["fur", "hair", "claws"]},
        {"has fur_hair": ("has", ["fur", "hair"]), "has claws": ("has", ["claws"])},
        {"features with no word in the shared vocabulary": ["has stripes"]},
    )
    rows = pd.DataFrame(
        {
            "relation": "has",
            "concept": ["bear", "bear", "cat"],
            "template": [0, 1, 0],
            "scores": ["-1 -2 -3", "-3 -2 -1", "-0.5 -4 -9"],
        }
    )
    matrix = scored_matrix(rows, features, reference, {"by": "scoring"})
    assert matrix.concepts == ("bear", "cat") and matrix.features == ("has fur_hair", "has claws")
    bear_fur = np.logaddexp(-2.0, -2.0)  # fur: mean(-1, -3); hair: mean(-2, -2)
    assert matrix.values[0].tolist() == pytest.approx([bear_fur, -2.0])
    assert matrix.values[1].tolist() == pytest.approx([np.logaddexp(-0.5, -4.0), -9.0])
    assert matrix.left_out["features with no word in the shared vocabulary"] == ("has stripes",)
    assert "has a tail" in matrix.left_out["features of a relation not asked"]


SCRIPT = {
    "a knife": [
        "It is sharp, it is made of metal.",
        "It is sharp, it has a handle.",
        "It is sharp.",
    ],
    "a bear": ["It has fur, it is big.", "It has claws, it has fur.", "It is big."],
    "a cat": ["It has fur, it is a pet.", "It has a tail.", "It has fur, it does purr."],
    "a dog": ["It has fur, it is a pet.", "It does bark.", "It is a pet, it does bark."],
    "an apple": ["It is red.", "It is red, it is edible.", "It is red."],
}


@pytest.mark.slow
def test_a_models_listing_becomes_norms_that_read_back(toy_norms_path, tmp_path):
    """By generation each draw is a participant: `--write-norms` writes CSLB's columns, and
    `--norms` reads them back: the same matrix and the same numbers against people's."""
    from support import Scripted, assert_declared

    written = tmp_path / "model-norms.dat"
    concepts = ["knife", "bear", "cat", "dog", "apple"]
    found = tacit.concept_structure(
        [Scripted(SCRIPT)],
        norms=str(toy_norms_path),
        by="generation",
        samples=3,
        temperature=1.0,
        concepts=concepts,
        write_norms=str(written),
        quiet=True,
        **DRAWS,
    )
    assert_declared(found.manifest)
    norms = pd.read_csv(written, sep="\t").set_index(["concept", "feature"])
    assert norms.loc[("knife", "is sharp"), "pf"] == 3
    assert norms.loc[("knife", "made of metal"), "pf"] == 1
    assert norms.loc[("dog", "does bark"), "participant list"] == "p 2 3"
    again = tacit.concept_structure(
        norms=str(written), against=str(toy_norms_path), quiet=True, **DRAWS
    )
    assert again.summary["rsa"].iloc[0] == pytest.approx(found.summary["rsa"].iloc[0])
    ceiling = found.extra["ceiling"]
    assert ceiling["of"].tolist() == ["norms.dat", "scripted"]  # the model's draws split too
    out = found.save(tmp_path / "run")
    assert (out / "norms" / "scripted.dat").read_text() == written.read_text()
    matrix = read_written(out / "matrix" / "scripted")
    assert matrix.loc["knife", "is sharp"] == 1.0 and matrix.loc[
        "knife", "has a handle"
    ] == pytest.approx(1 / 3)


def test_a_model_that_matched_nothing_is_left_out_not_the_run(toy_norms_path, tmp_path):
    """A model whose answers name no feature of the norms (a random-weight control, often) has
    no matrix: it is left out of the analyses with a warning and a summary row of 0 concepts,
    and the other model's numbers stand; with no model left, the run stops in one line."""
    from support import Scripted

    from tacit.core.errors import TacitError, TacitWarning

    mute = Scripted({}, default="Purple, loud, seventeen.")
    mute.name = "mute"
    given = dict(norms=str(toy_norms_path), by="generation", samples=3, temperature=1.0)
    given |= dict(concepts=["knife", "bear", "cat", "dog", "apple"], quiet=True, **DRAWS)
    with pytest.warns(TacitWarning, match="mute: no answer matched a feature of norms.dat"):
        found = tacit.concept_structure([Scripted(SCRIPT), mute], **given)
    summary = found.summary.set_index("model")
    assert summary.loc["mute", "n_concepts"] == 0 and np.isnan(summary.loc["mute", "rsa"])
    assert np.isfinite(summary.loc["scripted", "rsa"])
    assert found.manifest["model_norms"]["mute"] == {
        "left_out": "no answer matched a feature of the norms: no matrix to compare"
    }
    import warnings

    with warnings.catch_warnings():  # no figure is drawn with an empty legend
        warnings.simplefilter("error", UserWarning)
        saved = found.save(tmp_path / "run")
    assert pd.read_csv(saved / "summary.csv")["model"].tolist() == ["scripted", "mute"]
    assert "mute" in found.text
    with pytest.raises(TacitError, match="mute: no answer matched a feature of norms.dat"):
        tacit.concept_structure([mute], **given)


def test_one_concept_is_a_run_not_a_traceback(tiny_bert, toy_norms_path, tmp_path):
    """One concept (`--limit 1`, a first look) has no pairs to correlate: its RSA is NaN, its
    map a point at the origin, and the run is written (the MDS map raised IndexError)."""
    found = tacit.concept_structure(
        [tiny_bert], norms=str(toy_norms_path), concepts=["bear"], quiet=True, **DRAWS
    )
    assert found.summary["n_concepts"].iloc[0] == 1 and np.isnan(found.summary["rsa"].iloc[0])
    assert found.extra["map"][["x", "y"]].abs().to_numpy().max() == 0.0
    found.save(tmp_path / "run")
