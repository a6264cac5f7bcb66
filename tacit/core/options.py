"""The options every probe shares: how models are found, loaded and run (RunOptions).

Only the checks that need nothing else happen here; whether the machine has the device asked
for is checked when a run starts (tacit.models.runtime.resolve_device), before anything slow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
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
    check_at_least,
    check_choice,
    check_device,
)
from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec, parse_model_args
from tacit.core.option_names import on_command_line, option


@dataclass(frozen=True)
class OptionGroup:
    """Shared run options that a probe may do without (Probe.run_options names the groups it
    takes): their RunOptions fields, their command-line options, and why a probe that does
    without them refuses them."""

    fields: tuple[str, ...]
    flags: tuple[str, ...]
    reason: str


RUN_OPTION_GROUPS = {
    "vocab": OptionGroup(
        ("vocab_models", "vocab_file", "vocab_words"),
        ("vocab_model", "vocab_file", "vocab_words"),
        "it scores no shared vocabulary",
    ),
    "seed": OptionGroup(("seed",), ("seed",), "it draws nothing at random"),
    "resume": OptionGroup(
        ("resume",), ("resume",), "a rerun of the same command reuses what it computed"
    ),
}


@dataclass(frozen=True)
class RunOptions:
    """How models are found, loaded and run; shared by every probe.

    Attributes:
        vocab_models: models whose tokenizers also constrain the shared vocabulary.
        vocab_file: a word list the shared vocabulary must lie in.
        revision: branch, tag or commit for every model (hub models only).
        device: `auto` (CUDA, then MPS, then CPU), `cpu`, `cuda`, `cuda:N` or `mps`.
        dtype: the weights' precision (`auto`: the checkpoint's own); scores are always
            normalised in float32.
        batch_size: texts per forward pass, or `auto`: the largest that fits in the device's
            memory, found by halving from a large start (tacit.models.batching); results do
            not depend on it.
        compile: torch.compile the encoder.
        seed: seeds every random choice of the run (recorded in the manifest).
        progress: show progress bars.
        checkpoint: where scored chunks are kept while a run goes (the CLI: RUN_DIR/.partial).
        resume: reuse the chunks an interrupted run left in `checkpoint`.
        device_map: `auto` (or another accelerate device map name): spread a model larger than
            one device over the GPUs, the CPU and disk (transformers' big-model loading).
        max_memory: with device_map, the memory each device may take: "0=20GiB,cpu=60GiB".
        offload_folder: with device_map, where layers that fit nowhere else are kept on disk.
        model_args: loading options for every model (tacit.core.modelspec.LOAD_OPTIONS:
            trust_remote_code, attn_implementation, peft, load_in_8bit, ...), as a mapping or
            lm-evaluation-harness's `KEY=VALUE,...`; a model's own (`name,KEY=VALUE`) win.
        limit: probe only N of the concepts or items (what a probe counts: Probe.limit), for
            a quick first look; said in the summary and recorded, what it leaves out counted.
        limit_by: which N: `random` (a sample seeded by `seed`, so that a first look is not
            all "an ..." concepts) or `first` (in the probe's order).
        threads: CPU threads torch may use (None: torch's own choice); recorded either way.
        dry_run: plan the run and time a short calibration on each model, score nothing
            else, write nothing: what a run would cost (tacit.engine.estimate).
        dry_run_seconds: with dry_run, the seconds each model's calibration may take past its
            loading and warm-up (it also stops at 2,048 sentences); 0: the plan's counts alone,
            no model loaded.
        cache: a directory where models' answers are kept across runs (tacit.models.
            score_cache): a sentence scored by an earlier run with the same model is read, not
            scored again. None (the default): nothing is kept.
        vocab_words: which single-token words the shared vocabulary keeps: `all` (the
            paper's), `alpha` (letters only: no punctuation, digits or symbols) or `lower`
            (lower-case letters only: also no names or capitalised word pieces).
        log_to: log the run's summary to an experiment tracker, `wandb` or `mlflow`
            (tacit.results.tracking; the package is an extra: `pip install
            'tacit-probe[wandb]'`).
        control: `random-weights`: each model is followed by its control, the same
            architecture and tokenizer with weights drawn at random (torch seeded with `seed`),
            named `MODEL (random weights, seed S)` (tacit.models.controls).
    """

    vocab_models: Sequence[str] = ()
    vocab_file: str | Path | None = None
    revision: str | None = None
    device: str = "auto"
    dtype: LoadDtype = "float32"
    batch_size: int | Literal["auto"] = 32
    compile: bool = False
    seed: int = 0
    progress: bool = True
    checkpoint: Path | None = None
    resume: bool = False
    device_map: str | None = None
    max_memory: str | None = None
    offload_folder: str | Path | None = None
    model_args: Mapping[str, Any] = field(default_factory=dict)
    limit: int | None = None
    limit_by: LimitBy = "random"
    vocab_words: VocabWords = "all"
    threads: int | None = None
    dry_run: bool = False
    dry_run_seconds: float = 10.0
    cache: str | Path | None = None

    log_to: str | None = None
    control: Control | None = None

    def __post_init__(self) -> None:
        """Check what can be checked before anything slow is loaded."""
        check_batch_size(self.batch_size)
        check_at_least(option("--limit"), self.limit, 1)
        check_choice(option("--limit-by"), self.limit_by, LIMIT_BY)
        check_at_least(option("--threads"), self.threads, 1)
        check_choice(option("--vocab-words"), self.vocab_words, VOCAB_WORDS)
        if self.log_to is not None:
            check_choice(option("--log-to"), self.log_to, TRACKERS)
        if self.control is not None:
            check_choice(option("--control"), self.control, CONTROLS)
        if not isinstance(self.dry_run_seconds, int | float) or self.dry_run_seconds < 0:
            raise TacitError(
                f"{option('--dry-run-seconds')} {self.dry_run_seconds!r}: expected a number of "
                "seconds, 0 or more (0: the counts alone)"
            )
        if self.dry_run_seconds != RunOptions.dry_run_seconds and not self.dry_run:
            raise TacitError(
                f"{option('--dry-run-seconds')} says how long {option('--dry-run')} may time "
                f"each model: give it with {option('--dry-run')}"
            )
        object.__setattr__(self, "model_args", parse_model_args(self.model_args))
        for key in ("revision", "dtype"):
            if key in self.model_args:
                raise TacitError(
                    f"{option('--model-args')}: {key} has its own option, {option('--' + key)} "
                    f"(or give it one model: NAME,{key}=...)"
                )
        if "random_weights" in self.model_args:
            raise TacitError(
                f"{option('--model-args')}: random_weights is set by {option('--control')} "
                "random-weights, which runs each model's control beside it"
            )
        check_choice(option("--dtype"), self.dtype, LOAD_DTYPES)
        check_device(self.device)  # whether this machine has it: when a run starts
        if self.resume and self.checkpoint is None:
            needs = (
                "--out DIR: the run directory to continue"
                if on_command_line()
                else "checkpoint: where the interrupted run kept its chunks"
            )
            raise TacitError(f"{option('--resume')} needs {needs}")
        if self.device_map is None and (self.max_memory or self.offload_folder):
            raise TacitError(
                f"{option('--max-memory')} and {option('--offload-folder')} need "
                f"{option('--device-map')} auto"
            )
        if self.max_memory is not None:
            parse_max_memory(self.max_memory)
        object.__setattr__(self, "vocab_models", tuple(dict.fromkeys(self.vocab_models)))

    @classmethod
    def build(cls, options: RunOptions | None, overrides: Mapping[str, Any]) -> RunOptions:
        """`options` (or the defaults) with `overrides` applied; a keyword that is not an option
        is a one-line error naming it (a typo is never silently ignored)."""
        known = [f.name for f in fields(cls)]
        unknown = [key for key in overrides if key not in known]
        if unknown:
            raise TacitError(
                f"unknown run option(s) {', '.join(unknown)}: expected any of {', '.join(known)}"
            )
        return replace(options or cls(), **overrides)

    def refuse(self, probe: str, **unsupported: str) -> None:
        """Refuse options a probe cannot honour, each with the reason: `resume="..."`."""
        for name, reason in unsupported.items():
            if getattr(self, name) != getattr(RunOptions, name):
                option = "--" + name.replace("_", "-")
                raise TacitError(f"{probe}: {option} is not available: {reason}")

    def model_defaults(self) -> dict[str, Any]:
        """The loading options of every model of the run (a model's own win)."""
        return {"revision": self.revision, "dtype": self.dtype, **self.model_args}

    def model_spec(self, model: str) -> ModelSpec:
        """A model's text (`name[,KEY=VALUE...]`) with the run's options where it gives none."""
        return ModelSpec.parse(model).over(self.model_defaults())

    def recorded(self) -> dict[str, Any]:
        """The options as a manifest records them (not where checkpoints go, nor progress)."""
        return {
            "vocab_models": list(self.vocab_models),
            "vocab_file": str(self.vocab_file) if self.vocab_file is not None else None,
            "revision": self.revision,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "compile": self.compile,
            "seed": self.seed,
            **({"model_args": dict(self.model_args)} if self.model_args else {}),
            **({"limit": self.limit, "limit_by": self.limit_by} if self.limit is not None else {}),
            **({"vocab_words": self.vocab_words} if self.vocab_words != "all" else {}),
            **({"control": self.control} if self.control is not None else {}),
            **(
                {
                    "device_map": self.device_map,
                    "max_memory": self.max_memory,
                    "offload_folder": str(self.offload_folder) if self.offload_folder else None,
                }
                if self.device_map is not None
                else {}
            ),
        }


def check_batch_size(value: object) -> None:
    """A whole number of at least 1, or `auto`."""
    if value == "auto":
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TacitError(f"{option('--batch-size')} {value!r}: expected a whole number or auto")
    check_at_least(option("--batch-size"), value, 1)


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


def limit_record(options: RunOptions, of: str) -> dict[str, Any]:
    """The manifest's record of `--limit` (none without one): how many of what, how chosen."""
    if options.limit is None:
        return {}
    by = {
        "by": options.limit_by,
        **({"seed": options.seed} if options.limit_by == "random" else {}),
    }
    return {"limit": {"n": options.limit, "of": of, **by}}


def limit_said(options: RunOptions, of: str) -> str:
    """`2 concepts drawn at random (seed 0)` / `the first 2 concepts`: a limit, in words."""
    if options.limit_by == "first":
        return f"the first {options.limit} {of}"
    return f"{options.limit} {of} drawn at random (seed {options.seed})"
