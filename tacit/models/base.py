"""The scorer interface every probe calls, whatever the model family.

A scorer is a ModelRuntime that offers some of:

- `score_vocab(prompts, vocab_ids)`: the blank (`<mask>`) of each prompt scored over a shared
  vocabulary of one-token words, batch by batch (ScoredBatch);
- `score_targets(prompts, targets, vocab_ids)`: built on score_vocab, each target's rank and
  probabilities among the shared vocabulary;
- `score_spans(templates, spans)`: every candidate span in the blank of every template, any
  number of tokens, scored exactly (SpanScores; DESIGN.md, "Scoring the blank");
- `encode(texts, pooling=...)`: frozen features.

A family that cannot do something says so in one clear error (`unsupported`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm

from tacit.core.errors import TacitError
from tacit.models.runtime import ModelRuntime

MASK = "<mask>"


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
    shared: [texts x shared vocabulary] float32 logits at the blank, on the device.
    log_z: [texts] logsumexp of the logits over the model's whole vocabulary: `shared - log_z`
        are log-probabilities under the whole-vocabulary softmax.
    """

    rows: torch.Tensor
    batch_rows: torch.Tensor
    shared: torch.Tensor
    log_z: torch.Tensor


@dataclass(frozen=True)
class SpanScores:
    """Candidate spans scored in templates: [templates x spans] arrays, aligned with the
    templates and spans given.

    span: the sum over the span's tokens (as tokenised in that sentence) of their
        log-probability: for a masked LM by the chain rule left to right (`l2r`: token i given
        the tokens before it written and the rest masked) or all masked at once
        (`independent`); for a causal LM, log P(token | every token before it).
    n_tokens: how many tokens the span has in that sentence.
    sentence: causal LMs only (else None): the log-probability of the whole sentence with the
        span in place (its first token conditioned on BOS). The words around the span are the
        same for every span, so ranking spans by it ranks them by P(span | the rest).
    """

    span: np.ndarray
    n_tokens: np.ndarray
    sentence: np.ndarray | None = None


class Scorer(ModelRuntime):
    """A model family's implementation of what the probes ask (see the module docstring)."""

    last_cut = 0  # prompts cut to fit by the last score_vocab(cut_to_fit=True)
    # what the last score_spans ran against the naive count, for the manifest: a masked LM's
    # forward rows ({"span_rows", "span_rows_naive"}: one per span token per pair), a causal
    # LM's input tokens ({"span_tokens", "span_tokens_naive"}: a whole-sentence loop's, the
    # start token and every token of the sentence but its last)
    span_work: dict[str, int] = {}

    def unsupported(self, what: str) -> TacitError:
        """The one-line error for a question this family cannot answer."""
        return TacitError(f"{self.name} is a {self.kind} model: it cannot {what}")

    def score_vocab(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        *,
        progress: bool | tqdm = True,
        cut_to_fit: bool = False,
    ) -> Iterator[ScoredBatch]:
        """Score each distinct prompt text's blank over the shared vocabulary, batch by batch.

        Every prompt given is covered by exactly one batch. With `cut_to_fit`, prompts too long
        for the model are cut around their blank (their number is left in `last_cut`).
        """
        raise self.unsupported("score a <mask> over a vocabulary")

    def _scored_batches(
        self,
        rows_of: list[np.ndarray],
        batches: Iterator[tuple[np.ndarray, torch.Tensor]],
        vocab_ids: np.ndarray,
    ) -> Iterator[ScoredBatch]:
        """ScoredBatch for each (distinct-text indices, [texts x vocabulary] logits) batch:
        `rows_of[i]` are the positions of the prompts whose text is distinct text i."""
        vocab_t = torch.as_tensor(vocab_ids, device=self.device)
        for indices, logits in batches:
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

    def score_spans(
        self,
        templates: Sequence[str],
        spans: Sequence[str],
        *,
        scoring: str = "l2r",
        progress: bool | tqdm = True,
    ) -> SpanScores:
        """Score every span in place of the `<mask>` of every template (`<mask>` once per
        template; the span replaces it, with the text around it unchanged). Each distinct
        (template, span) is scored once; the result does not depend on the batch size."""
        raise self.unsupported("score candidate spans")

    def encode(
        self, texts: Sequence[str], *, pooling: str = "mask", progress: bool | tqdm = True
    ) -> tuple[np.ndarray, int]:
        """Frozen features, [texts x hidden] float32, and the number of texts cut to fit."""
        raise self.unsupported("encode texts into features")

    def score_targets(
        self,
        prompts: Sequence[str],
        targets: Sequence[int],
        vocab_ids: np.ndarray,
        *,
        top_k: int = 5,
        progress: bool | tqdm = True,
    ) -> TargetScores:
        """Rank each target among the shared vocabulary at its prompt's blank.

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
        for batch in self.score_vocab(prompts, vocab_ids, progress=progress):
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
