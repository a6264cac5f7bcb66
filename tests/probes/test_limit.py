"""`--limit N` (RunOptions.limit): N concepts, items or configurations, as each probe declares
(Probe.limit), drawn at random with the run's seed or, `--limit-by first`, the first N; said on
the summary's first line, recorded, what it left out counted, never comparable with a full run;
refused by a probe with nothing to limit."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support import fails_cleanly
from support_nli import save_nli_masked_lm, write_nope
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.probes import registry
from tacit.results.like_for_like import differences


@pytest.mark.slow
def test_retrieval_takes_the_first_eligible_concepts(tiny_bert, toy_norms_path):
    full = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=2, quiet=True)
    first = tacit.retrieve(
        [tiny_bert], norms=toy_norms_path, max_props=2, limit=2, limit_by="first", quiet=True
    )
    kept = list(dict.fromkeys(full.prompts["concept"]))[:2]
    assert list(dict.fromkeys(first.prompts["concept"])) == kept
    pd.testing.assert_frame_equal(  # the same prompts, scored the same
        first.prompts.reset_index(drop=True),
        full.prompts[full.prompts["concept"].isin(kept)].reset_index(drop=True),
    )
    assert first.text.splitlines()[0].startswith("limited to the first 2 concepts (limit 2)")
    assert first.manifest["limit"] == {"n": 2, "of": "concepts", "by": "first"}
    beyond = first.dropped[first.dropped["reason"].str.startswith("left out by the limit")]
    assert len(beyond) == full.manifest["counts"]["concepts"] - 2
    assert first.manifest["counts"]["concepts"] == 2


@pytest.mark.slow
def test_by_default_the_limit_draws_a_seeded_sample(tiny_bert, toy_norms_path):
    """A first look at CSLB's first concepts is a look at "an ..." concepts only: by default
    `--limit` draws its N with the run's seed (the same N for the same seed), in norms order."""
    full = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, quiet=True)
    every = list(dict.fromkeys(full.prompts["concept"]))

    def drawn(seed: int) -> list[str]:
        run = tacit.retrieve(
            [tiny_bert], norms=toy_norms_path, max_props=1, limit=3, seed=seed, quiet=True
        )
        assert run.manifest["limit"] == {"n": 3, "of": "concepts", "by": "random", "seed": seed}
        assert run.text.splitlines()[0].startswith(
            f"limited to 3 concepts drawn at random (seed {seed}) (limit 3)"
        )
        return list(dict.fromkeys(run.prompts["concept"]))

    samples = {seed: drawn(seed) for seed in range(4)}
    assert samples[0] == drawn(0)
    for sample in samples.values():
        assert len(sample) == 3 and sample == [c for c in every if c in sample]
    assert len({tuple(sample) for sample in samples.values()}) > 1  # seeds draw different ones


@pytest.mark.slow
def test_elicitation_takes_the_first_concepts_alphabetically(tiny_bert, toy_norms_path):
    first = tacit.elicit(
        [tiny_bert],
        norms=toy_norms_path,
        relations=["has", "is"],
        limit=2,
        limit_by="first",
        quiet=True,
    )
    every = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has", "is"], quiet=True)
    assert sorted(set(first.prompts["concept"])) == sorted(set(every.prompts["concept"]))[:2]


def test_nli_takes_the_first_items(tmp_path):
    nope, model = write_nope(tmp_path / "nope"), save_nli_masked_lm(tmp_path / "mlm")
    first = tacit.nli("nope", nope, [model], limit=3, limit_by="first", quiet=True)
    assert first.prompts["item_id"].nunique() == 3
    assert first.manifest["limit"] == {"n": 3, "of": "items", "by": "first"}


def test_pragmeval_takes_the_first_configurations(pragmeval_data, mlm):
    result = tacit.pragmeval(
        pragmeval_data,
        [mlm],
        tasks=["Sarcasm", "SwitchBoard"],
        max_train=8,
        limit=1,
        limit_by="first",
        quiet=True,
    )
    assert result.prompts["config"].nunique() == 1
    skipped = result.manifest["skipped_configs"]
    assert any(reason.startswith("left out by the limit") for reason in skipped.values())


def test_a_probe_with_nothing_to_limit_refuses_it(tiny_bert, tmp_path):
    assert registry.get("prince").limit is None
    with pytest.raises(TacitError, match="prince: limit is not available"):
        tacit.prince([tiny_bert], limit=2)
    fails_cleanly(["prince", "-m", tiny_bert, "--limit", "2"], "No such option: --limit")


@pytest.mark.slow
def test_limited_and_full_runs_are_not_comparable(tiny_bert, toy_norms_path, tmp_path):
    for name, limit in (("full", []), ("first", ["--limit", "2", "--limit-by", "first"])):
        done = CliRunner().invoke(
            app,
            [
                "retrieve",
                "-m",
                tiny_bert,
                "--norms",
                str(toy_norms_path),
                "--max-props",
                "2",
                "-q",
                "--out",
                str(tmp_path / name),
                *limit,
            ],
        )
        assert done.exit_code == 0, done.output
    assert "limited to the first 2 concepts (--limit 2)" in done.stdout
    notes = differences([tmp_path / "full", tmp_path / "first"])
    assert any("differ in limit" in note and "the first 2 concepts" in note for note in notes)
    manifest = json.loads((tmp_path / "first" / "manifest.json").read_text())
    assert manifest["limit"] == {"n": 2, "of": "concepts", "by": "first"}


@pytest.mark.slow
def test_figures_and_reports_mark_a_first_look(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    """A `--limit` run's figure and report said nothing of the limit: both say it is a first
    look at the first concepts."""
    from matplotlib.text import Text

    from tacit.results import plots

    run = tmp_path / "first"
    done = CliRunner().invoke(
        app,
        ["elicit", "-m", tiny_bert, "--norms", str(toy_norms_path), "-q", "--limit", "2"]
        + ["--out", str(run)],  # drawn at random, with the seed
    )
    assert done.exit_code == 0, done.output
    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, out, **_: drawn.append(figure) or out)
    tacit.plot([run])
    said = " ".join(" ".join(t.get_text() for t in drawn[0].findobj(Text)).split())
    assert "a first look (limit): 2 concepts drawn at random (seed 0) only" in said  # the API's
    report = tmp_path / "report.html"
    assert CliRunner().invoke(app, ["report", str(run), "--out", str(report)]).exit_code == 0
    text = " ".join(report.read_text().split())
    assert "a first look (--limit): 2 concepts drawn at random (seed 0) only" in text
    assert text.count("first look") >= 2  # the run's section, and under its figure
