"""Sweep files read into cells (issue 31): list options are values, one explicit syntax for an
axis, short and stable cell names, training checkpoints as an axis, and which cells `--cell`
names. No model runs here."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

from tacit.core.errors import TacitError
from tacit.sweep import read_sweep
from tacit.sweep.cells import select
from tacit.sweep.spec import directory_step, step_of, toml_reader


def sweep_of(tmp_path, text: str, name: str = "grid.toml"):
    path = tmp_path / name
    path.write_text(text)
    return read_sweep(path)


def test_python_3_10_reads_sweep_files_with_tomli(tmp_path, monkeypatch):
    # before: on Python 3.10 (no tomllib) every sweep file was refused, though tacit declares
    # 3.10; there it is read with tomli (a dependency on 3.10 only, and of `dev`)
    import tomli

    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` fails, as on 3.10
    assert toml_reader() is tomli
    sweep = sweep_of(tmp_path, 'models = ["m1"]\n[retrieve]\nmax_props = [1, 2]\n')
    assert [c.options for c in sweep.cells] == [{"max_props": 1}, {"max_props": 2}]
    with pytest.raises(TacitError, match="not a readable TOML file"):  # tomli's errors too
        sweep_of(tmp_path, "models = [", "bad.toml")
    monkeypatch.setitem(sys.modules, "tomli", None)  # 3.10 without it: what to install
    with pytest.raises(TacitError, match="on Python 3.10, `pip install tomli`"):
        sweep_of(tmp_path, 'models = ["m1"]\n[retrieve]\n')


def test_a_list_option_takes_the_list_as_its_value(tmp_path):
    sweep = sweep_of(tmp_path, 'models = ["m1", "m2"]\n[retrieve]\nconcepts = ["bear", "cat"]\n')
    assert [c.options for c in sweep.cells] == [{"concepts": ["bear", "cat"]}] * 2
    assert [c.name for c in sweep.cells] == [
        "retrieve-m1-concepts=bear+cat",
        "retrieve-m2-concepts=bear+cat",
    ]


def test_an_axis_is_written_one_way_for_any_option(tmp_path):
    sweep = sweep_of(
        tmp_path,
        'models = ["m"]\n[elicit]\n'
        'relations = { axis = [["has"], ["is", "is a"]] }\n'
        "prefix = { axis = [true, false] }\n",
    )
    assert [c.options for c in sweep.cells] == [
        {"prefix": True, "relations": ["has"]},
        {"prefix": True, "relations": ["is", "is a"]},
        {"prefix": False, "relations": ["has"]},
        {"prefix": False, "relations": ["is", "is a"]},
    ]
    # a list where the option takes one value can only be an axis: the short form
    short = sweep_of(tmp_path, 'models = ["m"]\n[retrieve]\nmax_props = [1, 2]\n', "s.toml")
    assert [c.options["max_props"] for c in short.cells] == [1, 2]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('relations = [["has"], ["is"]]', "for an axis of lists write `relations = { axis ="),
        ("prefix = []", "prefix = []: give a value"),
        ("prefix = { axis = [] }", "write an axis as `prefix = { axis = [value, ...] }`"),
        ("prefix = { axis = [true], other = 2 }", "write an axis as"),
        ("no_such = { axis = [1] }", "'no_such' is not an option of elicit"),
        ('concepts = "bear"', "concepts 'bear': expected a list"),
    ],
)
def test_axis_mistakes_are_one_line_naming_the_key(tmp_path, table, message):
    with pytest.raises(TacitError, match=r"grid\.toml: \[elicit\] ") as caught:
        sweep_of(tmp_path, f'models = ["m"]\n[elicit]\n{table}\n')
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("progress = false", "'progress' is not an option of the run options"),
        ("batch_size = 0", "[run] batch_size 0: must be at least 1"),
        ('dtype = "float8"', "[run] dtype 'float8': expected one of"),
    ],
)
def test_run_option_mistakes_are_one_line_naming_the_table(tmp_path, run, message):
    """[run] is checked against the run options' one declaration (tacit.core.options)."""
    with pytest.raises(TacitError, match=r"grid\.toml: \[run\] ") as caught:
        sweep_of(tmp_path, f'models = ["m"]\n[run]\n{run}\n[elicit]\n')
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_cell_names_are_short_and_stable(tmp_path):
    concepts = ["bear", "cat", "dog", "zebra", "knife", "apple"]
    sweep = sweep_of(
        tmp_path,
        f'models = ["org/model"]\nnorms = ["data/cslb/norms.dat"]\n'
        f"[retrieve]\nconcepts = {json.dumps(concepts)}\n"
        'candidates = "lists/my spans.txt"\n',
    )
    digest = hashlib.sha256(json.dumps(concepts).encode()).hexdigest()[:8]
    (cell,) = sweep.cells
    assert cell.name == f"retrieve-org_model-norms-candidates=my_spans-concepts={digest}"
    record = cell.record(0, sweep.path)
    assert record["options"]["concepts"] == concepts and record["cell"] == cell.name
    assert record["settings"] == f"norms-candidates=my_spans-concepts={digest}"


def test_cells_that_would_share_a_directory_are_refused(tmp_path):
    with pytest.raises(TacitError, match="two different cells would share the directory"):
        sweep_of(tmp_path, 'models = ["m"]\nnorms = ["a/norms.dat", "b/norms.dat"]\n[elicit]\n')
    twice = sweep_of(tmp_path, 'models = ["m", "m"]\n[retrieve]\nmax_props = [1, 1]\n', "t.toml")
    assert len(twice.cells) == 1  # the same cell given twice runs once


def test_cells_have_a_stable_index_in_file_order(tmp_path):
    text = (
        'models = ["a", "b"]\nnorms = ["n1.csv", "n2.csv"]\n'
        "[retrieve]\nmax_props = [1, 2]\n[elicit]\n"
    )
    names = [c.name for c in sweep_of(tmp_path, text).cells]
    assert names == [
        "retrieve-a-n1-max_props=1",
        "retrieve-b-n1-max_props=1",
        "retrieve-a-n2-max_props=1",
        "retrieve-b-n2-max_props=1",
        "retrieve-a-n1-max_props=2",
        "retrieve-b-n1-max_props=2",
        "retrieve-a-n2-max_props=2",
        "retrieve-b-n2-max_props=2",
        "elicit-a-n1",
        "elicit-b-n1",
        "elicit-a-n2",
        "elicit-b-n2",
    ]
    assert names == [c.name for c in sweep_of(tmp_path, text, "again.toml").cells]


def test_revisions_are_an_axis_of_training_steps(tmp_path):
    sweep = sweep_of(
        tmp_path,
        'models = ["EleutherAI/pythia-70m", "EleutherAI/pythia-160m"]\n'
        'revisions = ["step1000", "step143000"]\n[elicit]\n',
    )
    assert [(c.model, c.checkpoint.revision, c.checkpoint.step) for c in sweep.cells] == [
        ("EleutherAI/pythia-70m", "step1000", 1000),
        ("EleutherAI/pythia-70m", "step143000", 143000),
        ("EleutherAI/pythia-160m", "step1000", 1000),
        ("EleutherAI/pythia-160m", "step143000", 143000),
    ]
    assert sweep.cells[0].name == "elicit-EleutherAI_pythia-70m@step1000"
    assert sweep.cells[0].checkpoint.series == "EleutherAI/pythia-70m"
    with pytest.raises(TacitError, match="'main' names no training step"):
        sweep_of(tmp_path, 'models = ["m"]\nrevisions = ["main"]\n[elicit]\n', "m.toml")
    with pytest.raises(TacitError, match=r"\[run\]: revision \(the `revisions` axis sets it\)"):
        sweep_of(
            tmp_path,
            'models = ["m"]\nrevisions = ["step1"]\n[run]\nrevision = "x"\n[elicit]\n',
            "r.toml",
        )
    with pytest.raises(TacitError, match=r"\[run\]: checkpoint: set by the sweep"):
        sweep_of(tmp_path, 'models = ["m"]\n[run]\ncheckpoint = "x"\n[elicit]\n', "c.toml")


def test_local_checkpoints_are_read_in_step_order(tmp_path):
    for name in ("checkpoint-900", "checkpoint-80", "checkpoint-1000"):
        (tmp_path / "runs" / name).mkdir(parents=True)
    trained = tmp_path / "runs" / "final"
    trained.mkdir()
    (trained / "trainer_state.json").write_text('{"global_step": 1200}')
    sweep = sweep_of(
        tmp_path, f'[checkpoints]\nmine = ["{tmp_path}/runs/checkpoint-*", "{trained}"]\n[elicit]\n'
    )
    assert [(c.checkpoint.series, c.checkpoint.step) for c in sweep.cells] == [
        ("mine", 80),
        ("mine", 900),
        ("mine", 1000),
        ("mine", 1200),
    ]
    assert [c.name for c in sweep.cells][:2] == [
        "elicit-mine@checkpoint-80",
        "elicit-mine@checkpoint-900",
    ]
    assert sweep.cells[-1].model == str(trained) and sweep.cells[-1].checkpoint.revision is None
    with pytest.raises(TacitError, match="matches nothing"):
        sweep_of(tmp_path, f'[checkpoints]\nx = "{tmp_path}/none-*"\n[elicit]\n', "n.toml")
    (tmp_path / "runs" / "latest").mkdir()
    with pytest.raises(TacitError, match="cannot tell the training step of .*latest"):
        sweep_of(tmp_path, f'[checkpoints]\nx = ["{tmp_path}/runs/latest"]\n[elicit]\n', "l.toml")


def test_the_step_a_name_says():
    assert [
        step_of(n)
        for n in (
            "step1000",
            "checkpoint-500",
            "global_step20",
            "ckpt_7",
            "pythia-70m-step3000",
            "epoch2-iter400",
            "v1.2",
            "main",
        )
    ] == [1000, 500, 20, 7, 3000, 400, 2, None]
    assert directory_step("/nowhere/checkpoint-12") == 12


def test_cells_are_chosen_by_index_range_or_list(tmp_path):
    sweep = sweep_of(tmp_path, 'models = ["a", "b", "c"]\n[retrieve]\nmax_props = [1, 2]\n')
    assert select(sweep, None) == [0, 1, 2, 3, 4, 5]
    assert select(sweep, "4") == [4]
    assert select(sweep, ["0-2", "5"]) == [0, 1, 2, 5]
    assert select(sweep, "3,1,1-2") == [3, 1, 2]
    with pytest.raises(TacitError, match=r"--cell 6: the sweep has 6 cell\(s\), 0-5"):
        select(sweep, "6")
    with pytest.raises(TacitError, match="expected indices such as 3, 0-9 or 0,2,5-7"):
        select(sweep, "one")
