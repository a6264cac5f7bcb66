"""Reading a run back (`tacit.load`): the result a run produced, table for table with the same
dtypes, and what it printed; a directory that holds no finished run is one line saying what it
holds (issue 41)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from support_nli import save_nli_masked_lm, write_nope

import tacit
from tacit.core.errors import TacitError
from tacit.results.record import RESULT_FILE

ITEMS = (
    '{"group": "has fur", "text": "[Y] has fur.", "candidates": ["A bear", "A knife"], '
    '"answer": "A bear"}\n'
    '{"text": "[Y] has stripes.", "candidates": ["A zebra", "A cat"], "answer": "A zebra"}\n'
)


@pytest.fixture(scope="module")
def nli_mlm(tmp_path_factory) -> str:
    return save_nli_masked_lm(tmp_path_factory.mktemp("load-nli-mlm"))


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory, tiny_bert, toy_norms_path, nli_mlm, mlm, pragmeval_data):
    """Every built-in probe, run once on the tiny models (Prince: on demand, it needs the real
    roberta-base tokenizer)."""
    root = tmp_path_factory.mktemp("load-runs")
    items = root / "items.jsonl"
    items.write_text(ITEMS)
    norms = str(toy_norms_path)
    made = {
        "retrieve": lambda: tacit.retrieve([tiny_bert], norms=norms, max_props=3, quiet=True),
        "retrieve-spans": lambda: tacit.retrieve(
            [tiny_bert], norms=norms, max_props=2, candidates="concepts", quiet=True
        ),
        "elicit": lambda: tacit.elicit([tiny_bert], norms=norms, prefix="both", quiet=True),
        "prince": lambda: tacit.prince([request.getfixturevalue("real_roberta")], quiet=True),
        "nli": lambda: tacit.nli("nope", write_nope(root / "nope"), [nli_mlm], quiet=True),
        "pragmeval": lambda: tacit.pragmeval(pragmeval_data, [mlm], tasks=["Sarcasm"], quiet=True),
        "items": lambda: tacit.items(str(items), [tiny_bert], quiet=True),
    }
    done: dict[str, tacit.ProbeResult] = {}

    def run(name: str) -> tacit.ProbeResult:
        if name not in done:
            done[name] = made[name]()
        return done[name]

    return run


def _same_result(back: tacit.ProbeResult, result: tacit.ProbeResult) -> None:
    pd.testing.assert_frame_equal(back.prompts, result.prompts)  # dtypes too
    pd.testing.assert_frame_equal(back.summary, result.summary)
    assert back.extra.keys() == result.extra.keys()
    for name, table in result.extra.items():
        pd.testing.assert_frame_equal(back.extra[name], table, obj=name)
    assert back.manifest == json.loads(json.dumps(result.manifest, default=str))
    assert back.rows_file == result.rows_file
    assert back.text == result.text and back.notes == result.notes
    assert str(back) == str(result)  # print(result) says the same
    assert repr(back) == repr(result)
    assert back.files == result.files
    assert back.figures.keys() == result.figures.keys()
    if result.vocab is None:
        assert back.vocab is None
    else:
        assert back.vocab is not None
        assert back.vocab.words == result.vocab.words
        assert back.vocab.sha256 == result.vocab.sha256 == result.manifest["vocabulary"]["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "probe", ["retrieve", "retrieve-spans", "elicit", "prince", "nli", "pragmeval", "items"]
)
def test_a_saved_run_loads_as_the_result_it_was(runs, probe, tmp_path):
    result = runs(probe)
    out = result.save(tmp_path / "run")
    back = tacit.load(out)
    assert type(back) is tacit.ProbeResult
    _same_result(back, result)
    # and saved again, it writes the very same files
    again = back.save(tmp_path / "again")
    for path in sorted(out.iterdir()):
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name
    assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in out.iterdir())


def test_text_that_reads_as_a_missing_value_or_a_number_stays_text(runs, tmp_path):
    """Why a run records its columns' types: a concept named `nan` or `None`, an answer `1`,
    an empty text cell and a missing one all read back as they were."""
    result = runs("retrieve")
    prompts = result.prompts.copy()
    prompts["concept"] = prompts["concept"].astype(object)
    prompts.loc[0, "concept"], prompts.loc[1, "concept"] = "nan", "None"
    prompts["note"] = pd.Series(["1", None] * (len(prompts) // 2 + 1), dtype=object)[
        : len(prompts)
    ].values
    prompts["flag"] = True
    summary = result.summary.assign(mrr=result.summary["mrr"].round())  # floats of whole numbers
    changed = tacit.ProbeResult(prompts, summary, result.vocab, result.manifest, result.extra)
    back = tacit.load(changed.save(tmp_path / "run"))
    pd.testing.assert_frame_equal(back.prompts, prompts)
    pd.testing.assert_frame_equal(back.summary, summary)
    assert back.summary["mrr"].dtype == "float64"
    assert pd.read_csv(tmp_path / "run" / "summary.csv")["mrr"].dtype == "int64"  # plain pandas


def test_a_run_written_before_result_json_still_loads_and_says_so(runs, tmp_path):
    result = runs("elicit")
    out = result.save(tmp_path / "old")
    (out / RESULT_FILE).unlink()
    back = tacit.load(out)
    pd.testing.assert_frame_equal(back.prompts, pd.read_csv(out / "prompts.csv"))
    assert back.extra.keys() == result.extra.keys()
    assert back.text == "" and len(back.notes) == 1
    assert back.notes[0].startswith(f"note: {out} was written before runs kept result.json")


def test_what_is_not_a_finished_run_is_one_line_naming_it(runs, tmp_path):
    with pytest.raises(TacitError, match=r"nowhere: no such run directory$"):
        tacit.load(tmp_path / "nowhere")
    (tmp_path / "file.csv").write_text("a\n")
    with pytest.raises(TacitError, match=r"file.csv: a file, not a run directory$"):
        tacit.load(tmp_path / "file.csv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TacitError, match=r"empty: not a finished run: the directory is empty$"):
        tacit.load(tmp_path / "empty")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(TacitError, match=r"mine: not a finished run: it holds 1 other file"):
        tacit.load(tmp_path / "mine")
    stopped = tmp_path / "stopped"
    (stopped / ".partial").mkdir(parents=True)
    (stopped / ".partial" / "plan.json").write_text("{}")
    with pytest.raises(TacitError, match=r"stopped: not a finished run: it holds an interrupted"):
        tacit.load(stopped)
    out = runs("retrieve").save(tmp_path / "broken")
    (out / "summary.csv").unlink()
    with pytest.raises(TacitError, match=r"summary.csv: missing; the run directory is incomplete"):
        tacit.load(out)
    shutil.copy(out / "prompts.csv", out / "summary.csv")
    with pytest.raises(TacitError, match=r"summary.csv: no column 'n_prompts', which the run"):
        tacit.load(out)
