"""The probes on real pretrained weights, from the command line, against plain recomputations:
elicitation's average precision and Spearman's rho (sklearn, scipy) and retrieval's ranks from
the plain whole-sentence scores (support.causal_span_reference) of every candidate.

The norms are the tests' toy CSLB table (support.TOY_NORMS), so a run is a handful of prompts.
AP and rho depend on the order of the scores only, and the plain scores order the candidates
as tacit's (test_real_spans checks the scores to 1e-3 nats): they are equal to float rounding
(compared in memory, from the API's result: the CSV files keep 7 significant digits).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import average_precision_score
from support import causal_span_reference
from typer.testing import CliRunner

import tacit
from tacit.cli import app

pytestmark = pytest.mark.real


def probe(*args) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def test_elicit_ap_and_rho_equal_a_plain_recomputation(real_checkpoint, real_plain, toy_norms_path):
    """`tacit.elicit(FOLDER, relations=["has"], candidates="answers")`: each prompt's AP over
    the candidates and over the relation's answers, and Spearman's rho between the answers'
    pf and their scores, as sklearn and scipy compute them from the plain scores."""
    result = tacit.elicit(
        [str(real_checkpoint.directory)],
        norms=toy_norms_path,
        relations=["has"],
        candidates="answers",
        quiet=True,
    )
    prompts = result.prompts
    spans = result.files["candidates-has.txt"].splitlines()
    _, total, _ = causal_span_reference(real_plain, list(prompts["prompt"]), spans)
    rhos = 0
    for row, prompt in zip(total, prompts.itertuples()):
        gold = dict(item.rpartition(":")[::2] for item in prompt.gold.split(" | "))
        relevant = np.isin(spans, list(gold))
        ap = average_precision_score(relevant, row)
        assert prompt.ap_vocab == pytest.approx(ap, abs=1e-12)
        assert prompt.ap_sens == pytest.approx(ap, abs=1e-12)  # every candidate answers `has`
        pf = [float(gold[s]) for s in spans if s in gold]
        if len(set(pf)) > 1:
            rho = spearmanr(pf, row[relevant]).statistic
            assert prompt.spearman == pytest.approx(rho, abs=1e-12)
            rhos += 1
        else:
            assert np.isnan(prompt.spearman)
        best = [spans[i] for i in np.argsort(-row)[:5]]
        assert [item.rpartition(":")[0] for item in prompt.top5.split(" | ")] == best
    assert len(prompts) >= 4 and rhos >= 2  # bear, cat, dog, zebra; rho defined for some


def test_retrieve_ranks_equal_the_plain_ones(real_checkpoint, real_plain, toy_norms_path, tmp_path):
    """`probe retrieve --candidates concepts -m FOLDER`: each concept's rank among every
    concept ("A bear", "Scissors", ...) in its prompt's blank is its plain sentence score's."""
    out = tmp_path / "run"
    model = real_checkpoint.directory
    probe(
        "retrieve",
        "-m",
        model,
        "--norms",
        toy_norms_path,
        "--candidates",
        "concepts",
        "--concepts",
        "bear,knife",
        "--max-props",
        "2",
        "--out",
        out,
        "-q",
    )
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates.txt").read_text(encoding="utf-8").splitlines()
    _, total, _ = causal_span_reference(real_plain, list(prompts["prompt"]), spans)
    target = total[np.arange(len(prompts)), [spans.index(s) for s in prompts["target_span"]]]
    np.testing.assert_array_equal(prompts["rank"], 1 + (total > target[:, None]).sum(axis=1))
    assert len(prompts) == 4 and len(spans) == 8  # bear, knife x 1, 2 properties; 8 concepts
