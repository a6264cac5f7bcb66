"""Numbers across runs (issue 27): a folder of multi-model runs, an ablation and runs of
different candidate sets, as a user's results/ holds them. The leaderboard's numbers are each
run's summary.csv at its main condition, model by model; runs that are not like for like are
never ranked together; model comparisons equal scipy's permutation test on the per-concept
differences; every table fits 100 columns; a leaderboard written beside the runs does not
break the commands that read them."""

from __future__ import annotations

import io
import os
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitWarning
from tacit.core.labels import short_labels

runner = CliRunner()
MAIN = ("top", "decreasing", "all")


def run(*args, columns: int = 100):
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def results(tmp_path_factory, tiny_bert, tiny_roberta, toy_norms_path):
    """results/ with retrieve/{two,ordering,spans,spans-mean} and elicit/{both,bert}."""
    root = tmp_path_factory.mktemp("across") / "results"
    two = ["-m", tiny_bert, "-m", tiny_roberta, "--norms", toy_norms_path, "-q"]
    run("retrieve", *two, "--max-props", 3, "--out", root / "retrieve" / "two")
    run(
        "retrieve",
        *two,
        "--max-props",
        3,
        "--ablation",
        "ordering",
        "--out",
        root / "retrieve" / "ordering",
    )
    run(
        "retrieve",
        *two,
        "--max-props",
        3,
        "--candidates",
        "concepts",
        "--out",
        root / "retrieve" / "spans",
    )
    run(
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "-q",
        "--max-props",
        2,
        "--candidates",
        "concepts",
        "--normalize",
        "mean",
        "--out",
        root / "retrieve" / "spans-mean",
    )
    run("elicit", *two, "--prefix-ablation", "--out", root / "elicit" / "both")
    run(
        "elicit",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "-q",
        "--out",
        root / "elicit" / "bert",
    )
    return root


def expected_main(run_dir) -> pd.DataFrame:
    """The main condition's rows of a run's summary.csv, read here without tacit."""
    summary = pd.read_csv(run_dir / "summary.csv")
    if "n_props" in summary:  # retrieval: top/decreasing/all at the largest number
        main = summary[(summary[["selection", "order", "category"]] == MAIN).all(axis=1)]
        main = main[main["n_props"] == main["n_props"].max()]
        return main.rename(
            columns={
                "mrr": "value",
                "mrr_ci_low": "ci_low",
                "mrr_ci_high": "ci_high",
                "n_concepts": "n",
            }
        )
    main = summary[(summary["relation"] == "all") & summary["prefix"]]
    return main.rename(
        columns={
            "map_vocab": "value",
            "map_vocab_ci_low": "ci_low",
            "map_vocab_ci_high": "ci_high",
            "n_concepts": "n",
        }
    )


@pytest.mark.slow
def test_the_leaderboard_is_each_summary_at_its_main_condition(results):
    board = tacit.leaderboard(results)
    runs = [p.parent for p in results.rglob("manifest.json")]
    models = [m for r in runs for m in pd.read_csv(r / "summary.csv")["model"].unique()]
    labels = short_labels(models)
    assert len(board) == sum(pd.read_csv(r / "summary.csv")["model"].nunique() for r in runs)
    for run_dir in runs:
        for row in expected_main(run_dir).itertuples():
            mine = board[
                (board["run"] == str(run_dir.relative_to(results)))
                & (board["model"] == labels[row.model])
            ]
            assert len(mine) == 1, (run_dir, row.model)  # a row per model per run
            for column in ("value", "ci_low", "ci_high", "n"):
                assert mine[column].iloc[0] == pytest.approx(getattr(row, column), rel=1e-6)


def test_the_leaderboard_ranks_only_like_for_like(results):
    board = tacit.leaderboard(results)
    for _, group in board.groupby("group"):
        assert group["scored_over"].nunique() == group["condition"].nunique() == 1
        assert group["probe"].nunique() == 1
        ranked = group.sort_values("rank")["value"].to_numpy()
        assert (np.diff(ranked) <= 1e-12).all()  # rank 1 the best
    groups = dict(zip(board["run"], board["group"]))
    # the same vocabulary and condition: one ranking (the ablation at its main condition)
    assert groups["retrieve/two"] == groups["retrieve/ordering"]
    # other candidates, another span scoring, another vocabulary: ranked apart
    assert (
        len({groups["retrieve/two"], groups["retrieve/spans"], groups["retrieve/spans-mean"]}) == 3
    )
    assert groups["retrieve/spans"] not in (groups["retrieve/two"], groups["retrieve/spans-mean"])
    assert groups["retrieve/spans-mean"] != groups["retrieve/two"]
    assert groups["elicit/both"] != groups["elicit/bert"]  # two models' vocabulary, one's


def test_other_conditions_only_when_asked(results):
    plain = tacit.leaderboard(results)
    assert list(plain.columns) == tacit.results.leaderboard.COLUMNS
    asked = tacit.leaderboard(results, conditions=True)
    summary = pd.read_csv(results / "retrieve" / "ordering" / "summary.csv")
    bottom = summary[
        (summary["selection"] == "bottom")
        & (summary["order"] == "decreasing")
        & (summary["n_props"] == 3)
    ].set_index("model")["mrr"]
    labels = short_labels(bottom.index)
    rows = asked[asked["run"] == "retrieve/ordering"].set_index("model")
    for model, value in bottom.items():
        assert rows.loc[labels[model], "bottom/decreasing/all"] == pytest.approx(value)
    assert asked.loc[asked["run"] == "retrieve/two", "bottom/decreasing/all"].isna().all()
    assert "without prefix, all relations" in asked.columns


def _scipy_p(a, b) -> float:
    return stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.sum(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=100000,
        alternative="two-sided",
        vectorized=True,
    ).pvalue


def test_comparisons_equal_an_independent_computation(results):
    two, both = results / "retrieve" / "two", results / "elicit" / "both"
    found = tacit.compare([two, both])
    assert len(found) == 2 and set(found["probe"]) == {"retrieve", "elicit"}
    # retrieval: reciprocal ranks per concept at top/decreasing/all, 3 properties
    prompts = pd.read_csv(two / "prompts.csv")
    main = prompts[
        (prompts[["selection", "order", "category"]] == MAIN).all(axis=1)
        & (prompts["n_props"] == 3)
    ]
    per_model = main.pivot(index="concept", columns="model", values="reciprocal_rank")
    a, b = (per_model[m].to_numpy() for m in main["model"].unique())
    row = found[found["probe"] == "retrieve"].iloc[0]
    assert row["difference"] == pytest.approx(a.mean() - b.mean())
    assert row["p_value"] == pytest.approx(_scipy_p(a, b), abs=1e-12)
    assert row["p_holm"] == row["p_value"]  # one comparison in its table
    assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    summary = pd.read_csv(two / "summary.csv")
    at_3 = summary[summary["n_props"] == 3].set_index("model")["mrr"]
    assert row["value_a"] - row["value_b"] == pytest.approx(at_3.iloc[0] - at_3.iloc[1], rel=1e-5)
    # elicitation: every relation with the prefix, a concept's prompts summed
    prompts = pd.read_csv(both / "prompts.csv")
    sums = prompts[prompts["prefix"]].pivot_table(
        index="concept", columns="model", values="ap_vocab", aggfunc="sum"
    )
    a, b = (sums[m].to_numpy() for m in prompts["model"].unique())
    row = found[found["probe"] == "elicit"].iloc[0]
    assert row["p_value"] == pytest.approx(_scipy_p(a, b), abs=1e-12)
    n = len(prompts[prompts["prefix"]]) / 2
    assert row["difference"] == pytest.approx((a.sum() - b.sum()) / n)


@pytest.mark.slow
@pytest.mark.parametrize("exact_limit", [20, 2])
def test_a_comparison_in_memory_equals_the_saved_one(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch, exact_limit
):
    """The same comparison from the result in memory and from its saved directory, bit for
    bit: the values in memory are read as the saved prompts.csv holds them (8 significant
    digits), and the random sign patterns (a limit of 2 concepts forces them) are seeded by
    the models, not by where the run was read from."""
    from tacit.core import stats

    monkeypatch.setattr(stats, "EXACT_LIMIT", exact_limit)
    result = tacit.retrieve(
        [tiny_bert, tiny_roberta], norms=toy_norms_path, max_props=3, quiet=True
    )
    saved = result.save(tmp_path / "two")
    numbers = ["difference", "ci_low", "ci_high", "p_value", "p_holm", "patterns", "seed"]
    in_memory = tacit.compare([result], n_resamples=999)
    on_disk = tacit.compare([saved], n_resamples=999)
    assert in_memory[numbers].equals(on_disk[numbers])
    assert (in_memory["test"] == ("exact" if exact_limit == 20 else "monte carlo")).all()
    assert in_memory["patterns"].iloc[0] == (
        2 ** in_memory["n_units"].iloc[0] if exact_limit == 20 else 999
    )


def test_the_interval_and_the_p_value_agree(results):
    """The interval is the permutation test's own, so it leaves out 0 exactly when p <= 0.05,
    and the printed table says how p was counted."""
    found = tacit.compare(
        [
            results / "retrieve" / "two",
            results / "retrieve" / "ordering",
            results / "elicit" / "both",
        ]
    )
    excludes = (found["ci_low"] > 0) | (found["ci_high"] < 0)
    assert (excludes == (found["p_value"] <= 0.05)).all()
    shown = run("compare", results / "retrieve" / "two", "--seed", 7).stdout
    n = int(found["n_units"].iloc[0])
    assert f"exact over all {2**n:,} sign patterns" in " ".join(shown.split())
    assert "the differences the test does not reject at 0.05" in " ".join(shown.split())
    # 4 concepts: p >= 2/16, so the interval is all reals, said in words rather than as inf
    said = " ".join(shown.split())
    assert f"no interval: {n} concepts are too few at 95%" in said and "fewer than 6" in said
    assert "(no interval)" in shown and "inf" not in shown
    written = pd.read_csv(
        io.StringIO(run("compare", results / "retrieve" / "two", "--format", "csv").stdout)
    )
    assert written[["test", "patterns", "seed"]].values.tolist() == [["exact", 2**n, 0]]


def test_holm_over_a_tables_comparisons(results):
    """Two like-for-like runs of two models: six comparisons in one table."""
    found = tacit.compare([results / "retrieve" / "two", results / "retrieve" / "ordering"])
    assert len(found) == 6 and found["group"].nunique() == 1
    p = found["p_value"].to_numpy()
    order = np.argsort(p)
    running, expected = 0.0, np.empty(6)
    for step, index in enumerate(order):
        running = max(running, min(1.0, (6 - step) * p[index]))
        expected[index] = running
    assert found["p_holm"].to_numpy() == pytest.approx(expected)
    assert {"tiny-bert0 (two)", "tiny-bert0 (ordering)"} <= set(found["model_a"])


def test_runs_not_like_for_like_are_never_compared(results):
    found = tacit.compare([results / "retrieve" / "two", results / "retrieve" / "spans"])
    assert found["group"].nunique() == 2 and len(found) == 2
    assert (found["run_a"] == found["run_b"]).all()


@pytest.mark.slow
def test_the_advice_names_the_options_that_differ(
    results, tiny_bert, tiny_roberta, toy_norms_path, tmp_path
):
    """Runs that share a vocabulary and differ in --limit, or rank over the vocabulary against
    candidates, were told to use --vocab-model: each difference names its own option, and
    --vocab-model only where two runs' vocabularies differ."""
    limited = tmp_path / "limit"
    two = ["-m", tiny_bert, "-m", tiny_roberta, "--norms", toy_norms_path, "-q"]
    run("retrieve", *two, "--max-props", 3, "--limit", 2, "--out", limited)
    bert = tmp_path / "bert"
    run("retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "-q", "--out", bert)

    def warned(*runs):
        said = run("table", *runs).stderr
        assert said.count("warning: not like for like") == 1
        return " ".join(said.split())

    said = warned(results / "retrieve" / "two", limited)
    assert "--vocab-model" not in said and "differ in limit" in said
    assert "--limit" in said and "first look" in said
    assert "2 concepts drawn at random (seed 0)" in said  # what was drawn, not "the first"
    assert "only the first concepts" not in said
    said = warned(results / "retrieve" / "two", results / "retrieve" / "spans")
    assert "--vocab-model" not in said and "--candidates" in said
    assert "the shared vocabulary" in said and "candidate spans" in said
    assert "differ in span scoring" not in said  # spans have it, the vocabulary has none
    said = warned(results / "retrieve" / "spans", results / "retrieve" / "spans-mean")
    assert "differ in normalisation" in said and "--normalize" in said
    assert "--vocab-model" not in said
    said = warned(results / "retrieve" / "two", bert)
    assert "differ in vocabulary" in said and "--vocab-model" in said
    some = tmp_path / "some"
    run("elicit", *two, "--relation", "has", "--relation", "is", "--out", some)
    said = warned(results / "elicit" / "bert", some)  # `all` of other relations: apart
    assert "differ in relations" in said and "--relation" in said


@pytest.mark.parametrize(
    "command",
    [
        ["table", "retrieve/two", "retrieve/ordering", "retrieve/spans"],
        ["table", "elicit/both", "elicit/bert"],
        ["leaderboard", "."],
        ["leaderboard", ".", "--conditions"],
        ["compare", "retrieve/two", "retrieve/ordering", "elicit/both"],
        ["runs", "."],
    ],
)
def test_every_printed_table_fits_100_columns(results, command):
    args = [results / a if "/" in a or a == "." else a for a in command]
    printed = run(*args).stdout
    assert max(len(line) for line in printed.splitlines()) <= 100, printed
    assert "-0.000" not in printed and "e+" not in printed


def test_formats_for_a_paper(results):
    runs = [results / "retrieve" / "two", results / "retrieve" / "ordering"]
    markdown = run("table", *runs, "--format", "markdown").stdout
    assert "| model |" in markdown and "|---|" in markdown
    latex = run("table", *runs, "--format", "latex").stdout
    assert (
        r"\begin{tabular}" in latex
        and r"\bottomrule" in latex
        and "_" not in latex.replace(r"\_", "")
    )
    table = pd.read_csv(io.StringIO(run("table", *runs, "--format", "csv").stdout))
    assert {"mrr", "mrr_ci_low", "mrr_ci_high", "p_at_1", "hits_at_10"} <= set(table.columns)
    board = pd.read_csv(io.StringIO(run("leaderboard", results, "--format", "csv").stdout))
    assert list(board.columns) == tacit.results.leaderboard.COLUMNS
    assert r"\begin{tabular}" in run("leaderboard", results, "--format", "latex").stdout


@pytest.mark.slow
def test_a_leaderboard_beside_the_runs_breaks_nothing(results, tmp_path):
    """The README's `probe report results/retrieve/*` refused the folder once a leaderboard
    had been written into it."""
    board = results / "retrieve" / "leaderboard.md"
    run("leaderboard", results / "retrieve", "--out", board)
    assert board.read_text().startswith("**1. retrieve")
    runs = sorted((results / "retrieve").iterdir())  # what the shell's glob gives
    assert board in runs
    report = run("report", *runs, "--out", tmp_path / "report.html")
    assert "a file, not a run directory: left out" in report.stderr
    listed = run("table", *runs)
    assert "left out" in listed.stderr and "MRR [95% CI]" in listed.stdout
    plotted = run("plot", results / "retrieve" / "two", board, "--out", tmp_path / "f.png")
    assert (tmp_path / "f.png").is_file() and "left out" in plotted.stderr
    run("compare", *runs)
    assert tacit.leaderboard(results / "retrieve")["run"].str.endswith(".md").sum() == 0
    board.unlink()


@pytest.mark.slow
def test_a_run_in_progress_beside_the_runs_is_left_out_with_a_warning(results, tmp_path):
    """`probe report results/*/*` (the README's pattern) exited 1 on a run in progress (issue
    47): every command that reads several runs leaves it out, as it does plain files, and says
    why; an interrupted run is left out the same way, with how to go on with it."""
    going, stopped = results / "retrieve" / "going", results / "retrieve" / "stopped"
    for directory in (going, stopped):
        (directory / ".partial").mkdir(parents=True)
        (directory / ".partial" / "plan.json").write_text('{"probe": "retrieve"}')
    (going / ".lock").write_text(f"\n{os.getpid()}\n")  # as a run's lock names its owner
    runs = sorted(results.glob("*/*"))
    try:
        said = [
            run("report", *runs, "--out", tmp_path / "report.html").stderr,
            run("table", *sorted((results / "retrieve").iterdir())).stderr,  # one probe
            run("compare", *runs).stderr,
            run(
                "plot", results / "retrieve" / "two", going, stopped, "--out", tmp_path / "f.png"
            ).stderr,
        ]
        for stderr in said:
            assert (
                f"{going}: not a finished run: it holds a run in progress (process "
                f"{os.getpid()} is writing it): left out"
            ) in stderr
            assert f"{stopped}: not a finished run: it holds an interrupted run" in stderr
            assert "--resume --out" in stderr
        assert (tmp_path / "report.html").is_file()
    finally:
        shutil.rmtree(going)
        shutil.rmtree(stopped)


def test_figures_list_every_line_and_say_why_a_panel_is_empty(results):
    from tacit.probes.retrieve.figures import retrieval_figure

    summary = pd.read_csv(results / "retrieve" / "ordering" / "summary.csv")
    figure = retrieval_figure(summary)
    rows = np.array(figure.axes).reshape(-1, 2)
    assert len(rows) == 2  # a row per model, MRR beside the target probability
    for mrr, prob in rows:
        drawn = [line.get_label() for line in prob.lines]
        assert [line.get_label() for line in mrr.lines] == drawn
        assert len(drawn) == 5 and [t.get_text() for t in prob.get_legend().texts] == drawn
    spans = pd.read_csv(results / "retrieve" / "spans-mean" / "summary.csv")
    assert spans["mean_target_prob"].isna().all()
    empty = retrieval_figure(spans).axes[1]
    assert any("no mean target probability to draw" in t.get_text() for t in empty.texts)


def test_compare_says_which_runs_it_leaves_out(results):
    """Issue 47: `probe compare results/elicit/*` left out a one-model run (no other run like
    for like with it) without a word: a warning names it and says why."""
    said = run("compare", results / "elicit" / "both", results / "elicit" / "bert").stderr
    said = " ".join(said.split())
    assert f"warning: {results / 'elicit' / 'bert'}: one model (" in said
    assert "no other run like for like with it to compare it with: left out" in said
    assert str(results / "elicit" / "both") + ":" not in said  # compared: not left out
    with pytest.warns(TacitWarning, match="one model"):
        tacit.compare([results / "elicit" / "both", results / "elicit" / "bert"])


def test_a_pair_computed_apart_is_said(tiny_bert, toy_norms_path):
    """The same weights at two precisions: compare records how each was computed and its note
    says the difference may be the precision's; a pair computed alike gets no such note."""
    from tacit.results.comparisons import comparison_tables

    result = tacit.retrieve(
        [tiny_bert, f"{tiny_bert},dtype=bfloat16"], norms=toy_norms_path, max_props=2, quiet=True
    )
    found = tacit.compare([result])
    assert found[["computed_a", "computed_b"]].values.tolist() == [
        ["in process, float32", "in process, bfloat16"]
    ]
    (table,) = comparison_tables(found)
    assert "computed apart" in table.note and "in process, bfloat16" in table.note
    alike = found.assign(computed_b=found["computed_a"])
    assert "computed apart" not in comparison_tables(alike)[0].note


def test_a_labelled_model_in_process_is_compared(tiny_bert, toy_norms_path):
    """A label= names an in-process model and its control in the manifest as in the tables
    (the manifest named them by their whole text, so compare found no scores of theirs)."""
    result = tacit.retrieve(
        [f"{tiny_bert},label=B"],
        norms=toy_norms_path,
        max_props=2,
        control="random-weights",
        quiet=True,
    )
    records = result.manifest["models"]
    assert [r["name"] for r in records] == ["B", "B (random weights, seed 0)"]
    assert records[0]["text"] == f"{tiny_bert},label=B"
    (pair,) = tacit.compare([result]).itertuples()
    assert (pair.model_a, pair.model_b) == ("B", "B (random weights, seed 0)")
    assert any("B (random weights, seed 0) is the control of B:" in n for n in result.notes)
