"""The model runtime: where a model comes from, how it is loaded, and on which device it runs.

Every model family (masked LM, NLI classifier, ...) is a ModelRuntime: it resolves the device
and dtype, checks that a local path really is a model before transformers says something
cryptic, loads with `from_pretrained` conventions (hub name or local directory, `revision`),
refuses a checkpoint whose head is missing (its predictions would be random), names a damaged
file of a model (cut short by an interrupted download or a full disk) instead of a traceback,
can compile the encoder, and describes itself for the manifest.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from safetensors import safe_open
from transformers import AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from tacit.core.errors import TacitError, first_line, shorten
from tacit.core.options import DTYPES, check_choice, check_device

if TYPE_CHECKING:
    from tacit.core.options import RunOptions

TORCH_DTYPES = dict(zip(DTYPES, (torch.float32, torch.float16, torch.bfloat16)))
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


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


def check_model_source(name_or_path: str, *, config: bool = True, tokenizer: bool = True) -> None:
    """Fail with a message a user can act on when `name_or_path` cannot be a model: a path that
    does not exist (and is not a hub id either), a directory without the config.json a model
    needs, or without tokenizer files. Hub ids pass: from_pretrained reports on them."""
    path = Path(name_or_path).expanduser()
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as err:  # a name too long for the file system, a directory we may not read
        raise TacitError(f"--model {name_or_path}: cannot read it ({err.strerror})") from None
    if is_dir:
        missing = [] if not config or (path / "config.json").is_file() else ["config.json"]
        if tokenizer and not any((path / f).is_file() for f in TOKENIZER_FILES):
            missing.append("tokenizer files (" + ", ".join(TOKENIZER_FILES[:3]) + ", ...)")
        if missing:
            inside = sorted(p.name for p in path.iterdir())[:5]
            raise TacitError(
                f"--model {name_or_path}: not a model directory: no {' and no '.join(missing)} "
                f"in it (it holds {', '.join(inside) or 'nothing'}"
                f"{', ...' if len(inside) == 5 else ''})"
            )
        return
    if exists:
        raise TacitError(f"--model {name_or_path}: a file, not a model directory")
    looks_local = name_or_path.startswith((".", "/", "~")) or name_or_path.count("/") > 1
    if looks_local or not _HUB_ID.match(name_or_path):
        raise TacitError(
            f"--model {name_or_path}: no such directory (and not a Hugging Face hub id "
            "such as roberta-base or org/name)"
        )


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' own warnings and progress bars while loading: tacit reports what
    matters itself (a missing head is an error, not a warning in a table), and a user error
    stays one line."""
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _not_found(name_or_path: str, err: Exception) -> TacitError:
    """A loading error in one line; a hub id that cannot be reached says so plainly."""
    message = first_line(err)
    if not Path(name_or_path).exists() and ("not a valid model identifier" in message
                                            or "huggingface.co" in message):  # fmt: skip
        return TacitError(
            f"--model {name_or_path}: not a local directory, and the Hugging Face hub does not "
            f"have it or cannot be reached ({message})"
        )
    return TacitError(f"cannot load {name_or_path!r}: {message}")


def _model_dir(name_or_path: str, revision: str | None) -> Path | None:
    """The local directory, or the hub cache's snapshot; None if neither (no network call)."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(name_or_path, "config.json", revision=revision)
    except Exception:  # not a hub id, or no cache: nothing to look at
        return None
    return Path(cached).parent if isinstance(cached, str) else None


def _file_problem(file: Path) -> str | None:
    """Why a model's file cannot be read whole: JSON that does not parse, a safetensors header
    not covering the file, a torch zip cut short or failing a checksum; else None."""
    try:
        if file.suffix == ".json":
            json.loads(file.read_text(encoding="utf-8"))
        elif file.suffix == ".safetensors":
            with safe_open(str(file), framework="pt"):
                pass
        elif file.suffix == ".bin":
            with open(file, "rb") as handle:
                if handle.read(2) != b"PK":  # torch's legacy format: nothing to check
                    return None
                bad = zipfile.ZipFile(handle).testzip()  # BadZipFile when cut short
            return f"member {bad} fails its checksum" if bad else None
    except OSError:  # not the file's content: the loader's own error names it
        return None
    except Exception as err:  # any reader's error means the file cannot be read
        return shorten(first_line(err), 100)
    return None


def damaged_file(name_or_path: str, revision: str | None) -> TacitError | None:
    """After loading failed: the model's first file that is damaged or cut short, in one line
    saying what to do; None when every file reads whole (the failure is about something else)."""
    directory = _model_dir(name_or_path, revision)
    try:
        files = sorted(directory.iterdir()) if directory is not None else []
    except OSError:  # an unreadable directory: the loader's own error says so
        return None
    found = [(file, problem) for file in files if (problem := _file_problem(file))]
    if directory is None or not found:
        return None
    if directory.parent.name == "snapshots":  # the hub cache: models--org--name/snapshots/
        fix = (f"delete {directory.parents[1]} (the model's folder in the Hugging Face cache) "
               "and run again to download it anew")  # fmt: skip
    else:
        fix = f"copy, download or save the model into {directory} again"
    file, problem = found[0]
    return TacitError(f"--model {name_or_path}: {file} is damaged or cut short ({problem}); {fix}")


def load_tokenizer(name_or_path: str, *, revision: str | None = None) -> PreTrainedTokenizerBase:
    """Load a tokenizer the way `from_pretrained` does: hub name or local directory (a
    tokenizer saved on its own, without a model's config.json, will do)."""
    check_model_source(name_or_path, config=False)
    try:
        with quiet_transformers():
            return AutoTokenizer.from_pretrained(name_or_path, revision=revision)
    except Exception as err:
        _explain_load_error(name_or_path, revision, err)
        raise


def _explain_load_error(name_or_path: str, revision: str | None, err: Exception) -> None:
    """Raise one line for a failed load: a damaged file named, or a hub id or path that cannot
    be loaded; return (the caller re-raises `err`) when it is neither, a bug not the user's."""
    if (damaged := damaged_file(name_or_path, revision)) is not None:
        raise damaged from err
    if isinstance(err, (OSError, ValueError)):
        raise _not_found(name_or_path, err) from err


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
        _explain_load_error(name_or_path, revision, err)
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
    ) -> None:
        if batch_size < 1:
            raise TacitError(f"--batch-size {batch_size}: must be at least 1")
        self.name = name_or_path
        self.revision = revision
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype)
        self.batch_size = batch_size
        self.tokenizer = tokenizer or load_tokenizer(name_or_path, revision=revision)
        self.check_tokenizer()
        self.device_map = device_map
        if device_map is None:
            model = load_with_head(self.auto_class, name_or_path, revision, self.dtype,
                                   head=self.head)  # fmt: skip
            self.model: PreTrainedModel = model.to(self.device)  # type: ignore[arg-type]
        else:
            self.model = load_spread(self, name_or_path, device_map, max_memory, offload_folder)
        self.compiled = compile
        if compile:
            compile_encoder(self.model)
        self.max_tokens = max_tokens(self.model, self.tokenizer)

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

    def record(self) -> dict[str, Any]:
        """The model as given, with the revision asked for and the one resolved, for the
        manifest."""
        local = Path(self.name)
        return {
            "name": self.name,
            "kind": self.kind,
            "local_path": str(local.resolve()) if local.is_dir() else None,
            "class": type(self.model).__name__,
            "revision": self.revision,
            "resolved_revision": self.resolved_revision,
            "mask_token": self.tokenizer.mask_token,
            "device": str(self.device),
            **(
                {"device_map": _placed(self.model.hf_device_map)}  # type: ignore[arg-type]
                if self.device_map
                else {}
            ),
        }
