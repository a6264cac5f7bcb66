"""`probe compare` on structure runs: two models' RSA against the same people, paired over the
concepts both have by a bootstrap; runs against other norms never paired."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import cosine_similarity
from support import probe_in_one_thread, random_rows, write_norms

import tacit
from tacit.structure import read_matrix, rsa_difference

DRAWS = ["--resamples=20", "--permutations=20", "--splits=3"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Norm sets a and c each against b (like for like), and a against c (other norms)."""
    where = tmp_path_factory.mktemp("structure-runs")
    sets = {n: write_norms(where / f"{n}.dat", random_rows(s)) for n, s in zip("abc", (1, 2, 3))}
    made = {}
    for name, (norms, against) in {"ab": "ab", "cb": "cb", "ac": "ac"}.items():
        out = where / name
        done = probe_in_one_thread(
            ["structure", "--norms", sets[norms], "--against", sets[against], *DRAWS, "--out", out]
        )
        assert done.exit_code == 0, done.output
        made[name] = out
    return made


def upper(square: np.ndarray) -> np.ndarray:
    return square[np.triu_indices(len(square), k=1)]


@pytest.mark.slow
def test_two_runs_against_the_same_people_give_one_row(runs):
    found = tacit.compare([runs["ab"], runs["cb"]], n_resamples=300, seed=5)
    assert len(found) == 1
    row = found.iloc[0]
    assert (row["model_a"], row["model_b"]) == ("a.dat", "c.dat")
    assert (row["test"], row["units"], row["n_units"], row["units_left_out"]) == (
        "paired bootstrap",
        "concepts",
        9,
        0,
    )
    # the concepts match: each value is its summary's rsa, and Spearman of the triangles
    for side, run in (("value_a", "ab"), ("value_b", "cb")):
        summary = pd.read_csv(runs[run] / "summary.csv")
        assert row[side] == pytest.approx(summary["rsa"].iloc[0], abs=1e-6)
        matrix = read_matrix(runs[run] / "matrix" / f"{run[0]}.dat")
        reference = read_matrix(runs[run] / "reference").select(concepts=list(matrix.concepts))
        rho = spearmanr(
            upper(cosine_similarity(matrix.values)), upper(cosine_similarity(reference.values))
        ).statistic
        assert row[side] == pytest.approx(rho, abs=1e-9)
    assert row["difference"] == pytest.approx(row["value_a"] - row["value_b"], abs=1e-12)
    # the numbers are tacit.structure.rsa_difference's on the saved matrices, seeded by --seed
    again = rsa_difference(
        read_matrix(runs["ab"] / "matrix" / "a.dat"),
        read_matrix(runs["cb"] / "matrix" / "c.dat"),
        read_matrix(runs["ab"] / "reference"),
        similarity="cosine",
        seed=5,
        n_resamples=300,
    )
    assert (row["ci_low"], row["ci_high"], row["p_value"]) == (
        again.ci_low,
        again.ci_high,
        again.p_value,
    )
    assert row["p_holm"] == row["p_value"] and row["patterns"] == again.n_resamples


@pytest.mark.slow
def test_a_model_against_itself_and_other_norms_from_the_command_line(runs):
    done = probe_in_one_thread(["compare", runs["ab"], runs["ab"], "--format", "csv"])
    assert done.exit_code == 0, done.output
    table = pd.read_csv(io.StringIO(done.output))
    assert len(table) == 1
    assert table[["difference", "ci_low", "ci_high"]].iloc[0].tolist() == [0, 0, 0]
    assert table["p_value"].iloc[0] == 1
    # against other norms (a against c) never stands beside a against b
    done = probe_in_one_thread(["compare", runs["ab"], runs["ac"]])
    assert done.exit_code != 0
    assert "no two models scored the same items to compare" in done.output
    assert "Traceback" not in done.output
    done = probe_in_one_thread(["compare", runs["ab"], runs["cb"], runs["ac"]])
    assert done.exit_code == 0, done.output
    assert "paired bootstrap" in done.output and "a.dat  c.dat" in done.output
    assert done.output.count("structure: RSA") == 1


@pytest.mark.slow
def test_two_models_of_one_run_in_memory_and_on_disk(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path
):
    """Two models by scoring in one run: one row, each value its summary's rsa; a result in
    memory gives the numbers its directory does."""
    concepts = ["bear", "cat", "dog", "knife", "apple"]
    result = tacit.concept_structure(
        [tiny_bert, tiny_roberta],
        norms=str(toy_norms_path),
        concepts=concepts,
        quiet=True,
        resamples=20,
        permutations=20,
        splits=3,
    )
    saved = result.save(tmp_path / "run")
    in_memory = tacit.compare([result], n_resamples=200)
    on_disk = tacit.compare([saved], n_resamples=200)
    assert len(on_disk) == 1
    numbers = ["value_a", "value_b", "difference", "ci_low", "ci_high", "p_value", "n_units"]
    assert in_memory[numbers].equals(on_disk[numbers])
    rsa = dict(zip(result.summary["model"], result.summary["rsa"]))
    row = on_disk.iloc[0]
    assert row["value_a"] == pytest.approx(rsa[tiny_bert], abs=1e-9)
    assert row["value_b"] == pytest.approx(rsa[tiny_roberta], abs=1e-9)
    assert row["n_units"] == result.summary["n_concepts"].iloc[0]


def test_what_makes_structure_runs_stand_together():
    """The reference norms (--against before --norms), the similarity and the concepts; a
    yes/no run reports another metric and has no matrix to pair."""
    from tacit.probes import registry
    from tacit.results.like_for_like import scored_over

    def run(**given):
        manifest = {
            "probe": "structure",
            "norms": {"path": "x/a.dat", "sha256": "aaaaaaaa11"},
            "options": {"similarity": "cosine"},
            **given,
        }
        return scored_over(registry.of_run(manifest, "run"), manifest)

    plain = run()
    assert plain["norms"] == "a.dat (aaaaaaaa)" and plain["similarity"] == "cosine"
    assert run(against={"path": "b.dat", "sha256": "bbbbbbbb"})["norms"] == "b.dat (bbbbbbbb)"
    assert run(options={"similarity": "correlation"}) != plain
    assert run(options={"similarity": "cosine", "concepts": ["cat"]}) != plain
    yes_no = run(options={"similarity": "cosine", "verification": "yes-no"})
    assert yes_no["metric"] == "AUC (other categories)" and "metric" not in plain
    probe = registry.of_run({"probe": "structure", "options": {"verification": "yes-no"}}, "r")
    assert probe.primary.column == "auc_other_categories"  # paired by its AUC, not an RSA
