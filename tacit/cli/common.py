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

from tacit.core.choices import CONTROLS, LIMIT_BY, LOAD_DTYPES, TRACKERS, VOCAB_WORDS
from tacit.core.errors import TacitError, TacitWarning, Terminated, on_sigterm
from tacit.core.modelspec import parse_model_args
from tacit.core.option_names import command_line
from tacit.core.options import RunOptions, parse_batch_size
from tacit.core.params import Param

DEBUG = {"on": bool(os.environ.get("TACIT_DEBUG"))}
INTERRUPTION = {"said": False}  # whether `interrupted` has printed its line in this process


def interrupted(stop: KeyboardInterrupt) -> typer.Exit:
    """Say what stopped the run and what it kept, in one line (`stop.detail`, where the run
    said what it kept); exit 130 for Ctrl-C, 143 for SIGTERM."""
    name = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"
    detail = getattr(stop, "detail", None) or "no result files were written"
    typer.echo(f"interrupted by {name}: {detail}", err=True)
    INTERRUPTION["said"] = True
    return typer.Exit(143 if isinstance(stop, Terminated) else 130)


def _one_line_warning(
    message: Any, category: Any, filename: str, lineno: int, line: str | None = None
) -> str:
    """A warning raised while a command runs (a cache that cannot be written) as one line."""
    return f"warning: {message}\n"


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
            with command_line():  # errors name flags, not the API's arguments
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
                typer.echo(f"warning: {message}{suffix(message)}", err=True)


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
MODEL_HELP = (
    "Model to probe: a Hugging Face hub name or a local directory, with its own loading "
    "options if any: NAME,KEY=VALUE,... (revision, dtype, trust_remote_code, "
    "attn_implementation, peft, load_in_8bit, load_in_4bit; see docs/models.md). Repeat for "
    "several."
)
Models = Annotated[list[str], typer.Option("--model", "-m", help=MODEL_HELP)]
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
DtypeOption = Annotated[
    str, choice("--dtype", choices=LOAD_DTYPES, help="Weights' precision (auto: the checkpoint's).")
]
BatchSize = Annotated[
    str,
    typer.Option(
        "--batch-size",
        help="Texts per forward pass, or `auto`: the largest that fits "
        "in the device's memory (found on the longest batch; recorded).  [default: 32]",
        show_default=False,
    ),
]
ModelArgs = Annotated[
    str | None,
    typer.Option(
        "--model-args",
        help="Loading options for every --model, as "
        "lm-evaluation-harness's --model_args: KEY=VALUE,... (trust_remote_code, "
        "attn_implementation, peft, load_in_8bit, load_in_4bit); a model's own win.",
    ),
]
Limit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        help="Only N concepts (or items, configurations), as --limit-by picks them: a quick "
        "first look, said in the summary and recorded.",
    ),
]
LimitByOption = Annotated[
    str,
    choice(
        "--limit-by",
        choices=LIMIT_BY,
        help="How --limit picks its N: a sample drawn with --seed (random), or the first N "
        "(first; CSLB's first concepts are all 'an ...').",
    ),
]
Threads = Annotated[
    int | None,
    typer.Option(
        "--threads",
        help="CPU threads torch may use (default: torch's own choice; on a loaded machine one "
        "can be several times faster). Recorded either way.",
    ),
]
CacheDir = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="Keep models' answers in this directory across runs: a sentence an earlier run "
        "scored with the same model is read, not scored again (sweeps, ablations, reruns). "
        "The manifest counts what was found. Default: nothing kept.",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Say what the run would cost, in seconds: prompts, candidates and sentences from "
        "the plan, and each model's time from a short calibration on its own prompts (with "
        "what takes less, where it is long). Scores nothing else, writes nothing.",
    ),
]
DryRunSeconds = Annotated[
    float,
    typer.Option(
        "--dry-run-seconds",
        help="With --dry-run: how long each model's calibration may take past loading (it "
        "also stops at 2,048 sentences); 0: the counts alone, no model loaded.  [default: 10]",
        show_default=False,
    ),
]
VocabWordsOption = Annotated[
    str,
    choice(
        "--vocab-words",
        choices=VOCAB_WORDS,
        help="Which single-token words the shared "
        "vocabulary keeps: all (the paper's), alpha (letters only: no punctuation, digits or "
        "symbols) or lower (lower-case letters only: also no names or capitalised word "
        "pieces).",
    ),
]
DeviceMap = Annotated[
    str | None,
    typer.Option(
        "--device-map",
        help="`auto`: spread a model too large for one device over "
        "the GPUs, the CPU and disk (needs accelerate; see docs/scaling.md).",
    ),
]
MaxMemory = Annotated[
    str | None,
    typer.Option(
        "--max-memory",
        help="With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.",
    ),
]
OffloadFolder = Annotated[
    Path | None,
    typer.Option(
        "--offload-folder", help="With --device-map: where layers that fit on no device are kept."
    ),
]
Compile = Annotated[
    bool,
    typer.Option(
        "--compile",
        help="torch.compile the encoder (a minute or so of compiling first). Results are the "
        "same; on a CPU it measured no faster, so try it on long GPU runs only.",
    ),
]
ControlOption = Annotated[
    str | None,
    choice(
        "--control",
        choices=CONTROLS,
        help="Run each model's control beside it: random-weights, the same architecture and "
        "tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL "
        "(random weights, seed S)' in every table: what length and tokens alone give.",
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed for random selections and orders.")]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Run directory. Default: `results/<probe>/<timestamp>`."),
]
Resume = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Continue an interrupted run in --out DIR: reuse what it scored, score the rest "
        "(the same command otherwise; the results equal those of an uninterrupted run).",
    ),
]
Overwrite = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace what --out DIR holds (a run, an interrupted run, any files) with this "
        "run, the whole directory: without it, such a directory is refused.",
    ),
]
LogTo = Annotated[
    str | None,
    choice(
        "--log-to",
        choices=TRACKERS,
        help="Log the run's summary, manifest and files to an experiment tracker once it is "
        "saved (its extra: pip install 'tacit-probe[wandb]'; offline modes work).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose",
        help="Print the full breakdown (every condition or section), not the "
        "compact summary; the files hold all of it either way.",
    ),
]


# The options every probe command shares, in the order --help lists them after its own:
# name -> (annotated type, default). `probe_command` adds them to a command.
SHARED_OPTIONS: dict[str, tuple[Any, Any]] = {
    "vocab_model": (VocabModels, None),
    "vocab_file": (VocabFile, None),
    "vocab_words": (VocabWordsOption, "all"),
    "revision": (Revision, None),
    "model_args": (ModelArgs, None),
    "device": (Device, "auto"),
    "dtype": (DtypeOption, "float32"),
    "batch_size": (BatchSize, "32"),
    "limit": (Limit, None),
    "limit_by": (LimitByOption, "random"),
    "threads": (Threads, None),
    "dry_run": (DryRun, False),
    "dry_run_seconds": (DryRunSeconds, 10.0),
    "cache": (CacheDir, None),
    "compile": (Compile, False),
    "device_map": (DeviceMap, None),
    "max_memory": (MaxMemory, None),
    "offload_folder": (OffloadFolder, None),
    "control": (ControlOption, None),
    "seed": (Seed, 0),
    "out": (Out, None),
    "resume": (Resume, False),
    "overwrite": (Overwrite, False),
    "log_to": (LogTo, None),
    "quiet": (Quiet, False),
    "verbose": (Verbose, False),
}


def run_options(
    *,
    vocab_model: list[str] | None = None,
    vocab_file: Path | None = None,
    revision: str | None,
    device: str,
    dtype: str,
    batch_size: str,
    compile: bool,
    seed: int = 0,
    quiet: bool,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: Path | None = None,
    model_args: str | None = None,
    limit: int | None = None,
    limit_by: str = "random",
    vocab_words: str = "all",
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: Path | None = None,
    control: str | None = None,
) -> RunOptions:
    """The options every probe takes, as the API's RunOptions."""
    return RunOptions(
        vocab_models=tuple(vocab_model or ()),
        vocab_file=vocab_file,
        vocab_words=vocab_words,  # type: ignore[arg-type]  # RunOptions checks it
        revision=revision,
        model_args=parse_model_args(model_args),
        limit=limit,
        limit_by=limit_by,  # type: ignore[arg-type]  # RunOptions checks it
        threads=threads,
        dry_run=dry_run,
        dry_run_seconds=dry_run_seconds,
        cache=cache,
        control=control,  # type: ignore[arg-type]  # RunOptions checks it
        device=device,
        dtype=dtype,  # type: ignore[arg-type]  # RunOptions checks it
        batch_size=parse_batch_size(batch_size),
        compile=compile,
        seed=seed,
        progress=not quiet,
        device_map=device_map,
        max_memory=max_memory,
        offload_folder=offload_folder,
    )
