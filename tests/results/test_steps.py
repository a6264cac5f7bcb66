"""Training checkpoints as a sweep axis (issue 31): a tiny model saved at three "steps" (other
weights each), swept; the step recorded per cell; `probe leaderboard` and `probe plot --kind
steps` draw the primary metric against the step, a line per model."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support import save_tiny_bert, save_tiny_roberta, tiny_bert_tokenizer, tiny_roberta_tokenizer
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.results.steps import by_step, steps_figure

runner = CliRunner()
STEPS = (10, 100, 2000)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """runs/<family>/checkpoint-<step>: the weights of another seed at each step."""
    root = tmp_path_factory.mktemp("runs")
    for seed, step in enumerate(STEPS):
        for family, save, tokenizer in (
            ("bert", save_tiny_bert, tiny_bert_tokenizer),
            ("roberta", save_tiny_roberta, tiny_roberta_tokenizer),
        ):
            directory = root / family / f"checkpoint-{step}"
            directory.mkdir(parents=True)
            save(directory, tokenizer(directory), seed=seed)
    return root


@pytest.mark.slow
def test_a_checkpoints_sweep_draws_the_metric_by_step(checkpoints, toy_norms_path, tmp_path):
    grid, out = tmp_path / "ckpt.toml", tmp_path / "ckpt"
    grid.write_text(
        f'norms = "{toy_norms_path}"\n[checkpoints]\n'
        f'tiny-bert = "{checkpoints}/bert/checkpoint-*"\n'
        f'tiny-roberta = "{checkpoints}/roberta/checkpoint-*"\n'
        "[run]\nbatch_size = 8\nquiet = true\n[retrieve]\nmax_props = 2\n"
    )
    listed = runner.invoke(app, ["sweep", str(grid), "--out", str(out), "--list"])
    rows = [line.split() for line in listed.stdout.splitlines()[1:7]]
    assert [(r[3], r[-3]) for r in rows] == [
        (f"tiny-bert@checkpoint-{s}", str(s)) for s in STEPS
    ] + [(f"tiny-roberta@checkpoint-{s}", str(s)) for s in STEPS]
    ran = runner.invoke(app, ["sweep", str(grid), "--out", str(out)])
    assert ran.exit_code == 0 and "6 run now" in ran.stdout, ran.output

    expected = []  # independently: each run's MRR at 2 properties, from its own files
    for run in sorted(out.glob("retrieve-*")):
        record = json.loads((run / "manifest.json").read_text())["sweep"]
        summary = pd.read_csv(run / "summary.csv")
        mrr = summary.loc[summary["n_props"] == 2, "mrr"].item()
        expected.append((record["series"], record["step"], mrr))
    assert sorted((m, s) for m, s, _ in expected) == sorted(
        (m, s) for m in ("tiny-bert", "tiny-roberta") for s in STEPS
    )

    board = runner.invoke(app, ["leaderboard", str(out)])
    assert board.exit_code == 0, board.output
    assert "by training step:" in board.stdout and not (out / "by_step.csv").exists()
    board = runner.invoke(app, ["leaderboard", str(out), "--out", str(out / "leaderboard.csv")])
    assert board.exit_code == 0, board.output
    assert "by training step: written to" in board.stderr
    table = pd.read_csv(out / "by_step.csv")
    assert list(table.columns) == ["model", "step", "cell", "value"]
    (cell,) = set(table["cell"])
    assert cell.startswith("retrieve MRR") and cell.endswith(" [norms-max_props=2]")
    got = sorted(zip(table["model"], table["step"], table["value"]))
    assert [(m, s) for m, s, _ in got] == sorted((m, s) for m, s, _ in expected)
    assert [v for *_, v in got] == pytest.approx([v for *_, v in sorted(expected)], abs=1e-9)
    assert (out / "by_step.png").read_bytes().startswith(b"\x89PNG")
    leaderboard = pd.read_csv(out / "leaderboard.csv")
    assert "tiny-bert@checkpoint-100" in set(leaderboard["model"])

    figure = steps_figure(by_step(out))
    (axis,) = [a for a in figure.axes if a.get_visible()]
    lines = {line.get_label(): list(line.get_xdata()) for line in axis.get_lines()}
    assert lines == {"tiny-bert": list(STEPS), "tiny-roberta": list(STEPS)}
    assert axis.get_xscale() == "symlog"  # 10 to 2000: a log step axis

    plotted = runner.invoke(
        app, ["plot", str(out), "--kind", "steps", "-o", str(tmp_path / "steps.png")]
    )
    assert plotted.exit_code == 0, plotted.output
    assert (tmp_path / "steps.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_hub_revisions_are_recorded_per_cell(tiny_bert, toy_norms_path, tmp_path):
    """A revisions axis on a local model (which loads as it is): the plumbing of the revision
    and its step into each cell's run and manifest."""
    grid, out = tmp_path / "rev.toml", tmp_path / "rev"
    grid.write_text(
        f'models = ["{tiny_bert}"]\nrevisions = ["step1", "step8"]\n'
        f'norms = "{toy_norms_path}"\n[run]\nquiet = true\n[elicit]\n'
    )
    ran = runner.invoke(app, ["sweep", str(grid), "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    for step in (1, 8):
        manifest = json.loads(
            (out / f"elicit-tiny-bert0@step{step}-norms" / "manifest.json").read_text()
        )
        assert manifest["models"][0]["revision"] == f"step{step}"
        assert manifest["sweep"]["step"] == step and manifest["sweep"]["series"] == "tiny-bert0"
    assert sorted(by_step(out)["step"]) == [1, 8]


def test_a_folder_without_checkpoints_has_no_steps(tmp_path):
    with pytest.raises(TacitError, match="no run of a training checkpoint in it"):
        by_step(tmp_path)
