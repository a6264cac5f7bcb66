"""FakeScorer: a deterministic stand-in for a masked LM, with a real tokenizer and no weights.

For fast tests of a probe (yours or tacit's) through the whole run, and for trying a pipeline
without downloading a model. Each text's "logits" at its blank are drawn from a generator
seeded by the text, so the same text always scores the same, whatever else is in the batch; a
span's score is the sum of its tokens' log-probabilities under its template's distribution, so
a one-token span scores as the same word does over the vocabulary. None of it means anything
about language: never report its numbers.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import torch
from tqdm.auto import tqdm

from tacit.core.blank import MASK
from tacit.core.errors import TacitError, shorten
from tacit.models.answers import SpanTokens
from tacit.models.base import Scorer, SpanScores, VocabScores

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from tacit.core.manifest import ModelRecord


class FakeScorer(Scorer):
    """A scorer with a real tokenizer and no model (see the module docstring).

    Examples:
        >>> scorer = FakeScorer(tokenizer, name="fake")  # doctest: +SKIP
        >>> tacit.retrieve([scorer], norms="norms.dat", max_props=3)  # doctest: +SKIP
    """

    kind = "masked"  # it stands in for a masked LM wherever one is taken
    capabilities = frozenset({"vocab", "spans"})

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        *,
        name: str = "fake",
        batch_size: int = 32,
        seed: int = 0,
    ) -> None:
        self.name, self.tokenizer, self.batch_size, self.seed = name, tokenizer, batch_size, seed
        self.device = torch.device("cpu")
        self.max_tokens = 512
        if self.tokenizer.mask_token is None:
            raise TacitError(f"the tokenizer of {self.name!r} has no mask token")

    def record(self) -> ModelRecord:
        return {
            "name": self.name,
            "kind": self.kind,
            "class": type(self).__name__,
            "revision": None,
            "device": "cpu",
        }

    def _logits(self, text: str) -> torch.Tensor:
        """The text's "logits" over the tokenizer's vocabulary, from its own seed."""
        if text.count(MASK) != 1:
            raise TacitError(f"prompt {shorten(repr(text))} must contain {MASK} exactly once")
        seed = zlib.crc32(text.encode("utf-8")) ^ self.seed
        generator = torch.Generator().manual_seed(seed)
        return 3 * torch.randn(len(self.tokenizer), generator=generator)

    def _vocab_scores(
        self, texts: list[str], vocab_ids: np.ndarray, progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[VocabScores]:
        for start in range(0, len(texts), self.batch_size):
            indices = np.arange(start, min(start + self.batch_size, len(texts)))
            logits = torch.stack([self._logits(texts[i]) for i in indices])
            shared = logits[:, torch.as_tensor(vocab_ids)]
            yield indices, shared, torch.logsumexp(logits, dim=-1), 0

    def _span_scores(
        self,
        templates: list[str],
        spans: list[str],
        scoring: str,
        progress: bool | tqdm,
        cache: bool,
        tokens: bool = False,
    ) -> SpanScores:
        ids = [self.tokenizer(" " + span, add_special_tokens=False)["input_ids"] for span in spans]
        span = np.zeros((len(templates), len(spans)))
        grid = np.empty(span.shape, dtype=object) if tokens else None
        for t, template in enumerate(templates):
            log_probs = torch.log_softmax(self._logits(template).double(), dim=-1).numpy()
            span[t] = [log_probs[pieces].sum() for pieces in ids]
            if grid is not None:
                for s, pieces in enumerate(ids):
                    names = tuple(self.tokenizer.convert_ids_to_tokens(pieces))
                    grid[t, s] = SpanTokens(names, log_probs[pieces])
        n_tokens = np.tile([len(pieces) for pieces in ids], (len(templates), 1))
        pairs = len(templates) * len(spans)
        work = {"span_rows": pairs, "span_rows_naive": pairs}
        return SpanScores(span, n_tokens, work=work, tokens=grid)

    def __repr__(self) -> str:
        return f"FakeScorer({self.name!r})"
