"""MaskedLMScorer: one masked LM on one device, scoring the <mask> of many prompts at once.

Prompts carry the literal placeholder `<mask>`; the scorer puts the model's own mask token
there. Prompts are de-duplicated, sorted by token length and batched; the encoder runs on the
batch and the LM head runs only on the mask rows (a forward hook hands the head just those
rows, which works for any `*ForMaskedLM` whose head is position-wise; in BERT-built encoders
the rows are cut before the last layer's feed-forward block, see _mask_rows_hook). All
reductions (ranks, probabilities, top words) happen on the device; only small per-prompt
results come back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
import torch
from huggingface_hub import try_to_load_from_cache
from tqdm.auto import tqdm
from transformers import AutoModelForMaskedLM, PreTrainedModel, PreTrainedTokenizerBase

from tacit.errors import TacitError, first_line
from tacit.vocab.shared import load_tokenizer, quiet_transformers

MASK = "<mask>"
OUT_OF_MEMORY = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)  # torch < 2.5
T = TypeVar("T")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def resolve_device(device: str = "auto") -> torch.device:
    """`auto` picks CUDA, then Apple's MPS, then the CPU."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if device not in ("cpu", "cuda", "mps") and not device.startswith("cuda:"):
        raise TacitError(f"--device {device!r}: expected auto, cpu, cuda, cuda:N or mps")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TacitError(f"--device {device}: no CUDA GPU is available here")
    if device == "mps" and not torch.backends.mps.is_available():
        raise TacitError("--device mps: Apple's MPS backend is not available here")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    """Parse --dtype; scores are always normalised in float32 whatever the weights are in."""
    if dtype not in DTYPES:
        raise TacitError(f"--dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    return DTYPES[dtype]


def resolve_revision(name_or_path: str, revision: str | None) -> str | None:
    """The commit a hub model was loaded from, read off the cache's snapshot path.

    None for a local directory, or when the cache does not say (never a network call).
    """
    if Path(name_or_path).is_dir():
        return None
    cached = try_to_load_from_cache(name_or_path, "config.json", revision=revision)
    if not isinstance(cached, str):
        return None
    match = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", cached)
    return match.group(1) if match else None


def load_with_head(
    auto_class: type,
    name_or_path: str,
    revision: str | None,
    dtype: torch.dtype,
    *,
    what: str,
    head: str,
) -> PreTrainedModel:
    """`auto_class.from_pretrained` of a `what` (masked LM), refusing a checkpoint whose `head`
    head is missing: it would be initialised at random, and so would every prediction."""
    try:
        with quiet_transformers():
            model, info = auto_class.from_pretrained(
                name_or_path, revision=revision, dtype=dtype, output_loading_info=True
            )
    except (OSError, ValueError) as err:
        raise TacitError(f"cannot load the {what} {name_or_path!r}: {first_line(err)}") from err
    prefix = model.base_model_prefix + "."
    head_missing = sorted(k for k in info["missing_keys"] if not k.startswith(prefix))
    if head_missing:
        raise TacitError(
            f"{name_or_path!r} has no trained {head} head (missing {', '.join(head_missing[:3])}"
            f"{', ...' if len(head_missing) > 3 else ''}): its predictions would be random"
        )
    return model.eval()


def compile_encoder(model: PreTrainedModel) -> None:
    """Compile the encoder's forward pass with torch.compile (dynamic shapes: one graph serves
    every batch size and prompt length). Hooks on the encoder stay outside the graph, so the
    LM head still sees only the mask rows. Compiling costs about a minute per process; on a
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


class Batched(Protocol):
    """A model that runs in batches on a device (MaskedLMScorer, NLIClassifier)."""

    name: str
    device: torch.device
    batch_size: int


def longest_first_batches(
    lengths: Sequence[int], model: Batched, run: Callable[[np.ndarray], T]
) -> Iterator[tuple[np.ndarray, T]]:
    """Yield (item indices, run(indices)) for batches of `model.batch_size` items of similar
    length, longest first, so that a batch size too large for the device shows at once: on
    running out of device memory `model.batch_size` is halved (an error at 1) and the batch run
    again. Results do not depend on the batch size; `model.batch_size` keeps the size that
    fitted, for the manifest."""
    order = np.argsort([-n for n in lengths], kind="stable")
    start = 0
    while start < len(order):
        indices = order[start : start + model.batch_size]
        fitted = False
        try:
            result = run(indices)
            fitted = True
        except OUT_OF_MEMORY as err:
            if model.batch_size == 1:
                raise TacitError(
                    f"{model.name}: out of memory on {model.device} even one item at a time; "
                    "try --dtype bfloat16 or another device"
                ) from err
        if not fitted:  # out of the except block, the failed batch's tensors are freed
            model.batch_size //= 2
            if model.device.type == "cuda":
                torch.cuda.empty_cache()
            continue
        yield indices, result
        start += len(indices)


@dataclass(frozen=True)
class TargetScores:
    """Scores of (prompt, target) pairs, as numpy arrays aligned with the pairs given.

    rank: 1 + the number of shared-vocabulary words scored strictly higher than the target.
    target_prob: the target's probability under the softmax over the model's whole vocabulary.
    target_prob_shared: the same renormalised over the shared vocabulary.
    top_index, top_prob: the top-k shared-vocabulary positions of each pair's prompt, and their
        probabilities under the whole-vocabulary softmax.
    """

    rank: np.ndarray
    target_prob: np.ndarray
    target_prob_shared: np.ndarray
    top_index: np.ndarray
    top_prob: np.ndarray


@dataclass(frozen=True)
class ScoredBatch:
    """One batch of distinct prompt texts, scored.

    rows: positions (in the prompts given) of every prompt whose text is in this batch.
    batch_rows: for each of `rows`, the row of its text in `shared` and `log_z`.
    shared: [texts x shared vocabulary] float32 logits at the mask, on the device.
    log_z: [texts] logsumexp of the logits over the model's whole vocabulary: `shared - log_z`
        are log-probabilities under the whole-vocabulary softmax.
    """

    rows: torch.Tensor
    batch_rows: torch.Tensor
    shared: torch.Tensor
    log_z: torch.Tensor


class MaskedLMScorer:
    """A masked LM with its tokenizer on a device, scoring the <mask> of prompts in batches.

    Example:
        >>> scorer = MaskedLMScorer("roberta-base")  # doctest: +SKIP
        >>> scores = scorer.score_targets(["A <mask> has fur."], [vocab.index("bear")],
        ...                               vocab.token_ids["roberta-base"])  # doctest: +SKIP
    """

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
    ) -> None:
        if batch_size < 1:
            raise TacitError(f"--batch-size {batch_size}: must be at least 1")
        self.name = name_or_path
        self.revision = revision
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype)
        self.batch_size = batch_size
        self.tokenizer = tokenizer or load_tokenizer(name_or_path, revision=revision)
        if self.tokenizer.mask_token is None:
            raise TacitError(f"the tokenizer of {name_or_path!r} has no mask token")
        self.model = load_with_head(
            AutoModelForMaskedLM, name_or_path, revision, self.dtype, what="masked LM",
            head="masked-LM",
        ).to(self.device)  # fmt: skip
        self.compiled = compile
        if compile:
            compile_encoder(self.model)
        self.max_tokens = max_tokens(self.model, self.tokenizer)
        self.last_cut = 0  # prompts cut to fit by the last shared_scores(cut_to_fit=True)
        self._rows: torch.Tensor | None = None

    @property
    def resolved_revision(self) -> str | None:
        """The hub commit the weights came from; None for a local directory."""
        return resolve_revision(self.name, self.revision)

    def _mask_rows_of(self, hidden: torch.Tensor) -> torch.Tensor:
        """[batch x tokens x hidden] -> [1 x masks x hidden]: the rows at `self._rows`."""
        return hidden[self._rows[:, 0], self._rows[:, 1]].unsqueeze(0)

    def _keep_mask_rows(self, module, inputs, output):
        """Forward hook on the encoder: hand the LM head only the hidden states at the mask."""
        output.last_hidden_state = self._mask_rows_of(output.last_hidden_state)
        return output

    def _keep_mask_rows_of_attention(self, module, inputs, output):
        """Forward hook on the last layer's attention block: its feed-forward block (two thirds
        of the layer's work, position-wise) and then the LM head see only the mask rows."""
        return (self._mask_rows_of(output[0]), *output[1:])

    def _mask_rows_hook(self) -> torch.utils.hooks.RemovableHandle:
        """Keep only the mask rows as early as the architecture allows: after the last layer's
        attention in BERT-built encoders (BERT, RoBERTa, XLM-R, ELECTRA: the layer's
        feed-forward block is then skipped at every other position, about 5% of the encoder's
        work), else at the encoder's output. Not inside a compiled encoder, whose graph would
        otherwise hold the hook."""
        layers = getattr(getattr(self.model.base_model, "encoder", None), "layer", None)
        last = layers[-1] if isinstance(layers, torch.nn.ModuleList) and len(layers) else None
        bert_built = (
            last is not None
            and isinstance(getattr(last, "attention", None), torch.nn.Module)
            and callable(getattr(last, "feed_forward_chunk", None))
            and not getattr(last, "add_cross_attention", False)
        )
        if bert_built and not self.compiled:
            return last.attention.register_forward_hook(self._keep_mask_rows_of_attention)
        return self.model.base_model.register_forward_hook(self._keep_mask_rows)

    def encode(self, prompts: Sequence[str]) -> list[list[int]]:
        """Token ids of each prompt with the model's mask token in place of `<mask>`.

        The space before `<mask>` belongs to the masked word: the shared vocabulary holds
        RoBERTa-style words in their leading-space form (`Ġbear`). Tokenizers whose mask token
        does not absorb that space emit a lone space token before the mask; it is dropped.
        """
        for prompt in prompts:
            if prompt.count(MASK) != 1:
                raise TacitError(f"prompt {prompt!r} must contain {MASK} exactly once")
        texts = [p.replace(MASK, self.tokenizer.mask_token) for p in prompts]
        encoded = self.tokenizer(texts)["input_ids"]
        mask_id = self.tokenizer.mask_token_id
        for prompt, ids in zip(prompts, encoded):
            if ids.count(mask_id) != 1:
                raise TacitError(f"prompt {prompt!r} does not encode to exactly one mask token")
            at = ids.index(mask_id)
            if at > 0 and self._is_lone_space(ids[at - 1]):
                del ids[at - 1]
        return encoded

    def _is_lone_space(self, token_id: int) -> bool:
        if token_id in self.tokenizer.all_special_ids:
            return False
        token = self.tokenizer.convert_ids_to_tokens(token_id)
        return self.tokenizer.convert_tokens_to_string([token]).strip() == ""

    def _run_batches(
        self,
        encoded: list[list[int]],
        forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        progress: bool | tqdm,
        desc: str,
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
        """Yield (prompt indices, forward(input ids, attention mask)) for batches of similar
        length, on the device, longest first (see longest_first_batches)."""
        pad_id = self.tokenizer.pad_token_id or 0
        owned = not isinstance(progress, tqdm)  # or the caller's bar, spanning several calls
        bar = (
            tqdm(total=len(encoded), desc=f"{desc} {self.name}", unit="text", disable=not progress)
            if owned
            else progress
        )

        def run(indices: np.ndarray) -> torch.Tensor:
            width = len(encoded[indices[0]])
            rows = [encoded[i] + [pad_id] * (width - len(encoded[i])) for i in indices]
            lengths = torch.tensor([len(encoded[i]) for i in indices])
            ids = torch.tensor(rows, dtype=torch.long)
            attention = (torch.arange(width) < lengths.unsqueeze(1)).long()
            if self.device.type == "cuda":  # page-locked memory: asynchronous copies
                ids, attention = ids.pin_memory(), attention.pin_memory()
            ids = ids.to(self.device, non_blocking=True)
            attention = attention.to(self.device, non_blocking=True)
            with compile_errors_explained(self.compiled, self.name, self.device):
                return forward(ids, attention)

        try:
            with torch.inference_mode():
                for indices, result in longest_first_batches([len(e) for e in encoded], self, run):
                    yield indices, result
                    bar.update(len(indices))
        finally:
            if owned:
                bar.close()

    def _batches(
        self, encoded: list[list[int]], progress: bool | tqdm
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
        """Yield (prompt indices, float32 logits over the whole vocabulary at the mask)."""
        mask_id = self.tokenizer.mask_token_id

        def forward(ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
            self._rows = (ids == mask_id).nonzero()
            return self.model(input_ids=ids, attention_mask=attention).logits[0].float()

        hook = self._mask_rows_hook()
        try:
            yield from self._run_batches(encoded, forward, progress, "scoring")
        finally:
            hook.remove()

    def hidden_states(
        self, texts: Sequence[str], *, pooling: str = "mask", progress: bool | tqdm = True
    ) -> tuple[np.ndarray, int]:
        """The encoder's last hidden layer for each text, float32: at the `<mask>` (`mask`), or
        averaged over its tokens, special tokens included (`mean`). The LM head does not run.

        Texts longer than the model allows are cut to a window of max_tokens tokens around
        the mask (or their start, for `mean`), keeping the first and last special tokens.
        Returns the [texts x hidden] array and the number of texts cut.
        """
        if pooling not in ("mask", "mean"):
            raise TacitError(f"--pooling {pooling!r}: expected mask or mean")
        encoded = (
            self.encode(texts) if pooling == "mask" else self.tokenizer(list(texts))["input_ids"]
        )
        cut = self._cut_to_fit(encoded, around_mask=pooling == "mask")
        mask_id = self.tokenizer.mask_token_id

        def forward(ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
            if pooling == "mask":
                self._rows = (ids == mask_id).nonzero()
            hidden = self.model.base_model(input_ids=ids, attention_mask=attention)
            hidden = hidden.last_hidden_state.float()
            if pooling == "mask":  # the mask rows only, in order (see _mask_rows_hook)
                return hidden[0]
            weights = attention.unsqueeze(-1).float()
            return (hidden * weights).sum(1) / weights.sum(1)

        out = torch.empty(
            (len(encoded), self.model.config.hidden_size), dtype=torch.float32, device=self.device
        )
        hook = self._mask_rows_hook() if pooling == "mask" else None
        try:
            for indices, states in self._run_batches(encoded, forward, progress, "encoding"):
                out[torch.as_tensor(indices, device=self.device)] = states
        finally:
            if hook is not None:
                hook.remove()
        return out.cpu().numpy(), cut

    def _cut_to_fit(self, encoded: list[list[int]], *, around_mask: bool) -> int:
        """Cut each token list longer than the model allows to a window of max_tokens around
        its mask (or its start), keeping its first and last special tokens; return how many."""
        cut = 0
        for n, ids in enumerate(encoded):
            if len(ids) > self.max_tokens:
                at = ids.index(self.tokenizer.mask_token_id) if around_mask else 0
                start = max(0, min(at - self.max_tokens // 2, len(ids) - self.max_tokens))
                window = ids[start : start + self.max_tokens]
                window[0], window[-1] = ids[0], ids[-1]
                encoded[n], cut = window, cut + 1
        return cut

    def shared_scores(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        *,
        progress: bool | tqdm = True,
        cut_to_fit: bool = False,
    ) -> Iterator[ScoredBatch]:
        """Score each distinct prompt text once; yield the results batch by batch.

        Every prompt given is covered by exactly one batch, through `rows` (its position in
        `prompts`) and `batch_rows` (the row of its text in the batch's tensors). With
        `cut_to_fit`, prompts too long for the model are cut around their mask (their number
        is left in `self.last_cut`); without, the caller must have left them out.
        """
        unique, inverse = np.unique(np.asarray(prompts, dtype=object), return_inverse=True)
        rows_of = _group_rows(inverse.reshape(-1), len(unique))
        vocab_t = torch.as_tensor(vocab_ids, device=self.device)
        encoded = self.encode(list(unique))
        self.last_cut = self._cut_to_fit(encoded, around_mask=True) if cut_to_fit else 0
        for indices, logits in self._batches(encoded, progress):
            rows = np.concatenate([rows_of[i] for i in indices])
            batch_rows = np.concatenate(
                [np.full(len(rows_of[i]), r) for r, i in enumerate(indices)]
            )
            yield ScoredBatch(
                rows=torch.as_tensor(rows, device=self.device),
                batch_rows=torch.as_tensor(batch_rows, device=self.device),
                shared=logits[:, vocab_t],
                log_z=torch.logsumexp(logits, dim=-1),
            )

    def score_targets(
        self,
        prompts: Sequence[str],
        targets: Sequence[int],
        vocab_ids: np.ndarray,
        *,
        top_k: int = 5,
        progress: bool | tqdm = True,
    ) -> TargetScores:
        """Rank each target among the shared vocabulary at its prompt's <mask>.

        Args:
            prompts: texts with one `<mask>` each; repeated texts are scored once.
            targets: for each prompt, the target's position in the shared vocabulary.
            vocab_ids: this model's token id of each shared-vocabulary word.
            top_k: how many top shared-vocabulary words to return per prompt.
        """
        if len(prompts) != len(targets):
            raise ValueError("one target per prompt")
        targets_t = torch.as_tensor(np.asarray(targets, dtype=np.int64), device=self.device)
        n = len(prompts)
        rank = torch.empty(n, dtype=torch.long, device=self.device)
        prob = torch.empty(n, dtype=torch.float32, device=self.device)
        prob_shared = torch.empty(n, dtype=torch.float32, device=self.device)
        top_index = torch.empty((n, top_k), dtype=torch.long, device=self.device)
        top_prob = torch.empty((n, top_k), dtype=torch.float32, device=self.device)
        for batch in self.shared_scores(prompts, vocab_ids, progress=progress):
            rows, at = batch.rows, batch.batch_rows
            log_z_shared = torch.logsumexp(batch.shared, dim=-1)
            top_values, top_positions = batch.shared.topk(top_k, dim=-1)
            shared = batch.shared[at]
            target_logit = shared.gather(1, targets_t[rows].unsqueeze(1))
            rank[rows] = 1 + (shared > target_logit).sum(dim=1)
            prob[rows] = (target_logit.squeeze(1) - batch.log_z[at]).exp()
            prob_shared[rows] = (target_logit.squeeze(1) - log_z_shared[at]).exp()
            top_index[rows] = top_positions[at]
            top_prob[rows] = (top_values - batch.log_z.unsqueeze(1)).exp()[at]
        return TargetScores(
            rank=rank.cpu().numpy(),
            target_prob=prob.cpu().numpy(),
            target_prob_shared=prob_shared.cpu().numpy(),
            top_index=top_index.cpu().numpy(),
            top_prob=top_prob.cpu().numpy(),
        )


def _group_rows(text_of_row: np.ndarray, n_texts: int) -> list[np.ndarray]:
    """For each distinct text, the positions of the prompts that have it."""
    order = np.argsort(text_of_row, kind="stable")
    bounds = np.searchsorted(text_of_row[order], np.arange(n_texts + 1))
    return [order[bounds[i] : bounds[i + 1]] for i in range(n_texts)]
