"""tacit/api.pyi, the probe functions' types, is what their declarations make (a new option
or probe without `python -m tacit.api_stub` fails here), and mypy reads it: a call of
tacit.retrieve with a keyword it does not take is an error, a right call is none."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from pathlib import Path

import pytest

import tacit
from tacit import api_stub
from tacit.core.params import Param
from tacit.probes import registry

PACKAGE = Path(tacit.__file__).parent


def test_the_checked_in_stub_is_the_generated_one(capsys):
    assert api_stub.STUB == PACKAGE / "api.pyi"
    assert api_stub.STUB.read_text() == api_stub.stub_text(), (
        "tacit/api.pyi is out of date: run python -m tacit.api_stub"
    )
    assert api_stub.main(["--check"]) == 0
    assert "current" in capsys.readouterr().out


def test_the_stub_declares_every_probe_function_as_made():
    tree = ast.parse(api_stub.STUB.read_text())
    stubbed = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert list(stubbed) == list(registry.builtin())
    for name, node in stubbed.items():
        made = inspect.signature(getattr(tacit.api, name)).parameters
        written = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
        assert written == list(made), name
        assert ast.get_docstring(node) == inspect.getdoc(getattr(tacit.api, name))


def test_a_new_option_changes_the_stub(monkeypatch):
    probe = registry.get("items")
    extra = Param("extra_knob", 3, "A knob no probe has.", kind="int")

    @dataclass(frozen=True)
    class Wider(probe.options):  # type: ignore[name-defined,misc]
        extra_knob: int = extra.field()

    monkeypatch.setattr(type(probe), "options", Wider)
    text = api_stub.stub_text()
    assert "    extra_knob: int = 3,\n" in text and text != api_stub.STUB.read_text()


# each call and what mypy says of it (None: nothing)
CALLS = {
    'tacit.retrieve(models=["m"], wrong_keyword=1)': 'keyword argument "wrong_keyword"',
    'tacit.retrieve(["m"], max_props="ten")': 'Argument "max_props" to "retrieve"',
    'tacit.elicit(["m"], max_props=3)': 'keyword argument "max_props" for "elicit"',
    'tacit.items("items.jsonl", ["m"], k=3, seed=1, quiet=True)': None,
    'tacit.retrieve(["m"], max_props=3, by="scoring", batch_size="auto")': None,
    # the structure probe is tacit.concept_structure; tacit.structure stays the package
    'tacit.concept_structure(["m"], wrong_keyword=1)': 'keyword argument "wrong_keyword"',
    "tacit.structure.compare_norms": None,
}


def test_mypy_reads_the_probe_functions_signatures(tmp_path):
    mypy = pytest.importorskip("mypy.api", reason="mypy is not installed")
    snippet = tmp_path / "snippet.py"
    snippet.write_text("import tacit\n\n" + "\n".join(CALLS) + "\n")
    # tacit's modules are skipped (the stub's own names read as Any): the signatures are checked
    files = [str(snippet), str(PACKAGE / "__init__.py"), str(PACKAGE / "api.pyi")]
    flags = ["--follow-imports=skip", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"]
    out, err, status = mypy.run([*flags, "--config-file", "", *files])
    assert status == 1, out + err
    said = {line: [] for line in range(3, 3 + len(CALLS))}
    for line in out.splitlines():
        where, _, text = line.partition(": error: ")
        if text:
            assert where.startswith(str(snippet)), line
            said[int(where.rsplit(":", 1)[1])].append(text)
    for line, (call, error) in enumerate(CALLS.items(), start=3):
        if error is None:
            assert said[line] == [], call
        else:
            assert len(said[line]) == 1 and error in said[line][0], (call, said[line])
