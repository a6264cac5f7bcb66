"""Golden runs: small retrieve, elicit and nli runs whose files must stay the same.

The files under tests/golden/ were written by these very commands; a refactor must reproduce
them (text exactly, numbers within float tolerance). A deliberate change of output (a fixed
template, a renamed column) rewrites them with `TACIT_UPDATE_GOLDEN=1 python -m pytest
tests/test_golden.py` and says so in CHANGELOG.md; the diff of tests/golden/ then shows what
changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support import assert_declared, save_tiny_gpt2, toy_gpt2_tokenizer
from support_nli import save_nli_classifier, save_nli_masked_lm, write_nope
from typer.testing import CliRunner

from tacit.cli import app

GOLDEN = Path(__file__).parent / "golden"
FIGURE = "a PNG figure: its presence is pinned, not its pixels (they follow matplotlib)\n"
UPDATE = os.environ.get("TACIT_UPDATE_GOLDEN") == "1"
# manifest keys whose values do not depend on the machine, the time or temporary paths
STABLE_MANIFEST_KEYS = (
    "probe",
    "counts",
    "options",
    "dtype",
    "batch_size",
    "seed",
    "suite",
    "candidates",
    "span_scoring",
    "normalize",
    "span_work",
)
MODEL_KEYS = (
    "name",
    "model",
    "mode",
    "batch_size_used",
    "start_token",
    "vocab_suffixes",
    "vocab_suffixes_naive",
    "tie_rows",
    "tie_scores",
    "tie_noisy",
    "tie_invariant_texts",
    "span_rows",
    "span_rows_naive",
    "span_tokens",
    "span_tokens_naive",
    "prompts_cut",
)


@pytest.fixture(scope="module")
def nli_models(tmp_path_factory):
    return (
        save_nli_masked_lm(tmp_path_factory.mktemp("golden-mlm")),
        save_nli_classifier(
            tmp_path_factory.mktemp("golden-clf"),
            {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
        ),
    )


def _labels(text: str, models: dict[str, str]) -> str:
    """Temporary model paths replaced by stable labels."""
    for path, label in models.items():
        text = text.replace(path, label)
    return text


def _stable_manifest(path: Path, models: dict[str, str]) -> dict:
    manifest = json.loads(_labels(path.read_text(), models))
    stable = {key: manifest[key] for key in STABLE_MANIFEST_KEYS if key in manifest}
    if "vocabulary" in manifest:
        stable["vocabulary"] = {k: manifest["vocabulary"][k] for k in ("size", "sha256")}
    stable["models"] = [{k: m.get(k) for k in MODEL_KEYS if k in m} for m in manifest["models"]]
    return stable


def _absolute_tolerance(want: np.ndarray) -> float:
    """A column outside [0, 1] holds log-probabilities or sums of them (scores, surprisal),
    computed in float32 from terms of up to tens of nats: its small values (a pmi, a mean of
    near scores) are differences of such terms, which another CPU's kernels move by a float32
    ulp of the terms (4.8e-7 on 0.004 on an AMD EPYC, against the CPU that wrote the files).
    So 1e-6 there; a column within [0, 1] (probabilities, AP, rates) keeps 1e-7."""
    finite = want[np.isfinite(want)]
    in_unit = finite.size == 0 or (finite.min() >= 0 and finite.max() <= 1)
    return 1e-7 if in_unit else 1e-6


def _assert_same_table(got: pd.DataFrame, want: pd.DataFrame, name: str) -> None:
    assert list(got.columns) == list(want.columns), name
    assert len(got) == len(want), name
    for column in want.columns:
        if pd.api.types.is_float_dtype(want[column]) or pd.api.types.is_float_dtype(got[column]):
            expected = want[column].to_numpy(float)
            np.testing.assert_allclose(
                got[column].to_numpy(float),
                expected,
                rtol=1e-5,
                atol=_absolute_tolerance(expected),
                equal_nan=True,
                err_msg=f"{name}: {column}",
            )
        else:
            got_cells, want_cells = _texts(got[column]), _texts(want[column])
            for got_cell, want_cell in zip(got_cells, want_cells, strict=True):
                _assert_same_cell(got_cell, want_cell, f"{name}: {column}")


def _texts(column: pd.Series) -> list[str]:
    return ["" if pd.isna(value) else str(value) for value in column]


SCORED_WORD = re.compile(r"^(.*):(-?[0-9.]+(?:e-?[0-9]+)?)$")


def _assert_same_cell(got: str, want: str, where: str) -> None:
    """Text cells equal; in `word:probability` lists (top5: words apart by spaces, spans of
    several words by ` | `) the words equal and the printed values within their last printed
    digit (a float error can round either way), or within 1e-6 of each other: a score near 0 (a
    pmi) is a difference of terms of several nats, which another CPU's kernels move by their
    float32 ulp (5e-7 on 0.00013 on an Intel Xeon, against the CPU that wrote the files)."""
    if got == want:
        return
    got_parts, want_parts = _scored_parts(got), _scored_parts(want)
    assert len(got_parts) == len(want_parts), f"{where}: {got!r} != {want!r}"
    for got_part, want_part in zip(got_parts, want_parts, strict=True):
        got_match, want_match = SCORED_WORD.match(got_part), SCORED_WORD.match(want_part)
        assert got_match and want_match, f"{where}: {got!r} != {want!r}"
        assert got_match[1] == want_match[1], f"{where}: {got!r} != {want!r}"
        got_p, want_p = float(got_match[2]), float(want_match[2])
        assert abs(got_p - want_p) <= max(1.5e-3 * abs(want_p), 1e-6), (
            f"{where}: {got!r} != {want!r}"
        )


def _scored_parts(cell: str) -> list[str]:
    """The `word:probability` parts of a top-5 cell."""
    return cell.split(" | ") if " | " in cell else cell.split()


def _check_run(name: str, out: Path, models: dict[str, str]) -> None:
    """Compare (or, updating, write) every file of the run directory `out`; its manifest's
    keys declared (assert_declared)."""
    golden = GOLDEN / name
    files = {p.name: p for p in out.iterdir() if not p.name.startswith(".")}
    assert_declared(json.loads(files["manifest.json"].read_text()))
    stable = {
        n: _labels(p.read_text(), models)
        for n, p in files.items()
        if n not in ("manifest.json", "result.json") and not n.endswith(".png")
    }
    for figure in (n for n in files if n.endswith(".png")):  # drawn, not compared pixel by pixel
        assert files[figure].read_bytes().startswith(b"\x89PNG"), figure
        stable[figure] = FIGURE
    # result.json: which files and columns it records (not their pandas dtypes, which follow the
    # pandas version, nor the printed text)
    record = json.loads(files["result.json"].read_text())
    record["tables"] = {name: list(t["columns"]) for name, t in record["tables"].items()}
    kept = {k: v for k, v in record.items() if k not in ("text", "notes")}
    stable["result.json"] = json.dumps(kept, indent=2) + "\n"
    stable["manifest.json"] = (
        json.dumps(_stable_manifest(files["manifest.json"], models), indent=2, sort_keys=True)
        + "\n"
    )
    if UPDATE:
        shutil.rmtree(golden, ignore_errors=True)
        golden.mkdir(parents=True)
        for file_name, text in stable.items():
            (golden / file_name).write_text(text)
        return
    assert sorted(stable) == sorted(p.name for p in golden.iterdir()), name
    for file_name, text in stable.items():
        want = (golden / file_name).read_text()
        if file_name.endswith(".csv"):
            got_table = pd.read_csv(pd.io.common.StringIO(text))
            want_table = pd.read_csv(golden / file_name)
            _assert_same_table(got_table, want_table, f"{name}/{file_name}")
        elif file_name in ("manifest.json", "result.json"):
            assert json.loads(text) == json.loads(want), f"{name}/{file_name}"
        else:
            assert text == want, f"{name}/{file_name}"


def _run(*args) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_golden_retrieve(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    models = {tiny_bert: "TINY_BERT", tiny_roberta: "TINY_ROBERTA"}
    out = tmp_path / "retrieve"
    _run(
        "retrieve",
        "-m",
        tiny_bert,
        "-m",
        tiny_roberta,
        "--norms",
        toy_norms_path,
        "--max-props",
        4,
        "--out",
        out,
        "-q",
    )
    _check_run("retrieve", out, models)
    out = tmp_path / "ordering"
    _run(
        "retrieve",
        "-m",
        tiny_bert,
        "--norms",
        toy_norms_path,
        "--ablation",
        "ordering",
        "--max-props",
        3,
        "--seed",
        5,
        "--out",
        out,
        "-q",
    )
    _check_run("retrieve-ordering", out, models)


@pytest.mark.slow
def test_golden_elicit(tiny_bert, tiny_roberta, toy_norms_path, tmp_path):
    models = {tiny_bert: "TINY_BERT", tiny_roberta: "TINY_ROBERTA"}
    out = tmp_path / "elicit"
    _run(
        "elicit",
        "-m",
        tiny_bert,
        "-m",
        tiny_roberta,
        "--norms",
        toy_norms_path,
        "--prefix-ablation",
        "--out",
        out,
        "-q",
    )
    _check_run("elicit", out, models)


@pytest.mark.slow
def test_golden_elicit_causal(toy_norms_path, tmp_path):
    """A causal model's elicitation (a tiny GPT-2 on the toy BPE, which needs no ../shared):
    each word scored with the "." after the blank, from the start token its rule gives."""
    model = str(save_tiny_gpt2(tmp_path / "gpt2", toy_gpt2_tokenizer(tmp_path / "gpt2")))
    out = tmp_path / "elicit"
    _run("elicit", "-m", model, "--norms", toy_norms_path, "--prefix-ablation", "--out", out, "-q")
    _check_run("elicit-causal", out, {model: "TINY_GPT2"})


@pytest.mark.slow
def test_golden_nli(nli_models, tmp_path):
    mlm, classifier = nli_models
    data = write_nope(tmp_path / "nope")
    out = tmp_path / "nli"
    _run("nli", "--suite", "nope", "--data", data, "-m", mlm, "-m", classifier, "--out", out, "-q")
    _check_run("nli", out, {mlm: "NLI_MLM", classifier: "NLI_CLASSIFIER"})


@pytest.fixture(scope="module")
def toy_gpt2(tmp_path_factory) -> str:
    """A tiny GPT-2 on the toy BPE (no ../shared needed)."""
    directory = tmp_path_factory.mktemp("golden-gpt2")
    return str(save_tiny_gpt2(directory, toy_gpt2_tokenizer(directory)))


@pytest.mark.slow
def test_golden_candidate_spans(tiny_bert, toy_gpt2, toy_norms_path, tmp_path):
    """Both probes over candidate spans, a masked and a causal model side by side: retrieval of
    every concept (`sum`), and with the paraphrases' ensemble normalised by `pmi`; elicitation
    over every answer (`mean`, with the tokens' scores), and with the paraphrases by `pmi`."""
    models = {tiny_bert: "TINY_BERT", toy_gpt2: "TINY_GPT2"}
    both = ["-m", tiny_bert, "-m", toy_gpt2, "--norms", toy_norms_path, "-q"]
    runs = {
        "retrieve-spans": ["retrieve", "--candidates", "concepts", "--max-props", 3],
        "retrieve-spans-paraphrases": [
            "retrieve",
            "--candidates",
            "concepts",
            "--normalize",
            "pmi",
            "--templates",
            "paraphrases",
            "--max-props",
            2,
        ],
        "elicit-spans": ["elicit", "--candidates", "answers", "--normalize", "mean"],
        "elicit-spans-paraphrases": [
            "elicit",
            "--candidates",
            "answers",
            "--normalize",
            "pmi",
            "--templates",
            "paraphrases",
            "--relation",
            "has",
            "--token-scores",
        ],
    }
    for name, args in runs.items():
        out = tmp_path / name
        _run(*args, *both, "--out", out)
        _check_run(name, out, models)


@pytest.mark.slow
def test_golden_paraphrases_over_the_vocabulary(tiny_bert, toy_norms_path, tmp_path):
    """The ensemble of templates over the shared vocabulary, in both probes."""
    models = {tiny_bert: "TINY_BERT"}
    common = ["-m", tiny_bert, "--norms", toy_norms_path, "--templates", "paraphrases", "-q"]
    runs = {
        "retrieve-paraphrases": ["retrieve", "--max-props", 3],
        "elicit-paraphrases": ["elicit"],
    }
    for name, args in runs.items():
        out = tmp_path / name
        _run(*args, *common, "--out", out)
        _check_run(name, out, models)


GOLDEN_ITEMS = [
    {"id": "fur", "text": "[Y] has fur.", "candidates": ["A bear", "A knife"], "answer": "A bear"},
    {
        "group": "has",
        "text": "A zebra has [Y].",
        "candidates": ["stripes", "a handle", "fur", "claws"],
        "answer": ["stripes", "fur"],
    },
    {
        "group": "has",
        "text": "A knife has [Y].",
        "candidates": ["stripes", "a handle", "fur", "claws"],
        "answer": "a handle",
    },
]


@pytest.mark.slow
def test_golden_items_and_surprisal(tiny_bert, toy_gpt2, tmp_path):
    models = {tiny_bert: "TINY_BERT", toy_gpt2: "TINY_GPT2"}
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(item) + "\n" for item in GOLDEN_ITEMS))
    out = tmp_path / "items"
    _run("items", items, "-m", tiny_bert, "-m", toy_gpt2, "--normalize", "pmi", "--out", out, "-q")
    _check_run("items", out, models)
    texts = tmp_path / "texts.txt"
    texts.write_text("A bear has fur.\nEveryone knows that a cat has a tail.\n")
    out = tmp_path / "surprisal"
    _run("surprisal", texts, "-m", tiny_bert, "-m", toy_gpt2, "--by", "word", "--out", out, "-q")
    _check_run("surprisal", out, models)


@pytest.mark.slow
def test_golden_prince(real_roberta, tmp_path):
    """Prince's two directions (the person prompt's blank comes first) on the real roberta-base
    tokenizer, which has Prince's words, with the paraphrases' ensemble."""
    out = tmp_path / "prince"
    _run("prince", "-m", real_roberta, "--templates", "paraphrases", "--out", out, "-q")
    _check_run("prince", out, {real_roberta: "REAL_ROBERTA"})


@pytest.mark.slow
def test_golden_pragmeval(pragmeval_data, mlm, tmp_path):
    """PragmEval's cloze path: a distribution over the label words at the blank."""
    out = tmp_path / "pragmeval"
    _run("pragmeval", "--data", pragmeval_data, "-m", mlm, "--task", "Sarcasm", "--out", out, "-q")
    _check_run("pragmeval", out, {mlm: "PRAGMEVAL_MLM", str(pragmeval_data): "PRAGMEVAL_DATA"})
