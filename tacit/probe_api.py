"""How the Python API runs a probe: `run_probe`, which runs any registered probe
(tacit.probes.registry) the same way, and `probe_function`, which makes a probe's function
(tacit.retrieve, ...) from its declaration: its Options give the keywords, their types,
defaults and help. tacit.api holds the functions made; tacit/api.pyi gives them to type
checkers (tacit.api_stub writes it).

A run: check the probe's options and the run options -> the probe's plan, before any model
loads -> the engine scores the plan's work with each model in turn -> the probe's summary,
report and figures -> a ProbeResult (what the command line prints and saves).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec, model_text
from tacit.core.option_names import option
from tacit.core.options import RunOptions, limit_record, limit_said
from tacit.hub.access import read_once
from tacit.models.families import model_help
from tacit.probes.report import report_of

if TYPE_CHECKING:
    from tacit.core.params import Context
    from tacit.models.base import Scorer
    from tacit.results.result import ProbeResult

Models = Sequence["str | ModelSpec | Mapping[str, Any] | Scorer"]
MODELS_HELP = (
    f"{model_help(plural=True)}, ModelSpecs, or Scorers already in memory; scored in turn."
)


@read_once()  # each model's files read once in the run
def run_probe(
    name: str,
    models: Models,
    given: Mapping[str, Any],
    options: RunOptions | None = None,
    run_options: Mapping[str, Any] | None = None,
    *,
    context: Context = "api",
) -> ProbeResult:
    """Run the probe `name` with its options `given` (checked as it declares them; errors name
    them as `context` writes them: `api` keywords, `cli` flags) on `models`. With the run option
    `dry_run`, what the run would cost instead (a tacit.engine.estimate.RunEstimate): its plan
    counted, each model timed on a short calibration, nothing written."""
    from tacit.core.manifest import now
    from tacit.engine.distributed import is_main
    from tacit.engine.runner import run_manifest, run_models
    from tacit.models.resolved import judge_model, resolved_models
    from tacit.probes import registry
    from tacit.results.result import ProbeResult

    probe = registry.get(name)
    run = RunOptions.build(options, run_options or {})
    if run.log_to is not None:  # its package installed, before anything slow
        from tacit.results.tracking import check_tracker

        check_tracker(run.log_to)
    values = probe.validate(given, context=context)
    run.refuse(probe.name, probe.takes())
    # each model's text (a ModelSpec or a mapping written out) read once, or a Scorer in memory
    texts = [model_text(m) if isinstance(m, str | ModelSpec | Mapping) else m for m in models]
    resolved = resolved_models(texts, run)
    if probe.models_required and not resolved:
        raise TacitError(f"no {option('--model')} given")
    started = now()
    planning = run.planning()
    planning = replace(planning, judge=partial(judge_model, options=run, main=is_main()))
    plan = probe.plan(resolved, values, planning)
    if run.dry_run:
        from tacit.engine.estimate import estimate_run

        if plan.work is None:
            raise TacitError(f"{name}: {option('--dry-run')}: no model scores anything here")
        return estimate_run(name, resolved, run, plan)  # type: ignore[return-value]
    history: dict[str, Any] = {"started": started, **plan.manifest}  # what a checkpoint keeps
    if plan.work is not None:
        rows, records = run_models(
            resolved,
            run,
            plan.work,
            probe=name,
            plan=plan.resume_key,
            run=history,
        )
    else:
        assert plan.given is not None, "a plan without work gives its rows"
        rows, records = plan.given
    limit = limit_record(planning, probe.limit) if probe.limit is not None else {}
    manifest = run_manifest(name, run, records, started, history, **plan.manifest, **limit)
    outcome = probe.finish(plan, rows, manifest, planning)
    manifest.update(outcome.manifest)  # type: ignore[typeddict-item]
    shown = report_of(probe)
    text, notes = shown.printed(outcome, manifest)
    if run.limit is not None and probe.limit is not None:  # said first: not a full run
        text = (
            f"limited to {limit_said(planning, probe.limit)} ({option('--limit')} {run.limit}): a "
            f"first look, not comparable with a full run\n{text}"
        )
    result = ProbeResult(
        outcome.rows,
        outcome.summary,
        outcome.vocab,
        manifest,
        outcome.extra,
        rows_file=shown.rows_file,
        text=text,
        notes=notes,
        figures=outcome.figures,
        files=outcome.files,
    )
    if run.log_to is not None:
        from tacit.results.tracking import log_run

        if is_main():  # one log per run, however many processes scored it
            log_run(result, run.log_to)
    return result


def probe_function(name: str) -> Callable[..., ProbeResult]:
    """The API function of the registered probe `name`, made from its declaration: the options
    it needs first (`leading`, positional), then the models, then its other options as
    keywords (typed and defaulted as declared), `options` (a RunOptions) and the run options
    as keywords; its docstring lists them with their help."""
    from tacit.probes import registry

    probe = registry.get(name)
    types = probe.options.annotations()
    keyword, positional = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
    leading = [
        inspect.Parameter(p.name, positional, annotation=types[p.name])
        for p in probe.params
        if p.leading
    ]
    models = inspect.Parameter(
        "models",
        positional,
        annotation="Models",
        default=inspect.Parameter.empty if probe.models_required else (),
    )
    own = [
        inspect.Parameter(p.name, keyword, annotation=types[p.name], default=p.default)
        for p in probe.params
        if not p.leading
    ]
    run_types = RunOptions.annotations()
    shared = [p for p in RunOptions.params() if p.group is None or p.group in probe.takes()]
    run = [
        inspect.Parameter("options", keyword, annotation="RunOptions | None", default=None),
        *(
            inspect.Parameter(p.name, keyword, annotation=run_types[p.name], default=p.default)
            for p in shared
        ),
    ]
    signature = inspect.Signature([*leading, models, *own, *run], return_annotation="ProbeResult")
    run_names = {p.name for p in shared}

    def function(*args: Any, **kwargs: Any) -> ProbeResult:
        unknown = {key: kwargs[key] for key in kwargs if key not in signature.parameters}
        if unknown:  # not run options, or ones this probe does without: a one-line error
            RunOptions.build(None, unknown).refuse(name, probe.takes())
        given = signature.bind(*args, **kwargs).arguments
        models = given.pop("models", ())
        options = given.pop("options", None)
        run_options = {key: given.pop(key) for key in list(given) if key in run_names}
        return run_probe(name, models, given, options, run_options)

    function.__name__ = function.__qualname__ = name
    function.__module__ = "tacit.api"  # where it is made, and documented
    function.__signature__ = signature  # type: ignore[attr-defined]
    function.__doc__ = _docstring(probe)
    return function


def _docstring(probe: Any) -> str:
    """A probe function's docstring: the probe's description and help, then each argument
    with its declared help (choices and what not giving it means included)."""
    lines = [probe.description, "", inspect.cleandoc(probe.help), "", "Args:"]
    arguments = [(p.name, p.help + _choices(p)) for p in probe.params if p.leading]
    arguments.append(("models", MODELS_HELP))
    arguments += [(p.name, p.help + _choices(p)) for p in probe.params if not p.leading]
    arguments.append(
        (
            "options",
            "how models are loaded and run (tacit.core.options.RunOptions), as an object; the "
            "keywords below set its fields.",
        )
    )
    arguments += [
        (p.name, p.help + _choices(p))
        for p in RunOptions.params()
        if p.group is None or p.group in probe.takes()
    ]
    lines += [
        textwrap.fill(
            f"{name}: {help}",
            96,
            initial_indent=" " * 4,
            subsequent_indent=" " * 8,
            break_on_hyphens=False,
        )
        for name, help in arguments
    ]
    lines += [
        "",
        "Returns:",
        "    The run's ProbeResult (what the command line prints and saves); with dry_run=True,",
        "    what the run would cost (a RunEstimate), nothing scored but a short calibration.",
    ]
    return "\n".join(lines)


def _choices(param: Any) -> str:
    choices = param.choices if param.kind != "bool" else None
    said = f" One of: {', '.join(map(str, choices))}." if choices else ""
    if param.shown_default is not None:
        said += f" Not given: {param.shown_default}."
    return said
