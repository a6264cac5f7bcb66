"""The model runtime: where a model comes from, how it is loaded, and on which device it runs.

Every model family (masked LM, NLI classifier, ...) is a ModelRuntime: it resolves the device
and dtype, checks that a local path really is a model before transformers says something
cryptic, loads with `from_pretrained` conventions (hub name or local directory, `revision`),
refuses a checkpoint whose head is missing (its predictions would be random), names a damaged
file of a model (tacit.vocab.tokenizers) instead of a traceback, can compile the encoder, and
describes itself for the manifest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from tacit.core.choices import DTYPES, check_choice, check_device
from tacit.core.errors import TacitError, first_line
from tacit.vocab.tokenizers import (
    check_model_source,
    explain_load_error,
    load_tokenizer,
    quiet_transformers,
)

if TYPE_CHECKING:
    from tacit.core.manifest import ModelRecord
    from tacit.core.options import RunOptions

TORCH_DTYPES = dict(zip(DTYPES, (torch.float32, torch.float16, torch.bfloat16)))


def resolve_device(device: str = "auto") -> torch.device:
    """`auto` picks CUDA, then Apple's MPS, then the CPU."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    check_device(device)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TacitError(f"--device {device}: no CUDA GPU is available here")
    if device == "mps" and not torch.backends.mps.is_available():
        raise TacitError("--device mps: Apple's MPS backend is not available here")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    """Parse --dtype; scores are always normalised in float32 whatever the weights are in."""
    return TORCH_DTYPES[check_choice("--dtype", dtype, DTYPES)]


def resolve_revision(name_or_path: str, revision: str | None) -> str | None:
    """The commit a hub model was loaded from, read off the cache's snapshot path.

    None for a local directory, or when the cache does not say (never a network call).
    """
    if Path(name_or_path).is_dir():
        return None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(name_or_path, "config.json", revision=revision)
    if not isinstance(cached, str):
        return None
    match = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", cached)
    return match.group(1) if match else None


def load_with_head(
    auto_class: Any,
    name_or_path: str,
    revision: str | None,
    dtype: torch.dtype,
    *,
    head: str,
    **placement: Any,
) -> PreTrainedModel:
    """`auto_class.from_pretrained`, refusing a checkpoint whose `head` head is missing: it
    would be initialised at random, and so would every prediction."""
    check_model_source(name_or_path, tokenizer=False)
    try:
        with quiet_transformers():
            model, info = auto_class.from_pretrained(
                name_or_path, revision=revision, dtype=dtype, output_loading_info=True,
                **placement,
            )  # fmt: skip
    except Exception as err:  # a damaged weights file: SafetensorError, torch.load's errors
        explain_load_error(name_or_path, revision, err)
        raise
    prefix = model.base_model_prefix + "."
    head_missing = sorted(k for k in info["missing_keys"] if not k.startswith(prefix))
    if head_missing:
        raise TacitError(
            f"{name_or_path!r} has no trained {head} head (missing {', '.join(head_missing[:3])}"
            f"{', ...' if len(head_missing) > 3 else ''}): its predictions would be random"
        )
    return model.eval()


def load_spread(
    runtime: Any,
    name_or_path: str,
    device_map: str,
    max_memory: str | None,
    offload_folder: str | Path | None,
) -> PreTrainedModel:
    """A model spread over devices by accelerate's big-model loading; inputs then go to the
    device of its first part (runtime.device), and accelerate's hooks move activations on."""
    from tacit.core.options import parse_max_memory

    try:
        import accelerate  # noqa: F401  (transformers needs it for a device map)
    except ImportError:
        raise TacitError(
            "--device-map needs accelerate: pip install 'tacit[dist]' (or accelerate)"
        ) from None
    model = load_with_head(
        runtime.auto_class, name_or_path, runtime.revision, runtime.dtype, head=runtime.head,
        device_map=device_map, max_memory=parse_max_memory(max_memory) if max_memory else None,
        offload_folder=str(offload_folder) if offload_folder else None,
    )  # fmt: skip
    placed: dict[str, Any] = model.hf_device_map  # type: ignore[assignment]
    first = next(iter(placed.values()))
    runtime.device = torch.device(
        f"cuda:{first}" if isinstance(first, int) else "cpu" if first == "disk" else first
    )
    return model


def _placed(device_map: dict[str, Any]) -> dict[str, int]:
    """How many of a spread model's modules went to each device (the manifest's summary)."""
    counts: dict[str, int] = {}
    for device in device_map.values():
        counts[str(device)] = counts.get(str(device), 0) + 1
    return counts


def compile_encoder(model: PreTrainedModel) -> None:
    """Compile the encoder's forward pass with torch.compile (dynamic shapes: one graph serves
    every batch size and prompt length). Hooks on the encoder stay outside the graph. On a
    2-core CPU the compiled encoder measured no faster than eager (matrix products are 88% of
    its time there), so it is an option for long GPU runs, never the default."""
    base = model.base_model
    base.forward = torch.compile(base.forward, dynamic=True)


@contextmanager
def compile_errors_explained(compiled: bool, name: str, device: torch.device) -> Iterator[None]:
    """Turn an error torch.compile raised (no C++ compiler, an unsupported operation) into a
    one-line TacitError that says to run without --compile."""
    try:
        yield
    except Exception as err:
        from torch._dynamo.exc import TorchDynamoException

        if compiled and isinstance(err, TorchDynamoException):
            raise TacitError(
                f"--compile: torch.compile failed for {name} on {device} ({first_line(err)}); "
                "run without --compile"
            ) from err
        raise


def max_tokens(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> int:
    """The longest input, special tokens included, that the model's positions allow (RoBERTa's
    positions start after its padding index, so roberta-base takes 512 of its 514)."""
    limit = getattr(model.config, "max_position_embeddings", None) or 10**9
    padding_idx = getattr(getattr(model.base_model, "embeddings", None), "padding_idx", None)
    if padding_idx is not None:
        limit -= padding_idx + 1
    return min(limit, tokenizer.model_max_length or limit)


RuntimeT = TypeVar("RuntimeT", bound="ModelRuntime")


class ModelRuntime:
    """One model and its tokenizer on one device, loaded by `from_pretrained` conventions.

    Subclasses name their `auto_class` (which head) and `kind`; they get device, dtype,
    revision, the head check, --compile, the longest input and the manifest record here.
    """

    kind: ClassVar[str] = ""
    auto_class: ClassVar[Any] = None
    head: ClassVar[str] = ""

    def __init__(
        self,
        name_or_path: str,
        *,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "float32",
        batch_size: int = 32,
        tokenizer: PreTrainedTokenizerBase | None = None,
        compile: bool = False,
        device_map: str | None = None,
        max_memory: str | None = None,
        offload_folder: str | Path | None = None,
        model: PreTrainedModel | None = None,
    ) -> None:
        if batch_size < 1:
            raise TacitError(f"--batch-size {batch_size}: must be at least 1")
        self.name = name_or_path
        self.revision = revision
        self.batch_size = batch_size
        self.device_map = device_map
        self.compiled = compile
        if model is not None:  # a model already in memory (from_model)
            if tokenizer is None:
                raise TacitError(f"{name_or_path}: a loaded model needs its tokenizer too")
            self.tokenizer = tokenizer
            self.check_tokenizer()
            self.model = model
            first = next(model.parameters(), None)
            self.device = first.device if first is not None else torch.device("cpu")
            self.dtype = first.dtype if first is not None else torch.float32
        else:
            self.device = resolve_device(device)
            self.dtype = resolve_dtype(dtype)
            self.tokenizer = tokenizer or load_tokenizer(name_or_path, revision=revision)
            self.check_tokenizer()
            if device_map is None:
                loaded = load_with_head(self.auto_class, name_or_path, revision, self.dtype,
                                        head=self.head)  # fmt: skip
                self.model = loaded.to(self.device)  # type: ignore[arg-type]
            else:
                self.model = load_spread(self, name_or_path, device_map, max_memory,
                                         offload_folder)  # fmt: skip
        if compile:
            compile_encoder(self.model)
        self.max_tokens = max_tokens(self.model, self.tokenizer)

    @classmethod
    def from_model(
        cls: type[RuntimeT],
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        name: str | None = None,
        batch_size: int = 32,
    ) -> RuntimeT:
        """A scorer of a model already in memory (one being trained, one loaded with options
        tacit does not know), on the model's own device and in its own precision. It is put in
        evaluation mode (dropout off), which the caller may undo after scoring; it is not
        checked for a missing head, as a model loaded by name is."""
        label = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        model.eval()
        return cls(label, tokenizer=tokenizer, batch_size=batch_size, model=model)

    @classmethod
    def from_options(cls, name_or_path: str, options: RunOptions, **extra: Any) -> ModelRuntime:
        """Load as the run's options say (revision, device, dtype, batch size, compile, device
        map)."""
        return cls(
            name_or_path, revision=options.revision, device=options.device, dtype=options.dtype,
            batch_size=options.batch_size, compile=options.compile,
            device_map=options.device_map, max_memory=options.max_memory,
            offload_folder=options.offload_folder, **extra,
        )  # fmt: skip

    def check_tokenizer(self) -> None:
        """Refuse a tokenizer this family cannot work with (overridden where it matters)."""

    @property
    def resolved_revision(self) -> str | None:
        """The hub commit the weights came from; None for a local directory."""
        return resolve_revision(self.name, self.revision)

    def record(self) -> ModelRecord:
        """The model as given, with the revision asked for and the one resolved, for the
        manifest."""
        local = Path(self.name)
        record: ModelRecord = {
            "name": self.name,
            "kind": self.kind,
            "local_path": str(local.resolve()) if local.is_dir() else None,
            "class": type(self.model).__name__,
            "revision": self.revision,
            "resolved_revision": self.resolved_revision,
            "mask_token": self.tokenizer.mask_token,
            "device": str(self.device),
        }
        if self.device_map:
            record["device_map"] = _placed(self.model.hf_device_map)  # type: ignore[arg-type]
        return record
