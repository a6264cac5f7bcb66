"""The `probe` command line, end to end on tiny models the tests build."""

import json

import numpy as np
import pandas as pd
import pytest
from support import (
    REAL_NORMS,
    RETRIEVAL_RUN_FILES,
    TOY_NORMS,
    fails_cleanly,
    needs_shared,
    out_of_memory_above,
    reference,
)
from typer.testing import CliRunner

from tacit.cli import app
from tacit.hub.model_files import load_tokenizer
from tacit.probes.retrieve.prompts import PROMPT_COLUMNS
from tacit.probes.retrieve.summary import SUMMARY
from tacit.probes.summary import summary_columns

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.slow
def test_retrieve_writes_the_run_directory(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "retrieve",
        "--model",
        tiny_bert,
        "--model",
        tiny_roberta,
        "--norms",
        toy_norms_path,
        "--max-props",
        3,
        "--out",
        out,
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    assert "MRR [95% CI]" in result.stdout and "5 kept, 3 dropped" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == RETRIEVAL_RUN_FILES
    prompts = pd.read_csv(out / "prompts.csv")
    metrics = ["rank", "reciprocal_rank", "target_prob", "target_prob_shared", "top5"]
    assert list(prompts.columns) == ["model", *PROMPT_COLUMNS, *metrics]
    assert list(prompts.model.unique()) == [tiny_bert, tiny_roberta]
    assert len(prompts) == 2 * 13
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == summary_columns(SUMMARY)
    first = summary[(summary.model == tiny_bert) & (summary.n_props == 1)].iloc[0]
    rows = prompts[(prompts.model == tiny_bert) & (prompts.n_props == 1)]
    assert first.n_prompts == 5
    assert np.isclose(first.mrr, (1 / rows["rank"]).mean())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["concepts_dropped_by_reason"] == {
        "vowel-initial (a/an)": 1,
        "sense label": 1,
        "more than one word": 1,
    }
    assert manifest["vocabulary"]["size"] == len((out / "vocab.txt").read_text().splitlines())
    assert [m["name"] for m in manifest["models"]] == [tiny_bert, tiny_roberta]
    assert manifest["seed"] == 0 and manifest["norms"]["sha256"]
    assert not list(out.glob(".*tmp"))


@pytest.mark.slow
def test_same_command_twice_gives_identical_tables(tiny_bert, toy_norms_path, tmp_path):
    for name in ("a", "b", "c"):
        invoke(
            "retrieve",
            "-m",
            tiny_bert,
            "--norms",
            toy_norms_path,
            "--max-props",
            4,
            "--out",
            tmp_path / name,
            "-q",
            "--batch-size",
            1 if name == "c" else 64,
        )
    for table in ("prompts.csv", "summary.csv", "vocab.txt", "dropped.csv"):
        assert (tmp_path / "a" / table).read_bytes() == (tmp_path / "b" / table).read_bytes()
    # the first run found the single-token words, the second read them from the cache
    found_by = [
        json.loads((tmp_path / n / "manifest.json").read_text())["vocabulary"]["single_token_words"]
        for n in ("a", "b")
    ]
    assert found_by[0][tiny_bert].startswith("computed, cached as ")
    assert found_by[1][tiny_bert].startswith("cache ")
    # another batch size pads differently: same ranks, probabilities equal to float precision
    big, one = (pd.read_csv(tmp_path / name / "prompts.csv") for name in ("a", "c"))
    pd.testing.assert_frame_equal(
        big.drop(columns=["target_prob", "target_prob_shared", "top5"]),
        one.drop(columns=["target_prob", "target_prob_shared", "top5"]),
    )
    np.testing.assert_allclose(big.target_prob, one.target_prob, rtol=1e-5)


@pytest.mark.slow
def test_compile_option_reaches_the_encoder(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    """--compile from the command line compiles each model's encoder and is recorded. Compiled
    and eager scores are compared in tests/models/test_scorer.py (a real torch.compile there);
    here a stand-in records the call, so the plumbing costs no compiling."""
    import torch

    compiled = []

    def recorded(forward, **kwargs):
        compiled.append(kwargs)
        return forward

    common = ["retrieve", "-m", tiny_bert, "--norms", toy_norms_path, "--max-props", 3, "-q"]
    assert invoke(*common, "--out", tmp_path / "eager").exit_code == 0
    assert compiled == []
    monkeypatch.setattr(torch, "compile", recorded)
    result = invoke(*common, "--out", tmp_path / "compiled", "--compile")
    assert result.exit_code == 0, result.output
    assert compiled == [{"dynamic": True}]
    manifest = json.loads((tmp_path / "compiled" / "manifest.json").read_text())
    assert manifest["compile"] is True
    eager, other = (pd.read_csv(tmp_path / n / "prompts.csv") for n in ("eager", "compiled"))
    pd.testing.assert_frame_equal(eager, other)


@pytest.mark.slow
def test_out_of_memory_is_noted_and_recorded(tiny_bert, toy_norms_path, tmp_path, monkeypatch):
    """A batch size too large for the device is halved, said on stderr and kept in the manifest
    (simulated on the CPU: the model raises OutOfMemoryError on batches above 2)."""
    from transformers import BertForMaskedLM

    common = ("retrieve", "--model", tiny_bert, "--norms", toy_norms_path, "--max-props", "3")
    assert invoke(*common, "--out", tmp_path / "plain", "--batch-size", "2", "-q").exit_code == 0
    monkeypatch.setattr(BertForMaskedLM, "forward", out_of_memory_above(BertForMaskedLM.forward, 2))
    result = invoke(*common, "--out", tmp_path / "halved", "--batch-size", "8", "-q")
    assert result.exit_code == 0, result.output
    assert "ran out of device memory at --batch-size 8 and went on 2 at a time" in result.stderr
    manifest = json.loads((tmp_path / "halved" / "manifest.json").read_text())
    assert manifest["batch_size"] == 8
    assert manifest["models"][0]["batch_size_used"] == 2
    plain = pd.read_csv(tmp_path / "plain" / "prompts.csv")
    halved = pd.read_csv(tmp_path / "halved" / "prompts.csv")
    pd.testing.assert_frame_equal(plain, halved, rtol=1e-5)


def test_user_errors_are_one_line_without_traceback(tiny_bert, toy_norms_path, tmp_path):
    cases = [
        (["-m", tiny_bert, "--norms", tmp_path / "missing.dat"], "missing.dat: no such norms file"),
        (["-m", tmp_path / "no-model", "--norms", toy_norms_path], "no-model: no such directory"),
        (
            ["-m", tiny_bert, "--norms", toy_norms_path, "--concepts", "unicorn"],
            "--concepts: not in the norms: unicorn",
        ),
        (
            ["-m", tiny_bert, "--norms", toy_norms_path, "--select", "best"],
            "--select 'best': expected one of top, bottom, random",
        ),
        (["-m", tiny_bert], "no norms file: the CSLB norms are handed out"),  # none anywhere
    ]
    for args, message in cases:  # a failed run leaves nothing behind
        fails_cleanly(["retrieve", *args, "--out", tmp_path / "out"], message, out=tmp_path / "out")


@pytest.mark.slow
def test_concepts_option_and_file(tiny_bert, toy_norms_path, tmp_path):
    listing = tmp_path / "concepts.txt"
    listing.write_text("dog\ncat\n")
    for spec in ("dog,cat", f"@{listing}"):
        out = tmp_path / spec.strip("@").replace("/", "_")
        result = invoke(
            "retrieve",
            "-m",
            tiny_bert,
            "--norms",
            toy_norms_path,
            "--concepts",
            spec,
            "--max-props",
            2,
            "--out",
            out,
            "-q",
        )
        assert result.exit_code == 0, result.output
        assert set(pd.read_csv(out / "prompts.csv").concept) == {"dog", "cat"}


def test_vocab_command(tiny_bert, tiny_roberta, tmp_path):
    out = tmp_path / "vocab.txt"
    result = invoke("vocab", "--model", tiny_bert, "--model", tiny_roberta, "--out", out)
    assert result.exit_code == 0, result.output
    assert "shared vocabulary:" in result.stdout and "in_shared" in result.stdout
    words = out.read_text().splitlines()
    assert "bear" in words and words == sorted(words)


def test_norms_install_and_show(toy_norms_path, tiny_bert):
    result = invoke("norms", "install", toy_norms_path)
    assert result.exit_code == 0, result.output
    # "pf 8 3 -> 9" read as bad arithmetic (issue 47): the line says what the merge did
    assert "  dog / has a tail: pf 8 and 3 in 2 rows, merged to pf 9" in result.stdout
    assert "the number of distinct participants over its rows" in result.stdout
    assert "->" not in result.stdout
    shown = invoke("norms", "show", "--model", tiny_bert)
    assert shown.exit_code == 0, shown.output
    assert f"{len(TOY_NORMS) - 1} concept-feature rows, 8 concepts" in shown.stdout
    assert "5 kept, 3 dropped" in shown.stdout and "sense label: bat_(animal)" in shown.stdout


@pytest.mark.slow
@needs_shared
def test_real_tokenizers_and_norms_end_to_end(real_bert, real_roberta, tmp_path):
    """Every one of the 266 concepts (2 properties each: 532 prompts) over the two real
    vocabularies' shared words; ranks and probabilities match a plain forward pass."""
    out = tmp_path / "run"
    result = invoke(
        "retrieve",
        "--model",
        real_bert,
        "--vocab-model",
        real_roberta,
        "--norms",
        REAL_NORMS,
        "--max-props",
        2,
        "--out",
        out,
        "-q",
    )
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv", keep_default_na=False)
    assert prompts.concept.nunique() == 266 and len(prompts) == 532
    words = (out / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(words) == 18542
    sample = prompts.sample(40, random_state=0)
    tokenizer = load_tokenizer(real_bert)
    ids = [tokenizer.convert_tokens_to_ids(w) for w in words]
    full, shared = reference(real_bert, list(sample.prompt), ids)
    index = {w: i for i, w in enumerate(words)}
    target = np.array([index[t] for t in sample.target])
    want = shared[np.arange(len(sample)), target]
    np.testing.assert_allclose(sample.target_prob, want, rtol=1e-5)
    np.testing.assert_allclose(sample.target_prob_shared, want / shared.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(sample["rank"], 1 + (shared > want[:, None]).sum(1))


@pytest.mark.slow
@needs_shared
def test_real_roberta_scores_use_the_leading_space_form(real_roberta, tmp_path):
    """RoBERTa's target id is Ġbear's, and the scores match the plain computation."""
    out = tmp_path / "run"
    result = invoke(
        "retrieve",
        "--model",
        real_roberta,
        "--norms",
        REAL_NORMS,
        "--max-props",
        2,
        "--concepts",
        "bear,cat,hammer",
        "--out",
        out,
        "-q",
    )
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    words = (out / "vocab.txt").read_text(encoding="utf-8").splitlines()
    tokenizer = load_tokenizer(real_roberta)
    assert tokenizer.convert_tokens_to_ids("\u0120bear") == tokenizer(" bear")["input_ids"][1]
    ids = [i[0] for i in tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"]]
    _, shared = reference(real_roberta, list(prompts.prompt), ids)
    target = np.array([words.index(t) for t in prompts.target])
    want = shared[np.arange(len(prompts)), target]
    np.testing.assert_allclose(prompts.target_prob, want, rtol=1e-5)
    np.testing.assert_array_equal(prompts["rank"], 1 + (shared > want[:, None]).sum(1))


def _run(args, out):
    result = invoke(*args, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    return out


def _is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


@pytest.mark.slow
def test_ordering_ablation_run(tiny_bert, toy_norms_path, tmp_path):
    args = [
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "--ablation",
        "ordering",
        "--concepts",
        "bear,cat,dog,knife",
        "--seed",
        7,
    ]
    first = _run(args, tmp_path / "a")
    second = _run(args, tmp_path / "b")
    assert (first / "prompts.csv").read_bytes() == (second / "prompts.csv").read_bytes()
    assert (first / "summary.csv").read_bytes() == (second / "summary.csv").read_bytes()
    summary = pd.read_csv(first / "summary.csv")
    conditions = summary.groupby(["selection", "order"])["n_props"].apply(sorted).to_dict()
    assert set(conditions) == {
        ("top", "decreasing"),
        ("top", "increasing"),
        ("bottom", "decreasing"),
        ("bottom", "increasing"),
        ("random", "random"),
    }
    assert all(n == list(range(1, 11)) for n in conditions.values())
    baseline = summary[summary.selection == "random"]
    assert (baseline.n_samples == 25).all() and (baseline.n_prompts == 100).all()
    assert baseline.mrr_sample_sd.notna().all()
    assert (summary.mrr_ci_low <= summary.mrr + 1e-12).all()
    assert (summary.mrr <= summary.mrr_ci_high + 1e-12).all()
    other = _run(args[:-1] + [8], tmp_path / "c")
    a, c = (pd.read_csv(d / "prompts.csv") for d in (first, other))
    random_a, random_c = a[a.selection == "random"], c[c.selection == "random"]
    assert not random_a.prompt.reset_index(drop=True).equals(random_c.prompt.reset_index(drop=True))
    pd.testing.assert_frame_equal(a[a.selection != "random"], c[c.selection != "random"])
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["options"]["ablation"] == "ordering"
    # identical texts are scored once per model across conditions
    assert manifest["counts"]["unique_prompt_texts"] < manifest["counts"]["prompts_per_model"]
    figure = tmp_path / "ordering.png"
    assert invoke("plot", first, "--out", figure).exit_code == 0
    assert _is_png(figure)


@pytest.mark.slow
def test_category_ablation_with_two_models(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    run = _run(
        [
            "retrieve",
            "-m",
            tiny_bert,
            "-m",
            tiny_roberta,
            "--norms",
            toy_norms_path,
            "--ablation",
            "category",
        ],
        tmp_path / "run",
    )
    summary = pd.read_csv(run / "summary.csv")
    assert list(summary.model.unique()) == [tiny_bert, tiny_roberta]
    assert set(summary.category) == {"all", "visual", "functional", "encyclopaedic"}
    functional = summary[(summary.category == "functional") & (summary.model == tiny_bert)]
    # fewer concepts have many functional properties: n_prompts shrinks along the curve
    assert functional.n_prompts.iloc[0] > functional.n_prompts.iloc[-1]
    for suffix in (".png", ".svg", ".pdf"):
        figure = tmp_path / f"category{suffix}"
        result = invoke("plot", run, "--out", figure)
        assert result.exit_code == 0, result.output
        assert figure.stat().st_size > 1000
    assert _is_png(tmp_path / "category.png")


@pytest.mark.slow
def test_plot_of_model_runs_and_bad_input(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    both = ["--vocab-model", tiny_bert, "--vocab-model", tiny_roberta]  # one vocabulary
    runs = [
        _run(["retrieve", "-m", model, "--norms", toy_norms_path, *both], tmp_path / name)
        for name, model in (("bert", tiny_bert), ("roberta", tiny_roberta))
    ]
    figure = tmp_path / "models.png"
    assert invoke("plot", *runs, "--out", figure).exit_code == 0
    assert _is_png(figure)
    alone = _run(["retrieve", "-m", tiny_bert, "--norms", toy_norms_path], tmp_path / "alone")
    refused = runner.invoke(app, ["plot", str(alone), str(runs[1]), "--out", str(figure)])
    assert refused.exit_code == 1 and "differ in vocabulary" in refused.stderr
    assert "--vocab-model" in refused.stderr and "--mixed" in refused.stderr
    bad = runner.invoke(app, ["plot", str(tmp_path), "--out", str(tmp_path / "x.png")])
    assert bad.exit_code == 1 and "no summary.csv" in bad.stderr
    bad = runner.invoke(app, ["plot", str(runs[0]), "--out", str(tmp_path / "x.jpg")])
    assert bad.exit_code == 1 and "extension" in bad.stderr


@pytest.mark.slow
def test_plot_writes_beside_the_runs_and_never_over_a_file(
    tiny_bert, tiny_roberta, toy_norms_path, tmp_path, monkeypatch
):
    """`probe plot RUN` writes into the run directory, a file per probe and figure kind
    (plotting an elicitation run wrote ./retrieval.png over a retrieval figure); a file that
    is there is refused in one line naming it, unless --overwrite; several runs: the folder
    that holds them; tacit.plot the same."""
    import tacit

    monkeypatch.chdir(tmp_path)
    both = ["-m", tiny_bert, "-m", tiny_roberta, "--norms", toy_norms_path]
    retrieval = _run(["retrieve", *both, "--max-props", 2], tmp_path / "runs" / "retrieve")
    elicitation = _run(["elicit", *both], tmp_path / "runs" / "elicit")
    assert invoke("plot", retrieval).exit_code == 0
    assert invoke("plot", elicitation).exit_code == 0
    drawn = retrieval / "retrieve-models.png"
    assert _is_png(drawn) and _is_png(elicitation / "elicit-figure.png")
    assert not list(tmp_path.glob("*.png"))  # nothing in the working directory
    before = drawn.read_bytes()
    again = runner.invoke(app, ["plot", str(retrieval)])
    assert again.exit_code == 1 and drawn.read_bytes() == before
    assert again.stderr.strip().splitlines() == [
        f"error: {drawn}: already exists: give --overwrite to replace it, or --out another file"
    ]
    assert invoke("plot", retrieval, "--overwrite").exit_code == 0
    assert invoke("plot", retrieval, "--kind", "category").exit_code == 0
    assert _is_png(retrieval / "retrieve-category.png")
    named = tmp_path / "mine.svg"
    named.write_text("a figure of mine")
    refused = runner.invoke(app, ["plot", str(retrieval), "--out", str(named)])
    assert refused.exit_code == 1 and "mine.svg: already exists" in refused.stderr
    assert named.read_text() == "a figure of mine"
    other = _run(["retrieve", *both, "--max-props", 2, "--seed", 3], tmp_path / "runs" / "other")
    assert invoke("plot", retrieval, other).exit_code == 0
    assert _is_png(tmp_path / "runs" / "retrieve-models.png")
    assert invoke("plot", retrieval, "--out", tmp_path / "figures").exit_code == 1  # no such
    (tmp_path / "figures").mkdir()
    assert invoke("plot", retrieval, "--out", tmp_path / "figures").exit_code == 0
    assert _is_png(tmp_path / "figures" / "retrieve-models.png")
    assert tacit.plot([elicitation], overwrite=True) == elicitation / "elicit-figure.png"


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--select", "bottom"], "sets --select: drop it"),
        # the default value, given explicitly, is refused too (issue 22, item 5: it was accepted)
        (["--select", "top"], "sets --select: drop it"),
        (["--order", "decreasing", "--category", "all"], "sets --order and --category: drop them"),
    ],
)
def test_ablation_refuses_any_option_it_overrides(
    tiny_bert, toy_norms_path, tmp_path, given, named
):
    out = tmp_path / "o"
    base = ["retrieve", "-m", tiny_bert, "--norms", str(toy_norms_path), "--out", str(out)]
    result = runner.invoke(app, [*base, "--ablation", "ordering", *given])
    assert result.exit_code == 1 and named in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_the_help_says_a_default_once():
    """`--vocab-words` showed `[default: all]` twice."""
    shown = runner.invoke(app, ["retrieve", "--help"], env={"COLUMNS": "200"}).stdout
    start = shown.index("--vocab-words")
    end = shown.index("--", start + len("--vocab-words"))
    assert shown[start:end].count("[default: all]") == 1


@pytest.mark.parametrize(
    ("command", "given", "meant"),
    [
        ("retrieve", ["--candidates", "concept"], "concepts"),
        ("retrieve", ["--templates", "paraphrase"], "paraphrases"),
        ("elicit", ["--candidates", "answer"], "answers"),
        ("elicit", ["--templates", "papers"], "paper"),
    ],
)
def test_a_name_nearly_right_is_suggested(
    command, given, meant, tiny_bert, toy_norms_path, tmp_path, monkeypatch
):
    """`--candidates concept` said "no such file": it names the choice meant."""
    monkeypatch.chdir(tmp_path)
    said = runner.invoke(app, [command, "-m", tiny_bert, "--norms", str(toy_norms_path), *given])
    assert said.exit_code == 1
    (line,) = said.stderr.strip().splitlines()
    assert line.endswith(f"no such file; did you mean {meant}?"), line
