"""The options every probe shares: how models are found, loaded and run (RunOptions).

Only the checks that need nothing else happen here; whether the machine has the device asked
for is checked when a run starts (tacit.models.runtime.resolve_device), before anything slow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from tacit.core.choices import DTYPES, Dtype, check_at_least, check_choice, check_device
from tacit.core.errors import TacitError


@dataclass(frozen=True)
class RunOptions:
    """How models are found, loaded and run; shared by every probe.

    Attributes:
        vocab_models: models whose tokenizers also constrain the shared vocabulary.
        vocab_file: a word list the shared vocabulary must lie in.
        revision: branch, tag or commit for every model (hub models only).
        device: `auto` (CUDA, then MPS, then CPU), `cpu`, `cuda`, `cuda:N` or `mps`.
        dtype: the weights' precision; scores are always normalised in float32.
        batch_size: texts per forward pass; results do not depend on it.
        compile: torch.compile the encoder.
        seed: seeds every random choice of the run (recorded in the manifest).
        progress: show progress bars.
        checkpoint: where scored chunks are kept while a run goes (the CLI: RUN_DIR/.partial).
        resume: reuse the chunks an interrupted run left in `checkpoint`.
        device_map: `auto` (or another accelerate device map name): spread a model larger than
            one device over the GPUs, the CPU and disk (transformers' big-model loading).
        max_memory: with device_map, the memory each device may take: "0=20GiB,cpu=60GiB".
        offload_folder: with device_map, where layers that fit nowhere else are kept on disk.
    """

    vocab_models: Sequence[str] = ()
    vocab_file: str | Path | None = None
    revision: str | None = None
    device: str = "auto"
    dtype: Dtype = "float32"
    batch_size: int = 32
    compile: bool = False
    seed: int = 0
    progress: bool = True
    checkpoint: Path | None = None
    resume: bool = False
    device_map: str | None = None
    max_memory: str | None = None
    offload_folder: str | Path | None = None

    def __post_init__(self) -> None:
        """Check what can be checked before anything slow is loaded."""
        check_at_least("--batch-size", self.batch_size, 1)
        check_choice("--dtype", self.dtype, DTYPES)
        check_device(self.device)  # whether this machine has it: when a run starts
        if self.resume and self.checkpoint is None:
            raise TacitError("--resume needs --out DIR: the run directory to continue")
        if self.device_map is None and (self.max_memory or self.offload_folder):
            raise TacitError("--max-memory and --offload-folder need --device-map auto")
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
            **({"device_map": self.device_map, "max_memory": self.max_memory,
                "offload_folder": str(self.offload_folder) if self.offload_folder else None}
               if self.device_map is not None else {}),
        }  # fmt: skip


def parse_max_memory(text: str) -> dict[int | str, int | str]:
    """'0=20GiB,cpu=60GiB' -> {0: '20GiB', 'cpu': '60GiB'} (accelerate's max_memory)."""
    memory: dict[int | str, int | str] = {}
    for item in text.split(","):
        device, equals, amount = item.strip().partition("=")
        if not equals or not device or not amount:
            raise TacitError(
                f"--max-memory {text!r}: expected DEVICE=AMOUNT pairs, e.g. 0=20GiB,cpu=60GiB"
            )
        memory[int(device) if device.isdigit() else device] = (
            int(amount) if amount.isdigit() else amount  # plain bytes, or '20GiB'
        )
    return memory
