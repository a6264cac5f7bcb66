"""What every command shares: its options, one-line errors, and the decorator that makes a
probe a command (tacit.cli.saving runs it into its run directory). Nothing heavy is imported
here: `probe --help` must not load torch."""

from __future__ import annotations

import functools
import inspect
import os
import signal
import typing
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from tacit.core.errors import TacitError
from tacit.core.options import (
    DTYPES,
    NORMALIZATIONS,
    NORMS_FORMATS,
    SPAN_SCORINGS,
    RunOptions,
    check_choice,
)
from tacit.core.options import NormsFormat as NormsFormatName
from tacit.results.result import ProbeResult

DEBUG = {"on": bool(os.environ.get("TACIT_DEBUG"))}
INTERRUPTION = {"said": False}  # whether `interrupted` has printed its line in this process


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that a run stops the way Ctrl-C stops it."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def interrupted(stop: KeyboardInterrupt) -> typer.Exit:
    """Say what stopped the run, in one line; exit 130 for Ctrl-C, 143 for SIGTERM."""
    name = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"
    typer.echo(f"interrupted by {name}: no result files were written", err=True)
    INTERRUPTION["said"] = True
    return typer.Exit(143 if isinstance(stop, Terminated) else 130)


def user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a TacitError into one line on stderr and exit status 1 (traceback with --debug).

    Ctrl-C and SIGTERM stop the run at once; run files are written together at the very end
    (tacit.core.files.write_files), so an interrupted run leaves none of them.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return command(*args, **kwargs)
        except TacitError as err:
            if DEBUG["on"]:
                raise
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt as stop:
            raise interrupted(stop) from None
        finally:
            signal.signal(signal.SIGTERM, previous)

    return wrapper


def choice(*names: str, choices: Sequence[str], help: str, default: str | None = None) -> Any:
    """An option with a fixed set of values (declared once, in tacit.core.options): listed in the
    help and completed by the shell; a wrong value gets the API's one-line error. `default`:
    the value used when the option is not given, for an option whose Python default is None
    so that "not given" can be told apart from "given the default"."""
    shown = f"  [default: {default}]" if default is not None else ""
    return typer.Option(
        *names, help=f"{help} One of: {', '.join(choices)}.{shown}",
        autocompletion=lambda: list(choices),
    )  # fmt: skip


# Options shared by the commands (typer reads the metadata from Annotated).
Models = Annotated[
    list[str],
    typer.Option(
        "--model", "-m",
        help="Model to probe: a Hugging Face hub name or a local directory. Repeat for several.",
    ),
]  # fmt: skip
NormsPath = Annotated[
    str | None,
    typer.Option(
        "--norms",
        help="Norms: a file (CSLB norms.dat, McRae's .xlsx or a CSV/TSV export, or your own "
        "CSV/TSV table) or the name of installed norms. Default: the installed default "
        "(`probe norms install`), else $TACIT_NORMS.",
    ),
]
NormsFormat = Annotated[
    str | None,
    choice(
        "--norms-format",
        choices=NORMS_FORMATS,
        help="Say the norms file's format when tacit cannot tell it from the file.",
    ),
]
NormsColumns = Annotated[
    str | None,
    typer.Option(
        "--norms-columns",
        help="A generic table's column names, e.g. `concept=Word,feature=Property,pf=Count` "
        "(feature_type optional).",
    ),
]
VocabModels = Annotated[
    list[str] | None,
    typer.Option(
        "--vocab-model",
        help="Model whose tokenizer also constrains the shared vocabulary (only its tokenizer is "
        "loaded), so that separate runs stay comparable. Repeatable.",
    ),
]
VocabFile = Annotated[
    Path | None,
    typer.Option("--vocab-file", help="Word list (one a line) the shared vocabulary must lie in."),
]
Revision = Annotated[
    str | None,
    typer.Option("--revision", help="Model revision (branch, tag or commit) for every --model."),
]
Device = Annotated[str, typer.Option("--device", help="auto, cpu, cuda, cuda:N or mps.")]
DtypeOption = Annotated[str, choice("--dtype", choices=DTYPES, help="Weights' precision.")]
BatchSize = Annotated[int, typer.Option("--batch-size", help="Texts per forward pass.")]
DeviceMap = Annotated[
    str | None,
    typer.Option("--device-map", help="`auto`: spread a model too large for one device over "
                 "the GPUs, the CPU and disk (needs accelerate; see docs/scaling.md)."),
]  # fmt: skip
MaxMemory = Annotated[
    str | None,
    typer.Option("--max-memory", help="With --device-map: each device's share, e.g. "
                 "0=20GiB,1=20GiB,cpu=60GiB."),
]  # fmt: skip
OffloadFolder = Annotated[
    Path | None,
    typer.Option("--offload-folder", help="With --device-map: where layers that fit on no "
                 "device are kept."),
]  # fmt: skip
Compile = Annotated[
    bool,
    typer.Option(
        "--compile",
        help="torch.compile the encoder (a minute or so of compiling first). Results are the "
        "same; on a CPU it measured no faster, so try it on long GPU runs only.",
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed for random selections and orders.")]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Run directory. Default: `results/<probe>/<timestamp>`."),
]
Concepts = Annotated[
    str | None,
    typer.Option(
        "--concepts", help="Only these concepts: a comma-separated list, or @FILE with one a line."
    ),
]
Resume = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Continue an interrupted run in --out DIR: reuse what it scored, score the rest "
        "(the same command otherwise; the results equal those of an uninterrupted run).",
    ),
]
SpanScoringOption = Annotated[
    str,
    choice(
        "--span-scoring", choices=SPAN_SCORINGS,
        help="How a candidate span of several tokens is scored by a masked LM: `l2r`, the "
        "exact chain rule left to right (one mask per token still to come), or `independent` "
        "(all masked at once, mLAMA's).",
    ),
]  # fmt: skip
NormalizeOption = Annotated[
    str,
    choice(
        "--normalize", choices=NORMALIZATIONS,
        help="What candidate spans are ranked by: their log-probability (`sum`), per token "
        "(`mean`), or against the prompt without its properties (`pmi`).",
    ),
]  # fmt: skip
Overwrite = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace what --out DIR holds (a run, an interrupted run, any files) with this "
        "run, the whole directory: without it, such a directory is refused.",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose", help="Print the full breakdown (every condition or section), not the "
        "compact summary; the files hold all of it either way.",
    ),
]  # fmt: skip


# The options every probe command shares, in the order --help lists them after its own:
# name -> (annotated type, default). `probe_command` adds them to a command.
SHARED_OPTIONS: dict[str, tuple[Any, Any]] = {
    "vocab_model": (VocabModels, None),
    "vocab_file": (VocabFile, None),
    "revision": (Revision, None),
    "device": (Device, "auto"),
    "dtype": (DtypeOption, "float32"),
    "batch_size": (BatchSize, 32),
    "compile": (Compile, False),
    "device_map": (DeviceMap, None),
    "max_memory": (MaxMemory, None),
    "offload_folder": (OffloadFolder, None),
    "seed": (Seed, 0),
    "out": (Out, None),
    "resume": (Resume, False),
    "overwrite": (Overwrite, False),
    "quiet": (Quiet, False),
    "verbose": (Verbose, False),
}


def probe_command(
    probe: str, *, vocab: bool = True, seed: bool = True, resume: bool = True
) -> Callable[[Callable[..., ProbeResult]], Callable[..., None]]:
    """Turn `func(own options..., *, options: RunOptions) -> ProbeResult` into a command that
    also takes the shared options (SHARED_OPTIONS; without the vocabulary options, --seed or
    --resume where the probe has none), runs into its run directory, prints the result and
    turns user errors into one line (user_errors)."""
    names = [
        name
        for name in SHARED_OPTIONS
        if (vocab or not name.startswith("vocab_"))
        and (seed or name != "seed")
        and (resume or name != "resume")
    ]

    def decorate(func: Callable[..., ProbeResult]) -> Callable[..., None]:
        hints = typing.get_type_hints(func, include_extras=True)
        own = [
            parameter.replace(annotation=hints[parameter.name])
            for parameter in inspect.signature(func).parameters.values()
            if parameter.name != "options"
        ]
        shared = [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind
            )
            for name, (kind, default) in ((n, SHARED_OPTIONS[n]) for n in names)
        ]

        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> None:
            given = {name: kwargs.pop(name) for name in names}
            out, resume_run = given.pop("out"), given.pop("resume", False)
            overwrite, verbose = given.pop("overwrite"), given.pop("verbose")
            options = run_options(**given)
            from tacit.cli.saving import run_and_save

            run_and_save(
                probe, out, resume_run, overwrite, verbose,
                lambda checkpointing: func(
                    *args, options=replace(options, **checkpointing), **kwargs
                ),
            )  # fmt: skip

        parameters = own + shared
        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in parameters}
        return user_errors(command)

    return decorate


def run_options(
    *,
    vocab_model: list[str] | None = None,
    vocab_file: Path | None = None,
    revision: str | None,
    device: str,
    dtype: str,
    batch_size: int,
    compile: bool,
    seed: int = 0,
    quiet: bool,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: Path | None = None,
) -> RunOptions:
    """The options every probe takes, as the API's RunOptions."""
    return RunOptions(
        vocab_models=tuple(vocab_model or ()),
        vocab_file=vocab_file,
        revision=revision,
        device=device,
        dtype=check_choice("--dtype", dtype, DTYPES),
        batch_size=batch_size,
        compile=compile,
        seed=seed,
        progress=not quiet,
        device_map=device_map,
        max_memory=max_memory,
        offload_folder=offload_folder,
    )


def norms_format_choice(value: str | None) -> NormsFormatName | None:
    """--norms-format, checked (None: tell it from the file)."""
    return None if value is None else check_choice("--norms-format", value, NORMS_FORMATS)


def parse_concepts(value: str | None) -> list[str] | None:
    """`bear,cat` or `@file` (one concept a line) -> list; None stays None."""
    if value is None:
        return None
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise TacitError(f"--concepts {value}: cannot read {path} ({err.strerror})") from None
        names = [line.strip() for line in lines if line.strip()]
    else:
        names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise TacitError(f"--concepts {value!r}: names no concept")
    return names
