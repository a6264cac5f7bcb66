"""Each option is declared once (tacit.core.params.Param, in its probe's package): the Python
API's signatures, the command line's options and sweep files' keys are that declaration, and
the choices the data layer keys by (suites, norms formats) are the core's."""

from __future__ import annotations

import inspect

import pytest
import typer

import tacit.api
from tacit.cli import app
from tacit.core import choices
from tacit.core.errors import TacitError
from tacit.probes import registry

PROBES = registry.names()


@pytest.mark.parametrize("name", PROBES)
def test_the_api_function_takes_the_declared_options(name):
    probe = registry.get(name)
    signature = inspect.signature(getattr(tacit.api, name))
    own = {
        p.name: p.default
        for p in signature.parameters.values()
        if p.name not in ("models", "options", "run_options")
    }
    declared = {param.name: param.default for param in probe.params}
    assert list(own) == [n for n in own if n in declared] and set(own) == set(declared)
    for key, default in own.items():  # a positional option without a default: declared None
        assert default == declared[key] or (
            default is inspect.Parameter.empty and declared[key] is None
        ), key


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
    from tacit.norms.reader import FORMATS
    from tacit.pragmatics import SUITES

    assert tuple(SUITES) == choices.SUITES
    assert tuple(FORMATS) == choices.NORMS_FORMATS
