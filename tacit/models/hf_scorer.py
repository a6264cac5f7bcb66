"""The in-process scorers' base: a transformers model run in this process, on its
ModelRuntime (tacit.models.runtime), answering what the probes ask (tacit.models.base). Each
kind subclasses it: masked (tacit.models.masked), causal (tacit.models.causal), seq2seq
(tacit.models.seq2seq), NLI classifier (tacit.models.classifier); the family that claims such
models and picks the kind is tacit.models.huggingface.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec
from tacit.core.option_names import option
from tacit.core.options import BATCH_SIZE
from tacit.models.base import HOOKS, Scorer, VocabScores
from tacit.models.batching import starting_batch_size
from tacit.models.huggingface import InProcessRecord
from tacit.models.runtime import ModelRuntime

if TYPE_CHECKING:
    import torch
    from tqdm.auto import tqdm
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from tacit.core.options import RunOptions

HFScorerT = TypeVar("HFScorerT", bound="HFScorer")


class HFScorer(Scorer):
    """A Scorer that runs a transformers model in this process, on its ModelRuntime (the model,
    its tokenizer and device: `runtime`): each kind's vocabulary hook gives logits over the
    model's whole vocabulary on the device, reduced there.

    Subclasses name their `kind`, `auto_class` (which head transformers loads) and `head` (what
    the head check calls it), and refuse a tokenizer they cannot work with (`check_tokenizer`,
    before any weights load).
    """

    hooks: ClassVar[Mapping[str, str]] = {**HOOKS, "vocab": "_vocab_logits"}
    auto_class: ClassVar[Any] = None
    head: ClassVar[str] = ""
    takes_chat_template: ClassVar[bool] = False  # the loading option chat_template (causal LMs)

    def __init__(self, name_or_path: str, *, batch_size: int | str = 32, **runtime: Any) -> None:
        """`name_or_path` and `runtime`: as ModelRuntime takes them (the model's text, device,
        dtype, loading options, or a `model` and `tokenizer` in memory). `batch_size="auto"`
        finds the largest that fits."""
        BATCH_SIZE.validate(batch_size)  # as the run option's declaration checks it
        self.name = name_or_path  # as given: how tables and the manifest name it
        self.runtime = ModelRuntime(
            name_or_path, kind=self.kind, auto_class=self.auto_class, head=self.head, **runtime
        )
        if self.spec.chat_template is not None and not self.takes_chat_template:
            raise TacitError(
                f"{option('--model')} {self.spec.text}: chat_template applies to causal "
                f"(decoder-only) instruct models; this is a {self.kind} model"
            )
        self.check_tokenizer()
        self.runtime.load()
        # as it starts: smaller where memory runs out (tacit.models.batching)
        self.batch_size, self.auto_batch = starting_batch_size(batch_size, self.device)

    @classmethod
    def from_model(
        cls: type[HFScorerT],
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        name: str | None = None,
        batch_size: int | str = 32,
    ) -> HFScorerT:
        """A scorer of a model already in memory (one being trained, one loaded with options
        tacit does not know), on the model's own device and in its own precision. It is put in
        evaluation mode (dropout off), which the caller may undo after scoring; it is not
        checked for a missing head, as a model loaded by name is."""
        label = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        model.eval()
        return cls(label, tokenizer=tokenizer, batch_size=batch_size, model=model)

    @classmethod
    def from_options(cls, name_or_path: str, options: RunOptions, **extra: Any) -> HFScorer:
        """Load as the run's options say (revision, dtype and the other loading options where
        the model's own text gives none; device, batch size, compile, device map)."""
        return cls(
            name_or_path,
            device=options.device,
            batch_size=options.batch_size,
            compile=options.compile,
            device_map=options.device_map,
            max_memory=options.max_memory,
            offload_folder=options.offload_folder,
            **options.model_defaults(),
            **extra,
        )

    def check_tokenizer(self) -> None:
        """Refuse a tokenizer this family cannot work with (overridden where it matters)."""

    @property
    def model(self) -> PreTrainedModel:
        return self.runtime.model

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        return self.runtime.tokenizer

    @property
    def device(self) -> torch.device:
        return self.runtime.device

    @property
    def spec(self) -> ModelSpec:
        """The model's text read, with the run's loading options where it gives none."""
        return self.runtime.spec

    @property
    def max_tokens(self) -> int:  # type: ignore[override]
        return self.runtime.max_tokens

    def record(self) -> InProcessRecord:
        """The runtime's record (tacit.models.runtime.ModelRuntime.record), and whether the
        batch size was searched for."""
        record = self.runtime.record()
        if self.auto_batch:
            record["batch_size_auto"] = True
        return record

    def _vocab_logits(
        self, texts: list[str], progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[tuple[np.ndarray, torch.Tensor, int]]:
        """(indices into `texts`, float32 logits over the whole vocabulary at each blank, how
        many of them were cut to fit) for batches of the distinct `texts`."""
        raise NotImplementedError

    def _vocab_scores(
        self, texts: list[str], vocab_ids: np.ndarray, progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[VocabScores]:
        import torch

        vocab_t = torch.as_tensor(vocab_ids, device=self.device)
        for indices, logits, cut in self._vocab_logits(texts, progress, cut_to_fit):
            yield indices, logits[:, vocab_t], torch.logsumexp(logits, dim=-1), cut

    def _logsumexp(self, scores: Any) -> Any:
        import torch

        return torch.logsumexp(scores, dim=-1)

    def _pooled(
        self,
        encoded: list[list[int]],
        forward: Callable[[np.ndarray], torch.Tensor],
        progress: bool | tqdm,
    ) -> np.ndarray:
        """[texts x hidden] float32: `forward(indices)` (one pooled row per text of a batch)
        run over the token lists in batches, longest first, each row put back in its place."""
        import torch

        from tacit.models.base import progress_bar
        from tacit.models.batching import longest_first_batches

        out = torch.empty(
            (len(encoded), self.model.config.hidden_size), dtype=torch.float32, device=self.device
        )
        with (
            progress_bar(progress, len(encoded), f"encoding {self.name}", "text") as bar,
            torch.inference_mode(),
        ):
            for indices, states in longest_first_batches([len(e) for e in encoded], self, forward):
                out[torch.as_tensor(indices, device=self.device)] = states
                bar.update(len(indices))
        return out.cpu().numpy()

    def _is_lone_space(self, token_id: int) -> bool:
        """Is this a token of whitespace alone (SentencePiece's `▁` beside a placeholder for
        the blank, which belongs to the word in the blank, not to the text around it)?"""
        if token_id in self.tokenizer.all_special_ids:
            return False
        token = str(self.tokenizer.convert_ids_to_tokens(token_id))
        return self.tokenizer.convert_tokens_to_string([token]).strip() == ""

    def _text_tokens(self, texts: list[str], *, special: bool, added: int = 0) -> Any:
        """Each text tokenised with its tokens' character offsets (a BatchEncoding:
        `input_ids`, `offset_mapping`, `word_ids(i)`), with the special tokens the tokenizer
        puts around a text where `special` ([CLS] ... [SEP]); a text longer than the model
        takes, with the `added` tokens the scorer puts before it (a causal LM's start token),
        is a one-line error."""
        from tacit.core.errors import shorten

        if not getattr(self.tokenizer, "is_fast", False):
            raise TacitError(
                f"{self.name}: scoring each token needs a fast tokenizer (for the tokens' "
                "character offsets); this one is not"
            )
        encoded = self.tokenizer(texts, add_special_tokens=special, return_offsets_mapping=True)
        for text, ids in zip(texts, encoded["input_ids"]):
            if len(ids) + added > self.max_tokens:
                raise TacitError(
                    f"{shorten(repr(text))} is {len(ids) + added} tokens: longer than "
                    f"{self.name} takes ({self.max_tokens})"
                )
        return encoded
