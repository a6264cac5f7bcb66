"""Figures and texts that misled a researcher (issue 47): each says what the run did, and
nothing overlaps what it explains."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.probes import registry
from tacit.probes.report import report_of

runner = CliRunner()


def _texts(figure) -> str:
    return " ".join(" ".join(t.get_text() for t in figure.findobj(Text)).split())


def test_an_empty_probability_panel_gives_the_runs_own_reason(tiny_gpt2, toy_norms_path):
    """A causal model's span run, normalised by sum, was told its spans were normalised other
    than by sum: the reason is that it scores the whole sentence."""
    result = tacit.retrieve(
        [tiny_gpt2], norms=toy_norms_path, candidates="concepts", max_props=2, quiet=True
    )
    assert result.summary["mean_target_prob"].isna().all()
    assert result.manifest["normalize"] == "sum"
    report = report_of(registry.get("retrieve"))
    [(_, figure)] = report.figures([("run", result.summary, result.manifest)])
    said = _texts(figure)
    assert "no mean target probability to draw" in said
    assert "a decoder-only model scores the whole sentence" in said
    assert "other than by sum" not in said


@pytest.mark.slow
def test_the_first_look_note_overlaps_nothing(tiny_bert, toy_norms_path):
    """The `--limit` caption was drawn over the elicitation legend; a one-relation run's x axis
    spoke of `all`, which it has not."""
    result = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has"], limit=2, quiet=True)
    assert set(result.summary["relation"]) == {"has"}
    report = report_of(registry.get("elicit"))
    [(_, figure)] = report.figures(
        [("run", result.summary, result.manifest)], caption="a first look (limit): 2 concepts"
    )
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    caption = figure._supxlabel.get_window_extent(renderer)
    [legend] = figure.legends
    [axis] = figure.axes
    for other in (legend.get_window_extent(renderer), axis.get_tightbbox(renderer)):
        assert not caption.overlaps(other)
    assert not legend.get_window_extent(renderer).overlaps(axis.get_window_extent(renderer))
    assert axis.get_xlabel() == "relation"
    several = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has", "is"], quiet=True)
    [(_, figure)] = report.figures([("run", several.summary, several.manifest)])
    assert figure.axes[0].get_xlabel() == "relation (all: every relation's prompts)"


@pytest.mark.slow
def test_span_scoring_is_said_only_where_a_masked_model_ran(
    tiny_gpt2, real_roberta, toy_norms_path, tmp_path
):
    """`span scoring l2r` was printed for runs of decoder-only models, which score the whole
    sentence whatever it says; such a run stays like for like with a masked model's."""
    causal = tacit.retrieve(
        [tiny_gpt2], norms=toy_norms_path, candidates="concepts", max_props=2, quiet=True
    )
    assert "normalised sum" in causal.text and "l2r" not in causal.text
    both = tacit.retrieve(
        [tiny_gpt2, real_roberta],
        norms=toy_norms_path,
        candidates="concepts",
        max_props=2,
        quiet=True,
    )
    assert "scored l2r, normalised sum" in both.text
    causal.save(tmp_path / "runs" / "causal")
    both.save(tmp_path / "runs" / "both")
    board = runner.invoke(app, ["leaderboard", str(tmp_path / "runs")], env={"COLUMNS": "200"})
    assert board.exit_code == 0, board.output
    said = " ".join(board.output.split())
    assert "warning" not in said  # a causal model's run is like for like with a masked one's
    assert "span scoring l2r; normalisation sum" in said
    alone = runner.invoke(app, ["leaderboard", str(tmp_path / "runs" / "causal")])
    assert alone.exit_code == 0, alone.output
    assert "l2r" not in alone.output and "normalisation sum" in alone.output


@pytest.mark.slow
def test_map_sens_is_shown_once_where_it_is_map(tiny_bert, toy_norms_path):
    """Over `--candidates answers`, every answer to the relation is a candidate: mAP and mAP
    sens are one number by definition, shown once with the reason."""
    result = tacit.elicit(
        [tiny_bert],
        norms=toy_norms_path,
        relations=["has"],
        candidates="answers",
        quiet=True,
    )
    pd.testing.assert_series_equal(
        result.summary["map_vocab"], result.summary["map_sens"], check_names=False
    )
    said = " ".join(result.text.split())
    assert "mAP sens" not in said.replace("mAP sens is the same number", "")
    assert "every answer to the relation: mAP sens is the same number" in said
    vocabulary = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has"], quiet=True)
    assert "mAP sens" in vocabulary.text  # over the vocabulary, another number
