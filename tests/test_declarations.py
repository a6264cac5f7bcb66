"""Each option is declared once (a field of its probe's Options dataclass, a
tacit.core.params.Param): the Python API's signatures and docstrings, the command line's options
and sweep files' keys are made from that declaration, the probe gets its options back typed,
and the choices the data layer keys by (suites, norms formats) are the core's."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
import typer

import tacit.api
from tacit.cli import app
from tacit.core import choices
from tacit.core.errors import TacitError
from tacit.core.options import RUN_OPTION_GROUPS, RunOptions
from tacit.probes import registry

PROBES = registry.names()


@pytest.mark.parametrize("name", PROBES)
def test_the_api_function_is_made_from_the_declaration(name):
    probe = registry.get(name)
    function = getattr(tacit.api, name)
    parameters = inspect.signature(function).parameters
    run = {param.name for param in RunOptions.params()}
    own = [p for p in parameters.values() if p.name not in ("models", "options", *run)]
    assert [p.name for p in own] == [
        *(p.name for p in probe.params if p.leading),
        *(p.name for p in probe.params if not p.leading),
    ]
    types = probe.options.annotations()
    for parameter, param in zip(
        own, [p for p in probe.params if p.leading] + [p for p in probe.params if not p.leading]
    ):
        assert parameter.annotation == types[param.name]
        if param.leading:  # needed: before the models, positionally
            assert parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            assert parameter.default is inspect.Parameter.empty
        else:
            assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
            assert parameter.default == param.default
        assert param.help.split(".")[0] in " ".join(function.__doc__.split())
    assert function.__name__ == name and function.__module__ == "tacit.api"


@pytest.mark.parametrize("name", PROBES)
def test_run_options_come_from_their_one_declaration(name):
    """Each shared run option is declared once (tacit.core.options): the API function takes
    it as a keyword with the declared type and default, its docstring says the declared help,
    the command takes its flag with the declared help, and RunOptions' field defaults to the
    same value; a probe that does without an option's group offers it nowhere."""
    probe = registry.get(name)
    function = getattr(tacit.api, name)
    parameters = inspect.signature(function).parameters
    command = typer.main.get_command(app).commands[name]
    helps = {opt: param.help or "" for param in command.params for opt in param.opts}
    types, fields = RunOptions.annotations(), dataclasses.fields(RunOptions)
    defaults = {
        f.name: f.default_factory() if callable(f.default_factory) else f.default for f in fields
    }
    for param in RunOptions.params():
        taken = param.group is None or param.group in probe.takes()
        assert (param.name in parameters) == taken, param.name
        assert (param.flag in helps) == (taken and param.cli), param.flag
        assert defaults[param.name] == param.default
        if not taken:
            continue
        assert parameters[param.name].default == param.default
        assert parameters[param.name].annotation == types[param.name]
        assert param.help.split(".")[0] in " ".join(function.__doc__.split())
        if param.cli:
            assert " ".join(param.help.split()) in " ".join(helps[param.flag].split())
    assert set(RUN_OPTION_GROUPS) >= {p.group for p in RunOptions.params() if p.group}


def test_the_api_and_the_command_line_name_the_same_run_options():
    """`--quiet` is `quiet=True`: every run option has one name, as keyword and as flag."""
    for param in RunOptions.params():
        assert param.flag.lstrip("-").replace("-", "_") in (param.name, param.name[:-1])


@pytest.mark.parametrize("name", PROBES)
def test_the_probe_gets_its_options_typed(name):
    """What the API and the command line give is checked into the probe's Options dataclass,
    frozen, with the declared default where an option is not given."""
    probe = registry.get(name)
    values = probe.validate({})
    assert isinstance(values, probe.options)
    assert {p.name: getattr(values, p.name) for p in probe.params} == {
        p.name: p.default for p in probe.params
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        values.templates = "x"  # type: ignore[misc]


@pytest.mark.parametrize("name", PROBES)
def test_the_command_takes_the_declared_options(name):
    probe = registry.get(name)
    command = typer.main.get_command(app).commands[name]
    flags = {opt for param in command.params for opt in param.opts}
    for param in probe.params:
        if not param.cli:
            continue
        wanted = [s.flag for s in param.switches] if param.switches else [param.flag]
        if param.positional:  # `probe items ITEMS`: an argument, named as declared
            wanted = [param.name]
        assert set(wanted) <= flags, (name, param.name)


@pytest.mark.parametrize("name", PROBES)
def test_a_wrong_value_is_named_as_the_caller_wrote_it(name):
    probe = registry.get(name)
    for param in probe.params:
        if param.choices and param.kind != "bool":
            bad = ["nonsense"] if param.kind == "list" else "nonsense"
            with pytest.raises(TacitError, match=rf"^{param.name} "):
                probe.validate({param.name: bad})
            with pytest.raises(TacitError, match=rf"^{param.flag} "):
                probe.validate({param.name: bad}, context="cli")
    with pytest.raises(
        TacitError, match=rf"grid.toml: \[{name}\] 'no_such_option' is not an option"
    ):
        probe.validate({"no_such_option": 1}, context="sweep", where=f"grid.toml: [{name}] ")


def test_the_data_keys_its_choices_by_the_cores():
    from tacit.norms.formats import NORM_FORMATS
    from tacit.pragmatics import SUITES

    assert tuple(SUITES) == choices.SUITES
    assert NORM_FORMATS.builtin() == choices.NORMS_FORMATS
