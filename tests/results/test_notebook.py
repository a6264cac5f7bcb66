"""Results in a notebook: a one-line repr, HTML with the summary, notes and main figure, errors
from the API that name the API's arguments, and a clean `dir(tacit)`."""

from __future__ import annotations

import pytest

import tacit
from tacit.core.errors import TacitError


@pytest.fixture(scope="module")
def result(tiny_bert, toy_norms_path):
    return tacit.retrieve([tiny_bert], norms=str(toy_norms_path), max_props=3, quiet=True)


def test_repr_is_one_short_line(result, tiny_bert):
    text = repr(result)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("ProbeResult(retrieve; 1 model(s); ")
    mrr = result.summary.loc[result.summary["n_props"] == 3, "mrr"].iloc[0]
    assert (
        f"MRR: tiny-bert0 {mrr:.4f}" in text or f"MRR: {tiny_bert.split('/')[-1]} {mrr:.4f}" in text
    )
    assert "DataFrame" not in text


def test_html_shows_the_summary_notes_and_figure(result):
    page = result._repr_html_()
    assert "<pre>" in page and "MRR [95% CI]" in page  # the printed summary
    assert '<img src="data:image/png;base64,' in page  # the probe's main figure
    assert result.notes  # (all() of nothing is true)
    assert all(f"<li>{note}" in page.replace("&#x27;", "'") for note in result.notes[:1])


def test_api_errors_name_the_api_arguments(result, tmp_path):
    result.save(tmp_path / "run")
    with pytest.raises(TacitError, match=r"^out .*run: already holds a run: overwrite=True to"):
        result.save(tmp_path / "run")
    with pytest.raises(TacitError, match=r"^batch_size 0: must be at least 1"):
        tacit.RunOptions(batch_size=0)
    with pytest.raises(TacitError, match=r"^no models given"):
        tacit.retrieve([])


def test_dir_lists_the_public_names_only():
    names = dir(tacit)
    assert {"retrieve", "ProbeResult", "ModelSpec", "ProbeCallback", "__version__"} <= set(names)
    assert not {"Any", "TYPE_CHECKING", "annotations", "importlib"} & set(names)
