"""What every command shares: the run options, one-line errors and what an interruption says,
and a declared option (tacit.core.params.Param) as a typer option. Nothing heavy is imported
here: `probe --help` must not load torch."""

from __future__ import annotations

import functools
import inspect
import os
import signal
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from tacit.core.choices import VOCAB_WORDS
from tacit.core.errors import TacitError, TacitWarning, Terminated, on_sigterm
from tacit.core.option_names import from_command_line
from tacit.core.options import REVISION, VOCAB_FILE, VOCAB_WORDS_PARAM
from tacit.core.params import Param
from tacit.core.secrets import redact
from tacit.models.families import model_help

DEBUG = {"on": bool(os.environ.get("TACIT_DEBUG"))}
INTERRUPTION = {"said": False}  # whether `interrupted` has printed its line in this process


def interrupted(stop: KeyboardInterrupt) -> typer.Exit:
    """Say what stopped the run and what it kept, in one line (`stop.detail`, where the run
    said what it kept); exit 130 for Ctrl-C, 143 for SIGTERM."""
    name = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"
    detail = getattr(stop, "detail", None) or "no result files were written"
    typer.echo(redact(f"interrupted by {name}: {detail}"), err=True)
    INTERRUPTION["said"] = True
    return typer.Exit(143 if isinstance(stop, Terminated) else 130)


def _one_line_warning(
    message: Any, category: Any, filename: str, lineno: int, line: str | None = None
) -> str:
    """A warning raised while a command runs (a cache that cannot be written) as one line."""
    return f"warning: {redact(str(message))}\n"


def user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a TacitError into one line on stderr and exit status 1 (traceback with --debug).

    Ctrl-C and SIGTERM stop the run at once; run files are written together at the very end
    (tacit.core.files.write_files), so an interrupted run leaves none of them.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warnings.formatwarning = _one_line_warning
        previous = signal.signal(signal.SIGTERM, on_sigterm)
        try:
            with from_command_line():  # errors name flags, not the API's arguments
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


@contextmanager
def warnings_said(suffix: Callable[[str], str] = lambda message: "") -> Iterator[None]:
    """Warnings raised while runs are read (a file among them left out, runs that differ), each
    said as one `warning:` line on stderr when the command's work is done (`suffix`: what to
    add to a message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TacitWarning)
        try:
            yield
        finally:
            said = dict.fromkeys(str(warning.message) for warning in caught)
            for message in said:
                typer.echo(redact(f"warning: {message}{suffix(message)}"), err=True)


def choice(*names: str, choices: Sequence[str], help: str, default: str | None = None) -> Any:
    """An option with a fixed set of values (declared once, in tacit.core.options): listed in the
    help and completed by the shell; a wrong value gets the API's one-line error. `default`:
    the value used when the option is not given, for an option whose Python default is None
    so that "not given" can be told apart from "given the default"."""
    shown = f"  [default: {default}]" if default is not None else ""
    return typer.Option(
        *names,
        help=f"{help} One of: {', '.join(choices)}.{shown}",
        autocompletion=lambda: list(choices),
    )


# A declared option's type on the command line (a path stays text: `--candidates vocab`)
CLI_TYPES: dict[str, Any] = {
    "int": int,
    "float": float,
    "str": str,
    "path": str,
    "any": str,
    "bool": bool,
    "list": list[str],
}


def option_of(param: Param) -> tuple[Any, Any]:
    """A declared option as typer takes it: (Annotated type, default). Its choices are listed
    in the help and completed by the shell; a list option repeats its flag, unless it reads
    one text (`parse`: `--concepts bear,cat`)."""
    kind = "str" if param.parse is not None else param.kind
    help = param.help
    if param.choices is not None:
        help += f" One of: {', '.join(map(str, param.choices))}."
    if param.shown_default is not None:
        help += f"  [default: {param.shown_default}]"
    default = param.default
    if kind == "list" or param.parse is not None or default is None:
        default = None  # not given: the declaration's default applies
    annotation = CLI_TYPES[kind] if default is not None else CLI_TYPES[kind] | None
    choices = [str(c) for c in param.choices] if param.choices else None
    if param.positional:
        argument = typer.Argument(help=help, show_default=False)
        return Annotated[CLI_TYPES[kind], argument], inspect.Parameter.empty
    option = typer.Option(
        *_flags(param), help=help, autocompletion=(lambda: choices) if choices else None
    )
    return Annotated[annotation, option], default


def _flags(param: Param) -> tuple[str, ...]:
    return param.flags or (param.flag,)


# Options shared by the commands (typer reads the metadata from Annotated).
MODEL_HELP = f"Model to probe: {model_help()}. Repeat for several."
Models = Annotated[list[str], typer.Option("--model", "-m", help=MODEL_HELP)]
# run options in commands whose signatures are written out (`probe vocab`, `probe norms show`):
# their flags and help as declared (tacit.core.options), their defaults the declaration's
VocabFile = Annotated[Path | None, typer.Option(VOCAB_FILE.flag, help=VOCAB_FILE.help)]
VocabWordsOption = Annotated[
    str,
    typer.Option(
        VOCAB_WORDS_PARAM.flag,
        help=f"{VOCAB_WORDS_PARAM.help} One of: {', '.join(VOCAB_WORDS)}.",
        autocompletion=lambda: list(VOCAB_WORDS),
    ),
]
Revision = Annotated[str | None, typer.Option(REVISION.flag, help=REVISION.help)]

# What a command that writes a run directory takes beyond the run options (RunOptions): where,
# whether to replace what is there, and how much of the summary to print.
OUT = Param(
    "out",
    None,
    kind="path",
    flags=("--out", "-o"),
    help="Run directory. Default: `results/<probe>/<timestamp>`.",
)
OVERWRITE = Param(
    "overwrite",
    False,
    kind="bool",
    help="Replace what --out DIR holds (a run, an interrupted run, any files) with this run, the "
    "whole directory: without it, such a directory is refused.",
)
VERBOSE = Param(
    "verbose",
    False,
    kind="bool",
    help="Print the full breakdown (every condition or section), not the compact summary; the "
    "files hold all of it either way.",
)
RUN_DIRECTORY = (OUT, OVERWRITE, VERBOSE)


def given_value(param: Param, given: dict[str, Any]) -> Any:
    """The option's value as the command line gave it (None: not given), parsed as declared."""
    value = given.pop(param.name)
    if param.parse is not None and isinstance(value, str):
        return param.parse(value)
    if param.kind == "list" and value == []:
        return None
    return value
