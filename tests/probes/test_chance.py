"""Chance beside every metric of the retrieval and elicitation summaries: what a uniformly
random ranking of the same candidates scores (tacit.core.metrics, exact), per prompt from its
own number of candidates and gold answers, in summary.csv and the printed tables."""

from __future__ import annotations

import numpy as np
import pytest

import tacit
from tacit.core.metrics import chance_average_precision


def _harmonic(n: int) -> float:
    return float(sum(1.0 / r for r in range(1, n + 1)))


def test_retrieval_summary_has_chance_over_the_shared_vocabulary(tiny_bert, toy_norms_path):
    run = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=2, quiet=True)
    n = run.manifest["vocabulary"]["size"]
    summary = run.summary
    assert summary["mrr_chance"].to_numpy() == pytest.approx(_harmonic(n) / n)
    assert summary["p_at_1_chance"].to_numpy() == pytest.approx(1 / n)
    assert summary["hits_at_10_chance"].to_numpy() == pytest.approx(min(10, n) / n)
    columns = list(summary.columns)
    assert columns.index("mrr_chance") == columns.index("mrr_ci_high") + 1  # beside its metric
    (row,) = [line.split() for line in str(run).splitlines() if line.startswith("chance ")]
    # the printed table's chance row: each chance level in its metric's column
    assert row == [
        "chance",
        "–",
        "–",
        f"{_harmonic(n) / n:.4f}",
        f"{1 / n:.4f}",
        f"{10 / n:.3f}",
        "–",
    ]


@pytest.mark.slow
def test_retrieval_summary_has_chance_among_candidate_spans(tiny_gpt2, toy_norms_path):
    run = tacit.retrieve(
        [tiny_gpt2], norms=toy_norms_path, max_props=1, candidates="concepts", quiet=True
    )
    (n,) = set(run.prompts["n_candidates"])
    assert run.summary["mrr_chance"].to_numpy() == pytest.approx(_harmonic(n) / n)
    assert run.summary["p_at_1_chance"].to_numpy() == pytest.approx(1 / n)


@pytest.mark.slow
def test_elicitation_summary_has_chance_given_each_prompts_gold_answers(tiny_bert, toy_norms_path):
    run = tacit.elicit([tiny_bert], norms=toy_norms_path, quiet=True)
    n = run.manifest["vocabulary"]["size"]
    sensible = run.manifest["counts"]["sensible_vocabulary_by_relation"]
    prompts, summary = run.prompts, run.summary.set_index(["relation", "prefix"])
    for relation, rows in prompts.groupby("relation"):
        want = np.mean([chance_average_precision(g, n) for g in rows["n_gold"]])
        want_sens = np.mean(
            [chance_average_precision(g, sensible[relation]) for g in rows["n_gold"]]
        )
        row = summary.loc[(relation, True)]
        assert row["map_vocab_chance"] == pytest.approx(want)
        assert row["map_sens_chance"] == pytest.approx(want_sens)
    assert (run.summary["spearman_chance"] == 0).all()
    pooled = summary.loc[("all", True)]
    assert pooled["map_vocab_chance"] == pytest.approx(
        np.mean([chance_average_precision(g, n) for g in prompts["n_gold"]])
    )
    chance_rows = [line.split() for line in str(run).splitlines() if line.startswith("chance ")]
    has = summary.loc[("has", True)]
    assert [
        "chance",
        "has",
        "–",
        f"{has['map_vocab_chance']:.4f}",
        f"{has['map_sens_chance']:.3f}",
        "0",
    ] in chance_rows


@pytest.mark.slow
def test_elicitation_among_answers_has_the_same_chance_over_both(tiny_gpt2, toy_norms_path):
    run = tacit.elicit(
        [tiny_gpt2], norms=toy_norms_path, relations=["has"], candidates="answers", quiet=True
    )
    (n,) = set(run.prompts["n_candidates"])
    want = np.mean([chance_average_precision(g, n) for g in run.prompts["n_gold"]])
    (row,) = run.summary.itertuples()
    assert row.map_vocab_chance == pytest.approx(want)
    assert row.map_sens_chance == pytest.approx(want)  # every candidate answers the relation


@pytest.mark.slow
def test_the_leaderboard_has_chance_beside_the_value(tiny_bert, toy_norms_path, tmp_path):
    from typer.testing import CliRunner

    from tacit.cli import app

    run = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=2, quiet=True)
    run.save(tmp_path / "runs" / "one")
    board = tacit.leaderboard(tmp_path / "runs")
    n = run.manifest["vocabulary"]["size"]
    assert board["chance"].tolist() == pytest.approx([_harmonic(n) / n])
    printed = CliRunner().invoke(
        app, ["leaderboard", str(tmp_path / "runs")], env={"COLUMNS": "200"}
    )
    assert printed.exit_code == 0, printed.output
    header = next(line for line in printed.stdout.splitlines() if line.startswith("rank"))
    assert header.split() == ["rank", "model", "run", "MRR", "[95%", "CI]", "chance", "n"]
