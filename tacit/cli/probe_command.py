"""A probe's command, built from its declaration (tacit.probes.base.Probe): `--model`, the
probe's own options (tacit.core.params: flags, help, choices as declared), then the shared run
options it takes. The command runs the probe through the API's `run_probe` into its run
directory (tacit.cli.saving), so the command line and the API check and run the same way."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from tacit.cli.common import MODEL_HELP, RUN_DIRECTORY, given_value, option_of, user_errors
from tacit.core.errors import TacitError
from tacit.core.options import RunOptions
from tacit.core.params import Param
from tacit.probes import registry


def probe_command(name: str) -> Callable[..., None]:
    """The typer command of the registered probe `name`."""
    probe = registry.get(name)
    declared = [param for param in probe.params if param.cli]
    takes = probe.takes()
    shared = [p for p in RunOptions.params() if p.cli and (p.group is None or p.group in takes)]
    parameters = [_models(probe.models_required, probe.models_help or MODEL_HELP)]
    for param in [*declared, *shared, *RUN_DIRECTORY]:
        if param.switches:
            parameters += [_switch(param, index) for index in range(len(param.switches))]
        else:
            annotation, default = option_of(param)
            parameters.append(_keyword(param.name, annotation, default))

    def command(**given: Any) -> None:
        from tacit.api import run_probe
        from tacit.cli.saving import run_and_save

        models = given.pop("model") or []
        values = {
            param.name: value for param in declared if (value := _value(param, given)) is not None
        }
        run = {p.name: value for p in shared if (value := _value(p, given)) is not None}
        out, overwrite, verbose = (given.pop(p.name) for p in RUN_DIRECTORY)
        out = None if out is None else Path(out)
        # logged once saved, with the run directory's files
        log_to, resume = run.pop("log_to", None), run.pop("resume", False)
        options = RunOptions(**run)
        if options.dry_run:  # no run directory: nothing is written
            if resume or overwrite or out is not None:
                raise TacitError(
                    "--dry-run writes nothing: drop --out, --resume and --overwrite with it"
                )
            typer.echo(str(run_probe(name, models, values, options, context="cli")))
            return
        run_and_save(
            name,
            out,
            resume,
            overwrite,
            verbose,
            lambda checkpointing: run_probe(
                name, models, values, replace(options, **checkpointing), context="cli"
            ),
            log_to=log_to,
        )

    command.__name__ = name
    command.__doc__ = probe.description + "\n\n" + inspect.cleandoc(probe.help)
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return user_errors(command)


def _keyword(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _models(required: bool, help: str) -> inspect.Parameter:
    option = typer.Option("--model", "-m", help=help)
    if required:
        return _keyword("model", Annotated[list[str], option], inspect.Parameter.empty)
    return _keyword("model", Annotated[list[str] | None, option], None)


def _switch(param: Param, index: int) -> inspect.Parameter:
    switch = param.switches[index]
    option = typer.Option(switch.flag, help=switch.help)
    return _keyword(_switch_name(param, index), Annotated[bool, option], False)


def _switch_name(param: Param, index: int) -> str:
    return f"{param.name}__{index}"


def _value(param: Param, given: dict[str, Any]) -> Any:
    """The option's value as the command line gave it (None: not given), parsed as declared;
    switches that contradict each other are a one-line error."""
    if param.switches:
        on = [s for i, s in enumerate(param.switches) if given.pop(_switch_name(param, i))]
        if len(on) > 1:
            flags = " and ".join(s.flag for s in on)
            raise TacitError(f"{flags} contradict each other: pick one")
        return on[0].value if on else None
    return given_value(param, given)
