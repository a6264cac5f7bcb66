"""The options every probe shares: how models are found, loaded and run (RunOptions), each
declared once (tacit.core.params.Param), as a probe declares its own.

Only the checks that need nothing else happen here; whether the machine has the device asked
for is checked when a run starts (tacit.models.runtime.resolve_device), before anything slow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from tacit.core.choices import (
    CONTROLS,
    LIMIT_BY,
    LOAD_DTYPES,
    TRACKERS,
    VOCAB_WORDS,
    Control,
    LimitBy,
    LoadDtype,
    VocabWords,
    check_device,
)
from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec, parse_model_args
from tacit.core.option_names import on_command_line, option
from tacit.core.params import Context, Options, Param
from tacit.core.secrets import redacted

# the shared run options a probe may do without (Probe.run_options names the groups it takes),
# each with why a probe that does without it refuses it; a run option names its group
RUN_OPTION_GROUPS = {
    "vocab": "it scores no shared vocabulary",
    "seed": "it draws nothing at random",
    "resume": "a rerun of the same command reuses what it computed",
    "limit": "it has no list of concepts or items to take the first few of",
}


def parse_batch_size(text: str) -> int | Literal["auto"]:
    """The command line's --batch-size: a number, or `auto`."""
    if text == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise TacitError(f"--batch-size {text!r}: expected a whole number or auto") from None


def parse_max_memory(text: str) -> dict[int | str, int | str]:
    """'0=20GiB,cpu=60GiB' -> {0: '20GiB', 'cpu': '60GiB'} (accelerate's max_memory)."""
    memory: dict[int | str, int | str] = {}
    for item in text.split(","):
        device, equals, amount = item.strip().partition("=")
        if not equals or not device or not amount:
            raise TacitError(
                f"{option('--max-memory')} {text!r}: expected DEVICE=AMOUNT pairs, e.g. "
                "0=20GiB,cpu=60GiB"
            )
        memory[int(device) if device.isdigit() else device] = (
            int(amount) if amount.isdigit() else amount  # plain bytes, or '20GiB'
        )
    return memory


def _names(value: Any, label: str) -> tuple[str, ...]:
    """Model names, each once, in order."""
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise TacitError(f"{label} {value!r}: expected a list of model names")
    return tuple(dict.fromkeys(value))


def _batch_size(value: Any, label: str) -> int | Literal["auto"]:
    """A whole number of at least 1, or `auto`."""
    if value == "auto":
        return "auto"
    if not isinstance(value, int) or isinstance(value, bool):
        raise TacitError(f"{label} {value!r}: expected a whole number or auto")
    if value < 1:
        raise TacitError(f"{label} {value}: must be at least 1")
    return value


def _model_args(value: Any, label: str) -> dict[str, Any]:
    args = parse_model_args(value)
    for key in ("revision", "dtype"):
        if key in args:
            raise TacitError(
                f"{label}: {key} has its own option, {option('--' + key)} "
                f"(or give it one model: NAME,{key}=...)"
            )
    return args


def _device(value: Any, label: str) -> str:
    return check_device(value)


def _max_memory(value: Any, label: str) -> str:
    parse_max_memory(value)
    return str(value)


VOCAB_MODELS = Param(
    "vocab_models",
    (),
    kind="list",
    flags=("--vocab-model",),
    check=_names,
    group="vocab",
    recorded="always",
    help="Model whose tokenizer also constrains the shared vocabulary (only its tokenizer is "
    "loaded), so that separate runs stay comparable. Repeatable.",
)
VOCAB_FILE = Param(
    "vocab_file",
    None,
    kind="path",
    group="vocab",
    recorded="always",
    help="Word list (one a line) the shared vocabulary must lie in.",
)
VOCAB_WORDS_PARAM = Param(
    "vocab_words",
    "all",
    choices=VOCAB_WORDS,
    group="vocab",
    recorded="set",
    help="Which single-token words the shared vocabulary keeps: all (the paper's), alpha "
    "(letters only: no punctuation, digits or symbols) or lower (lower-case letters only: also "
    "no names or capitalised word pieces).",
)
REVISION = Param(
    "revision",
    None,
    recorded="always",
    help="Model revision (branch, tag or commit) for every --model (hub models only).",
)
MODEL_ARGS = Param(
    "model_args",
    {},
    kind="any",
    parse=parse_model_args,
    check=_model_args,
    recorded="set",
    help="Loading options for every --model, as lm-evaluation-harness's --model_args: "
    "KEY=VALUE,... (the keys --model takes); a model's own win.",
)
DEVICE = Param(
    "device",
    "auto",
    check=_device,
    recorded="always",
    help="auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.",
)
DTYPE = Param(
    "dtype",
    "float32",
    choices=LOAD_DTYPES,
    recorded="always",
    help="The weights' precision (auto: the checkpoint's own); scores are always normalised "
    "in float32.",
)
BATCH_SIZE = Param(
    "batch_size",
    32,
    kind="any",
    parse=parse_batch_size,
    check=_batch_size,
    shown_default="32",
    recorded="always",
    help="Texts per forward pass, or `auto`: the largest that fits in the device's memory "
    "(found on the longest batch; recorded). Results do not depend on it.",
)
LIMIT = Param(
    "limit",
    None,
    kind="int",
    minimum=1,
    group="limit",
    recorded="set",
    help="Only N concepts (or items, configurations), as --limit-by picks them: a quick first "
    "look, said in the summary and recorded, what it leaves out counted.",
)
LIMIT_BY_PARAM = Param(
    "limit_by",
    "random",
    choices=LIMIT_BY,
    group="limit",
    recorded="with limit",
    help="How --limit picks its N: a sample drawn with --seed (random), or the first N (first; "
    "CSLB's first concepts are all 'an ...').",
)
THREADS = Param(
    "threads",
    None,
    kind="int",
    minimum=1,
    help="CPU threads torch may use (default: torch's own choice; on a loaded machine one can "
    "be several times faster). Recorded either way.",
)
DRY_RUN = Param(
    "dry_run",
    False,
    kind="bool",
    help="Plan the run and time a short calibration on each model: prompts, candidates, "
    "sentences, tokens and the time it would take. Scores nothing else, writes nothing.",
)
DRY_RUN_SECONDS = Param(
    "dry_run_seconds",
    10.0,
    kind="float",
    minimum=0,
    help="With --dry-run: how long each model's calibration may take past loading (it also "
    "stops at 2,048 sentences); 0: the counts alone, no model loaded.",
)
CACHE = Param(
    "cache",
    None,
    kind="path",
    help="Keep models' answers in this directory across runs: a sentence an earlier run "
    "scored with the same model is read, not scored again (sweeps, ablations, reruns). The "
    "manifest counts what was found. Default: nothing kept.",
)
COMPILE = Param(
    "compile",
    False,
    kind="bool",
    recorded="always",
    help="torch.compile the encoder (a minute or so of compiling first). Results are the same; "
    "on a CPU it measured no faster, so try it on long GPU runs only.",
)
DEVICE_MAP = Param(
    "device_map",
    None,
    recorded="set",
    help="`auto`: spread a model too large for one device over the GPUs, the CPU and disk "
    "(needs accelerate; see docs/scaling.md).",
)
MAX_MEMORY = Param(
    "max_memory",
    None,
    check=_max_memory,
    recorded="with device_map",
    help="With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.",
)
OFFLOAD_FOLDER = Param(
    "offload_folder",
    None,
    kind="path",
    recorded="with device_map",
    help="With --device-map: where layers that fit on no device are kept.",
)
SEED = Param(
    "seed",
    0,
    kind="int",
    group="seed",
    recorded="always",
    help="Seeds every random choice of the run (selections, orders, --limit's sample).",
)
CHECKPOINT = Param(
    "checkpoint",
    None,
    kind="path",
    cli=False,
    help="Where scored chunks are kept while a run goes (the command line: RUN_DIR/.partial).",
)
RESUME = Param(
    "resume",
    False,
    kind="bool",
    group="resume",
    help="Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command "
    "line: --out DIR), score the rest (the same command otherwise; the results equal those of "
    "an uninterrupted run).",
)
LOG_TO = Param(
    "log_to",
    None,
    choices=TRACKERS,
    help="Log the run's summary, manifest and files to an experiment tracker once it is saved "
    "(its extra: pip install 'tacit-probe[wandb]'; offline modes work).",
)
CONTROL = Param(
    "control",
    None,
    choices=CONTROLS,
    recorded="set",
    help="Run each model's control beside it: random-weights, the same architecture and "
    "tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random "
    "weights, seed S)' in every table: what length and tokens alone give.",
)
QUIET = Param("quiet", False, kind="bool", flags=("--quiet", "-q"), help="No progress bar.")


@dataclass(frozen=True)
class RunOptions(Options):
    """How models are found, loaded and run; shared by every probe. Each field is declared
    once (a tacit.core.params.Param: its help, checks, command-line flag and manifest record);
    the command line, the API's keywords, sweep files and the manifest read the declaration.
    A value is checked when the options are made, before anything slow is loaded; whether the
    machine has the device asked for is checked when a run starts
    (tacit.models.runtime.resolve_device)."""

    vocab_models: Sequence[str] = VOCAB_MODELS.field()
    vocab_file: str | Path | None = VOCAB_FILE.field()
    vocab_words: VocabWords = VOCAB_WORDS_PARAM.field()
    revision: str | None = REVISION.field()
    model_args: Mapping[str, Any] = MODEL_ARGS.field()
    device: str = DEVICE.field()
    dtype: LoadDtype = DTYPE.field()
    batch_size: int | Literal["auto"] = BATCH_SIZE.field()
    limit: int | None = LIMIT.field()
    limit_by: LimitBy = LIMIT_BY_PARAM.field()
    threads: int | None = THREADS.field()
    dry_run: bool = DRY_RUN.field()
    dry_run_seconds: float = DRY_RUN_SECONDS.field()
    cache: str | Path | None = CACHE.field()
    compile: bool = COMPILE.field()
    device_map: str | None = DEVICE_MAP.field()
    max_memory: str | None = MAX_MEMORY.field()
    offload_folder: str | Path | None = OFFLOAD_FOLDER.field()
    seed: int = SEED.field()
    checkpoint: Path | None = CHECKPOINT.field()
    resume: bool = RESUME.field()
    log_to: str | None = LOG_TO.field()
    control: Control | None = CONTROL.field()
    quiet: bool = QUIET.field()

    def __post_init__(self) -> None:
        """Every value checked as declared (errors name it as the caller writes it), then what
        depends on several."""
        context: Context = "cli" if on_command_line() else "api"
        for param in self.params():
            value = getattr(self, param.name)
            if value is None and param.default is None:
                continue
            value = param.validate(value, context)
            if param.kind == "path":
                value = Path(value)
            object.__setattr__(self, param.name, value)
        if self.resume and self.checkpoint is None:
            needs = (
                "--out DIR: the run directory to continue"
                if on_command_line()
                else "checkpoint: where the interrupted run kept its chunks"
            )
            raise TacitError(f"{option('--resume')} needs {needs}")
        if self.dry_run_seconds != DRY_RUN_SECONDS.default and not self.dry_run:
            raise TacitError(
                f"{option('--dry-run-seconds')} says how long {option('--dry-run')} may time "
                f"each model: give it with {option('--dry-run')}"
            )
        if "random_weights" in self.model_args:
            raise TacitError(
                f"{option('--model-args')}: random_weights is set by {option('--control')} "
                "random-weights, which runs each model's control beside it"
            )
        if self.device_map is None and (self.max_memory or self.offload_folder):
            raise TacitError(
                f"{option('--max-memory')} and {option('--offload-folder')} need "
                f"{option('--device-map')} auto"
            )

    @property
    def progress(self) -> bool:
        """Whether progress bars are shown (not `quiet`)."""
        return not self.quiet

    @classmethod
    def build(cls, options: RunOptions | None, overrides: Mapping[str, Any]) -> RunOptions:
        """`options` (or the defaults) with `overrides` applied; a keyword that is not an option
        is a one-line error naming it (a typo is never silently ignored)."""
        known = [param.name for param in cls.params()]
        unknown = [key for key in overrides if key not in known]
        if unknown:
            raise TacitError(
                f"unknown run option(s) {', '.join(unknown)}: expected any of {', '.join(known)}"
            )
        return replace(options or cls(), **overrides)

    def refuse(self, probe: str, takes: frozenset[str]) -> None:
        """Refuse the options of the groups a probe does without (it `takes` the others), each
        with the group's reason."""
        for param in self.params():
            group = param.group
            if (
                group is not None
                and group not in takes
                and getattr(self, param.name) != (param.default)
            ):
                raise TacitError(
                    f"{probe}: {option(param.flag)} is not available: {RUN_OPTION_GROUPS[group]}"
                )

    def planning(self) -> Planning:
        """What a probe's plan reads of these options (Planning)."""
        return Planning(
            self.seed,
            self.limit,
            self.limit_by,
            self.progress,
            self.vocab_models,
            Path(self.vocab_file) if self.vocab_file is not None else None,
            self.vocab_words,
        )

    def model_defaults(self) -> dict[str, Any]:
        """The loading options of every model of the run (a model's own win)."""
        return {"revision": self.revision, "dtype": self.dtype, **self.model_args}

    def model_spec(self, model: str) -> ModelSpec:
        """A model's text (`name[,KEY=VALUE...]`) with the run's options where it gives none."""
        return ModelSpec.parse(model).over(self.model_defaults())

    def recorded(self) -> dict[str, Any]:
        """The options as a manifest records them, as each declares (Param.recorded): what can
        change a result, not where checkpoints go, nor progress bars."""
        found = {}
        for param in self.params():
            value, how = getattr(self, param.name), param.recorded or ""
            if how == "set" and value == param.default or not how:
                continue
            if how.startswith("with ") and getattr(self, how[5:]) is None:
                continue
            found[param.name] = redacted(_as_recorded(value))
        return found


@dataclass(frozen=True)
class Planning:
    """What a probe's plan and finish read of the run's options: the seed, `--limit`, whether
    progress is shown, and the shared vocabulary's settings (read by its Ask)."""

    seed: int = 0
    limit: int | None = None
    limit_by: LimitBy = "random"
    progress: bool = True
    vocab_models: Sequence[str] = ()
    vocab_file: Path | None = None
    vocab_words: VocabWords = "all"
    # a judge's text -> its loader (tacit.models.resolved.judge_model), set by the run; None:
    # a plan made outside a run, which cannot have one
    judge: Callable[[str], Callable[[], Any]] | None = None


def _as_recorded(value: Any) -> Any:
    """A value as JSON holds it: paths as text, sequences as lists, mappings as dicts."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def limited(
    names: Sequence[str], limit: int | None, by: str, seed: int
) -> tuple[list[str], list[str]]:
    """(the names `--limit` keeps, in their order, and those it leaves out): all of them
    without a limit; the first `limit`, or a sample of `limit` drawn with `seed` (the same
    sample for the same names and seed, whatever else the run does).

    Examples:
        >>> limited(["a", "b", "c", "d"], 2, "first", 0)
        (['a', 'b'], ['c', 'd'])
        >>> kept, left_out = limited(["a", "b", "c", "d"], 2, "random", 0)
        >>> len(kept), sorted(kept + left_out)
        (2, ['a', 'b', 'c', 'd'])
    """
    import random

    names = list(dict.fromkeys(names))
    if limit is None or limit >= len(names):
        return names, []
    if by == "first":
        return names[:limit], names[limit:]
    chosen = set(random.Random(f"limit:{seed}").sample(names, limit))
    return [n for n in names if n in chosen], [n for n in names if n not in chosen]


def limit_record(options: Planning, of: str) -> dict[str, Any]:
    """The manifest's record of `--limit` (none without one): how many of what, how chosen."""
    if options.limit is None:
        return {}
    by = {
        "by": options.limit_by,
        **({"seed": options.seed} if options.limit_by == "random" else {}),
    }
    return {"limit": {"n": options.limit, "of": of, **by}}


def limit_said(options: Planning, of: str) -> str:
    """`2 concepts drawn at random (seed 0)` / `the first 2 concepts`: a limit, in words."""
    if options.limit_by == "first":
        return f"the first {options.limit} {of}"
    return f"{options.limit} {of} drawn at random (seed {options.seed})"
