"""The model runtime: where a model comes from, how it is loaded, and on which device it runs.

Every in-process scorer (masked LM, NLI classifier, ...) holds a ModelRuntime: it reads the
model's text (a name with its loading options: tacit.core.modelspec), resolves the device and
dtype, loads its tokenizer and weights (tacit.models.loading: revision, remote code, attention
kernel, 8/4-bit weights, a PEFT adapter, the head check, a damaged file named), can compile
the encoder, and describes itself for the manifest. What scoring changes (the batch size, as
memory allows) is the scorer's (tacit.models.hf_scorer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from tacit.core.choices import DTYPES, LOAD_DTYPES, check_choice, check_device
from tacit.core.errors import TacitError, first_line
from tacit.core.modelspec import ModelSpec
from tacit.core.option_names import option
from tacit.models import gguf
from tacit.models.huggingface import FAMILY, InProcessRecord
from tacit.models.loading import load_spread, load_weights, passed_on, placed, random_weights

TORCH_DTYPES: dict[str, torch.dtype] = dict(
    zip(DTYPES, (torch.float32, torch.float16, torch.bfloat16))
)


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
        raise TacitError(f"{option('--device')} {device}: no CUDA GPU is available here")
    if device == "mps" and not torch.backends.mps.is_available():
        raise TacitError(f"{option('--device')} mps: Apple's MPS backend is not available here")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype | str:
    """Parse --dtype (`auto`: the checkpoint's own, read off the weights once loaded); scores
    are always normalised in float32 whatever the weights are in."""
    chosen = check_choice(option("--dtype"), dtype, LOAD_DTYPES)
    return "auto" if chosen == "auto" else TORCH_DTYPES[chosen]


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
                f"{option('--compile')}: torch.compile failed for {name} on {device} "
                f"({first_line(err)}); run without {option('--compile')}"
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


def check_tokenizer_fits(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, where: str
) -> None:
    """Refuse a tokenizer with ids the model's input embedding has no row for: another model's
    tokenizer files beside these weights (a BERT with RoBERTa's) would end the first batch in
    an `index out of range` deep in the embedding, or, under the limit, score other words. An
    embedding larger than the tokenizer is common and fine (rows padded to a multiple of 64 or
    128, or kept for tokens the tokenizer does not add)."""
    try:
        embedding = model.get_input_embeddings()
    except (AttributeError, NotImplementedError):  # a model that does not say: nothing to check
        return
    rows = getattr(embedding, "num_embeddings", None)
    if not isinstance(rows, int):
        return
    ids = tokenizer.get_vocab().values()
    largest = max(ids, default=-1)
    if largest >= rows:
        raise TacitError(
            f"{where}: its tokenizer's ids go up to {largest:,} ({len(tokenizer):,} tokens) but "
            f"the model's input embedding has {rows:,} rows: the tokenizer is another model's "
            "(its files beside the weights?); give the model its own tokenizer"
        )


class ModelRuntime:
    """One model and its tokenizer on one device, loaded by `from_pretrained` conventions: what
    an in-process scorer runs on (tacit.models.hf_scorer.HFScorer holds one).

    Made in two steps, so that a scorer refuses a tokenizer before any weights load: the
    constructor reads the model's text, resolves the device and loads the tokenizer; `load`
    then loads the weights (device, dtype, revision, the head check, --compile, the longest
    input). `record` describes it for the manifest.
    """

    def __init__(
        self,
        name_or_path: str,
        *,
        kind: str,
        auto_class: Any,
        head: str,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "float32",
        tokenizer: PreTrainedTokenizerBase | None = None,
        compile: bool = False,
        device_map: str | None = None,
        max_memory: str | None = None,
        offload_folder: str | Path | None = None,
        model: PreTrainedModel | None = None,
        **load: Any,
    ) -> None:
        """`name_or_path`: a hub id or local directory, with its own loading options if any
        (`name,revision=step1000,dtype=bfloat16`: tacit.core.modelspec); `revision`, `dtype` and
        `load` (trust_remote_code, attn_implementation, peft, load_in_8bit, load_in_4bit) apply
        where it gives none. `kind`, `auto_class`, `head`: the scorer's kind of model, the
        transformers class that loads it and what its head is called (the head check).
        `model`: one already in memory."""
        self.name = name_or_path  # as given: how tables and the manifest name it
        self.kind, self.auto_class, self.head = kind, auto_class, head
        self.device_map, self.compiled = device_map, compile
        self._spread = (max_memory, offload_folder)
        self._given = model
        if model is not None:  # a model already in memory (from_model)
            if tokenizer is None:
                raise TacitError(f"{name_or_path}: a loaded model needs its tokenizer too")
            self.spec = ModelSpec(name_or_path)
            self.tokenizer = tokenizer
            first = next(model.parameters(), None)
            self.device = first.device if first is not None else torch.device("cpu")
            return
        self.spec = gguf.resolved(
            ModelSpec.parse(name_or_path).over({"revision": revision, "dtype": dtype, **load})
        )
        self.device = resolve_device(device)
        self.load_dtype = resolve_dtype(self.spec.dtype or "float32")
        self.tokenizer = tokenizer or FAMILY.tokenizer(self.spec)  # as the run plans with it

    def load(self) -> None:
        """Load the weights (a model handed in is kept as it is), and read what they say."""
        if self._given is not None:
            self.model = self._given
        elif self.spec.random_weights is not None:  # a control: its architecture, no weights
            if self.device_map is not None:
                raise TacitError(
                    f"{option('--model')} {self.spec.text}: a random-weight control is built "
                    f"on one device; drop {option('--device-map')}"
                )
            self.model = random_weights(self.auto_class, self.spec, self.load_dtype, self.device)
        elif self.device_map is None:
            self.model = load_weights(
                self.auto_class, self.spec, self.load_dtype, self.device, head=self.head
            )
        else:
            self.model = load_spread(self, self.spec, self.device_map, *self._spread)
        check_tokenizer_fits(self.model, self.tokenizer, self.spec.name)
        self.revision = self.spec.revision
        self.dtype = next(
            (p.dtype for p in self.model.parameters() if p.is_floating_point()), torch.float32
        )
        if self.compiled:
            compile_encoder(self.model)
        self.max_tokens = max_tokens(self.model, self.tokenizer)

    def compile_errors(self) -> AbstractContextManager[None]:
        """A torch.compile error in the block said in one line (compile_errors_explained)."""
        return compile_errors_explained(self.compiled, self.name, self.device)

    @property
    def resolved_revision(self) -> str | None:
        """The hub commit the weights came from; None for a local directory."""
        from tacit.hub.access import resolve_revision

        return resolve_revision(self.spec.name, self.revision)

    def record(self) -> InProcessRecord:
        """The model as given, with the revision asked for and the one resolved, and how it was
        loaded, for the manifest."""
        local = Path(self.spec.name)
        record: InProcessRecord = {
            "name": self.name,
            "kind": self.kind,
            "local_path": str(local.resolve()) if local.is_dir() else None,
            "class": type(self.model).__name__,
            "revision": self.revision,
            "resolved_revision": self.resolved_revision,
            "mask_token": self.tokenizer.mask_token,
            "device": str(self.device),
            "load": self.load_record(),
        }
        if self.spec.name != self.name:
            record["source"] = self.spec.name
        if self.device_map:
            record["device_map"] = placed(self.model.hf_device_map)  # type: ignore[arg-type]
        if self.spec.gguf_file is not None:
            record["gguf"] = gguf.record(self.spec)
        if self.spec.random_weights is not None:
            record["control"] = {
                "of": ModelSpec.parse(self.name).without("random_weights").text,
                "weights": "random",
                "seed": self.spec.random_weights,
                "how": "transformers' from_config after torch.manual_seed(seed), on the CPU",
            }
        return record

    def load_record(self) -> dict[str, Any]:
        """How the weights were loaded: their precision, the attention kernel, remote code, a
        quantization and a PEFT adapter (each as transformers names it)."""
        config = getattr(self.model, "config", None)
        return {
            "dtype": str(self.dtype).removeprefix("torch."),
            "dtype_asked": self.spec.dtype,
            "attn_implementation": getattr(config, "_attn_implementation", None),
            "trust_remote_code": bool(self.spec.trust_remote_code),
            "quantization": self.spec.quantization,
            "peft": self.spec.peft,
            **({"passed_on": passed} if (passed := passed_on(self.spec)) else {}),
        }
