"""MaskedLMScorer: a masked LM scoring the <mask> of many prompts at once.

Prompts carry the literal placeholder `<mask>`; the scorer puts the model's own mask token
there. Prompts are de-duplicated, sorted by token length and batched; the encoder runs on the
batch and the LM head runs only on the mask rows (a forward hook hands the head just those
rows, which works for any `*ForMaskedLM` whose head is position-wise; in BERT-built encoders
the rows are cut before the last layer's feed-forward block, see _mask_rows_hook). All
reductions (ranks, probabilities, top words) happen on the device; only small per-prompt
results come back.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import AutoModelForMaskedLM

from tacit.core.blank import MASK
from tacit.core.choices import POOLINGS, check_choice
from tacit.core.errors import TacitError, TacitWarning
from tacit.core.option_names import option
from tacit.models.base import SpanScores, TokenScores, progress_bar
from tacit.models.batching import longest_first_batches, one_at_a_time, padded
from tacit.models.hf_scorer import HFScorer
from tacit.models.invariant import padded_length, tile_linears


class MaskedLMScorer(HFScorer):
    """A masked LM with its tokenizer on a device, scoring the <mask> of prompts in batches.

    Examples:
        >>> from tacit.ranking import rank_targets
        >>> scorer = MaskedLMScorer("roberta-base")  # doctest: +SKIP
        >>> ranking = rank_targets(scorer, ["A <mask> has fur."], [vocab.index("bear")],
        ...                        vocab.token_ids["roberta-base"])  # doctest: +SKIP
    """

    kind = "masked"
    capabilities = frozenset({"vocab", "spans", "encode", "tokens"})
    auto_class = AutoModelForMaskedLM
    head = "masked-LM"
    _hooked = 0  # scoring runs under the mask-rows hook (_mask_rows_only), in any thread
    # the tie rule's prompts alone may run side by side (scores_alone_concurrently): what one
    # pass keeps for its hook is its thread's own, and the hook goes in once for all of them
    _lock = threading.Lock()
    _threads = threading.local()
    _invariance: bool | None = None  # batches_invariant's check: None until it has run
    _untile: Callable[[], None] | None = None  # puts the linear layers back, while tiled

    def scores_alone_concurrently(self) -> bool:
        """On a CPU, uncompiled: a batch's rows are kept per thread (`_rows`), the hook is
        counted in and out under a lock, and the tokenizer is called under it too (a fast
        tokenizer's state is not for two threads at once)."""
        return self.device.type == "cpu" and not self.runtime.compiled

    def batches_invariant(self) -> bool:
        """Batches of one padded length with tiled linear layers (_tiled: tacit.models.invariant)
        give each prompt the scores it gets alone, bit for bit. Checked on the first batch a
        scorer runs (_check_invariance): where the machine's kernels break it, this says False
        from then on (the scoring stays tiled, alone as in a batch), and the tie rule settles
        near ties on the prompt alone as on any other device."""
        return self._invariance is not False and self._tiled()

    def _tiled(self) -> bool:
        """Vocabulary scoring runs tiled (tacit.models.invariant), alone as in a batch: on a
        CPU, uncompiled, unquantized, on one device (accelerate's `--device-map` hooks wrap the
        layers' forward)."""
        return (
            self.scores_alone_concurrently()
            and not self.spec.quantization
            and not self.runtime.device_map
        )

    @property
    def _rows(self) -> torch.Tensor | None:
        """(batch row, position) of each mask in this thread's running batch."""
        return getattr(self._threads, "rows", None)

    @_rows.setter
    def _rows(self, rows: torch.Tensor | None) -> None:
        self._threads.rows = rows

    def check_tokenizer(self) -> None:
        if self.tokenizer.mask_token is None:
            raise TacitError(f"the tokenizer of {self.name!r} has no mask token")

    # --- keeping only the mask rows ---------------------------------------------------------

    def _mask_rows_of(self, hidden: torch.Tensor) -> torch.Tensor:
        """[batch x tokens x hidden] -> [1 x masks x hidden]: the rows at `self._rows`."""
        assert self._rows is not None
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
        last = self._last_bert_layer()
        if last is not None:
            attention: torch.nn.Module = last.attention  # type: ignore[assignment]
            return attention.register_forward_hook(self._keep_mask_rows_of_attention)
        return self.model.base_model.register_forward_hook(self._keep_mask_rows)

    def _last_bert_layer(self) -> torch.nn.Module | None:
        """The last layer of a BERT-built encoder, uncompiled (where the mask rows are cut
        before its feed-forward block: _mask_rows_hook), or None."""
        layers = getattr(getattr(self.model.base_model, "encoder", None), "layer", None)
        last = layers[-1] if isinstance(layers, torch.nn.ModuleList) and len(layers) else None
        bert_built = (
            last is not None
            and isinstance(getattr(last, "attention", None), torch.nn.Module)
            and callable(getattr(last, "feed_forward_chunk", None))
            and not getattr(last, "add_cross_attention", False)
        )
        return last if bert_built and not self.runtime.compiled else None

    @contextmanager
    def _mask_rows_only(self) -> Iterator[None]:
        """The mask-rows hook while scoring (_mask_rows_hook), and the tiled linear layers where
        the scoring is tiled (_tiled), once: a scoring run inside another (the tie rule's
        prompt alone, while the batches it settles are still being read: tacit.ranking.ties),
        or beside it in another thread, keeps the ones put there first; the last run out takes
        them away."""
        with self._lock:
            if not self._hooked:
                self._hook = self._mask_rows_hook()
                if self._tiled():
                    self._untile = tile_linears(self.model, self._one_row_per_prompt())
            self._hooked += 1
        try:
            yield
        finally:
            with self._lock:
                self._hooked -= 1
                if not self._hooked:
                    self._hook.remove()
                    if self._untile is not None:
                        self._untile()
                        self._untile = None

    # --- tokenising -------------------------------------------------------------------------

    def encode_prompts(self, prompts: Sequence[str]) -> list[list[int]]:
        """Token ids of each prompt with the model's mask token in place of `<mask>`.

        The space before `<mask>` belongs to the masked word: the shared vocabulary holds
        RoBERTa-style words in their leading-space form (`Ġbear`). Tokenizers whose mask token
        does not absorb that space emit a lone space token before the mask; it is dropped.
        """
        for prompt in prompts:
            if prompt.count(MASK) != 1:
                raise TacitError(f"prompt {prompt!r} must contain {MASK} exactly once")
        texts = [p.replace(MASK, self.tokenizer.mask_token) for p in prompts]
        with self._lock:
            encoded = self.tokenizer(texts)["input_ids"]
        mask_id = self.tokenizer.mask_token_id
        for prompt, ids in zip(prompts, encoded):
            if ids.count(mask_id) != 1:
                raise TacitError(f"prompt {prompt!r} does not encode to exactly one mask token")
            at = ids.index(mask_id)
            if at > 0 and self._is_lone_space(ids[at - 1]):
                del ids[at - 1]
        return encoded

    def _cut_to_fit(self, encoded: list[list[int]], *, around_mask: bool) -> np.ndarray:
        """Cut each token list longer than the model allows to a window of max_tokens around
        its mask (or its start), keeping its first and last special tokens; return which were
        cut (a bool per list)."""
        cut = np.zeros(len(encoded), dtype=bool)
        for n, ids in enumerate(encoded):
            if len(ids) > self.max_tokens:
                at = ids.index(self.tokenizer.mask_token_id) if around_mask else 0
                start = max(0, min(at - self.max_tokens // 2, len(ids) - self.max_tokens))
                window = ids[start : start + self.max_tokens]
                window[0], window[-1] = ids[0], ids[-1]
                encoded[n], cut[n] = window, True
        return cut

    # --- running ----------------------------------------------------------------------------

    def _run_batches(
        self,
        encoded: list[list[int]],
        forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        progress: bool | tqdm,
        desc: str,
        tiled: bool = False,
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
        """Yield (prompt indices, forward(input ids, attention mask)) for batches of similar
        length, on the device, longest first (see longest_first_batches). `tiled`: each text
        padded to its padded_length, alone as in a batch, and a batch's texts all of one padded
        length (tacit.models.invariant)."""
        pad_id = self.tokenizer.pad_token_id or 0
        lengths = [len(e) for e in encoded]
        if tiled:
            lengths = [padded_length(n) for n in lengths]

        def run(indices: np.ndarray) -> torch.Tensor:
            width = lengths[indices[0]] if tiled else None
            ids, attention = padded(encoded, indices, pad_id, self.device, width)
            with self.runtime.compile_errors():
                return forward(ids, attention)

        with (
            progress_bar(progress, len(encoded), f"{desc} {self.name}", "text") as bar,
            torch.inference_mode(),
        ):
            for indices, result in longest_first_batches(lengths, self, run, tiled):
                yield indices, result
                bar.update(len(indices))

    def _logits_at_mask(
        self, encoded: list[list[int]], progress: bool | tqdm
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
        """Yield (prompt indices, float32 logits over the whole vocabulary at the mask)."""
        mask_id = self.tokenizer.mask_token_id

        def forward(ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
            self._rows = (ids == mask_id).nonzero()
            return self.model(input_ids=ids, attention_mask=attention).logits[0].float()

        with self._mask_rows_only():
            yield from self._run_batches(encoded, forward, progress, "scoring", self._tiled())

    def _one_row_per_prompt(self) -> list[torch.nn.Module]:
        """The modules that see only the mask rows (see _mask_rows_hook): the LM head, and the
        last layer's feed-forward block in BERT-built encoders."""
        base = self.model.base_model
        inside = {id(m) for m in base.modules()}
        head = [m for m in self.model.children() if id(m) not in inside]
        last = self._last_bert_layer()
        if last is None:
            return head
        return [*head, *(m for m in last.children() if m is not last.attention)]

    def _vocab_logits(
        self, texts: list[str], progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[tuple[np.ndarray, torch.Tensor, int]]:
        encoded = self.encode_prompts(texts)
        cut = self._cut_to_fit(encoded, around_mask=True) if cut_to_fit else np.zeros(0, bool)
        for indices, logits in self._logits_at_mask(encoded, progress):
            alone = len(indices) == 1 and torch.get_num_threads() == 1  # the check's own pass
            if self._invariance is None and not alone and self._tiled():
                self._check_invariance(encoded[indices[-1]], logits[-1])
            yield indices, logits, int(cut[indices].sum()) if cut_to_fit else 0

    def _check_invariance(self, ids: list[int], batched: torch.Tensor) -> None:
        """Score the batch's last prompt alone (a batch of one on one CPU thread: the tie rule's
        canonical pass) and keep whether its logits equal the batch's, bit for bit: the run's
        batches count as canonical only if so (batches_invariant)."""
        with one_at_a_time(self):
            ((_, alone),) = list(self._logits_at_mask([ids], False))
        self._invariance = torch.equal(alone[-1], batched)
        if not self._invariance:
            warnings.warn(
                f"{self.name}: a prompt scored in a batch differs from it scored alone on this "
                "machine, even with tiled linear layers; near ties are settled on the prompt "
                "scored alone (slower)",
                TacitWarning,
                stacklevel=2,
            )

    def _span_scores(
        self,
        templates: list[str],
        spans: list[str],
        scoring: str,
        progress: bool | tqdm,
        cache: bool,
        tokens: bool = False,
    ) -> SpanScores:
        from tacit.models.masked_spans import score_spans

        return score_spans(
            self, templates, spans, scoring=scoring, progress=progress, tokens=tokens
        )

    def _token_scores(self, texts: list[str], pll: str, progress: bool | tqdm) -> list[TokenScores]:
        from tacit.models.masked_pll import token_scores

        return token_scores(self, texts, pll, progress)

    def _encode(
        self, texts: list[str], pooling: str | None, progress: bool | tqdm
    ) -> tuple[np.ndarray, int]:
        """The encoder's last hidden layer for each text, float32: at the `<mask>` (`mask`, the
        default), or averaged over its tokens, special tokens included (`mean`). The LM head
        does not run.

        Texts longer than the model allows are cut to a window of max_tokens tokens around
        the mask (or their start, for `mean`), keeping the first and last special tokens.
        Returns the [texts x hidden] array and the number of texts cut.
        """
        pooling = check_choice(option("--pooling"), pooling or "mask", POOLINGS)
        if pooling == "last":
            raise TacitError(
                f"{option('--pooling')} last: {self.name} is a masked LM, which reads both ways; "
                "pool at the mask or the mean (last is a causal model's)"
            )
        encoded = (
            self.encode_prompts(texts)
            if pooling == "mask"
            else self.tokenizer(list(texts))["input_ids"]
        )
        cut = int(self._cut_to_fit(encoded, around_mask=pooling == "mask").sum())
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
