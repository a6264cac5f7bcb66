"""What a scorer answers (tacit.models.base.Scorer): typed values a caller can use without
torch. Arrays are numpy arrays, or, from a family that runs its model in this process, torch
tensors on its device (ScoredBatch: so that a reduction over a vocabulary stays there)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ScoredBatch:
    """One batch of distinct prompt texts, scored (arrays: numpy, or torch on the device).

    rows: positions (in the prompts given) of every prompt whose text is in this batch.
    batch_rows: for each of `rows`, the row of its text in `shared` and `log_z`.
    shared: [texts x shared vocabulary] float32 scores at the blank (logits, or
        log-probabilities with `log_z` zero); where score_vocab was given `Needed`, words no
        reduction can read may hold an upper bound of their score (tacit.models.answers.Needed).
    log_z: [texts] logsumexp of the logits over the model's whole vocabulary: `shared - log_z`
        are log-probabilities under the whole-vocabulary softmax (`score_words` with a word put
        in the blank: over the words given; a causal LM's vocabulary mode: log P(word, the text
        after the blank | the text before it)).
    cut: how many of the batch's texts were cut to fit the model (`cut_to_fit`).
    work: what the batch ran against the naive count, for the model's record (a causal LM's
        suffixes scored: `vocab_suffixes`, `vocab_suffixes_naive`).
    """

    rows: Any
    batch_rows: Any
    shared: Any
    log_z: Any
    cut: int = 0
    work: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SpanScores:
    """Candidate spans scored in templates: [templates x spans] arrays, aligned with the
    templates and spans given.

    span: the sum over the span's tokens (as tokenised in that sentence) of their
        log-probability: for a masked LM by the chain rule left to right (`l2r`: token i given
        the tokens before it written and the rest masked) or all masked at once
        (`independent`); for a causal LM, log P(token | every token before it); for a seq2seq
        LM, log P(token | the input, `<extra_id_0>` and the span's tokens before it).
    n_tokens: how many tokens the span has in that sentence.
    sentence: causal and seq2seq LMs (else None), the whole sequence the model scores with the
        span in place: a causal LM's sentence (its first token conditioned on the start
        token), a seq2seq LM's target `<extra_id_0> SPAN <extra_id_1>` (both sentinels' terms
        with the span's). The tokens it scores besides the span's are the same for every span
        (the words around the blank; the two sentinels), so ranking spans by it ranks them as
        P(span | the rest) does: the tokens after the span say that it ends there.
    work: what the scoring ran against the naive count, for the manifest: a masked LM's forward
        rows (`span_rows`, `span_rows_naive`: one per span token per pair), a causal LM's
        input tokens (`span_tokens`, `span_tokens_naive`: a whole-sentence loop's, the start
        token and every token of the sentence but its last), a seq2seq LM's encoder and decoder
        input tokens (`span_tokens`; `span_tokens_naive`: the encoder run again for every pair).
    tokens: where score_spans was asked for them (`tokens=True`), else None: a [templates x
        spans] object array of SpanTokens, each pair's span tokens with the terms `span` sums
        (read in the same pass: their sum is `span`, their count `n_tokens`).
    """

    span: np.ndarray
    n_tokens: np.ndarray
    sentence: np.ndarray | None = None
    work: Mapping[str, int] = field(default_factory=dict)
    tokens: np.ndarray | None = None

    def expanded(self, template_of: np.ndarray, span_of: np.ndarray) -> SpanScores:
        """Scores of distinct templates and spans put back in the order they were asked for."""
        pick = np.ix_(template_of, span_of)
        sentence = None if self.sentence is None else self.sentence[pick]
        tokens = None if self.tokens is None else self.tokens[pick]
        return SpanScores(self.span[pick], self.n_tokens[pick], sentence, self.work, tokens)


@dataclass(frozen=True)
class SpanTokens:
    """One span's tokens in one template, each with its term of the span's score
    (SpanScores.span: their sum).

    tokens: the tokens as the tokenizer writes them (`Ġbear`, `##s`, `▁bear`; a server's: as
        its echo writes them, ` bear`), as Scorer.token_scores writes a text's.
    logprob: [tokens] float64 natural-log probabilities, each as the family scores the span
        (SpanScores.span: a masked LM's by `l2r` or `independent`, a causal LM's given every
        token before it, a seq2seq LM's given the input and the target before it).
    """

    tokens: tuple[str, ...]
    logprob: np.ndarray


def cut_tokens(texts: Sequence[str], values: np.ndarray, counts: Sequence[int]) -> list[SpanTokens]:
    """Spans' tokens kept one span after another, flat, cut back into one SpanTokens a span
    (`counts`: each span's number of tokens)."""
    bounds = np.cumsum([0, *counts]).tolist()
    return [
        SpanTokens(tuple(texts[a:b]), np.asarray(values[a:b], dtype=np.float64))
        for a, b in zip(bounds[:-1], bounds[1:])
    ]


def span_token_grid(rows: Sequence[Sequence[SpanTokens]]) -> np.ndarray:
    """SpanTokens of [templates x spans] as SpanScores.tokens holds them (an object array)."""
    grid = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for t, row in enumerate(rows):
        for s, found in enumerate(row):
            grid[t, s] = found
    return grid


@dataclass(frozen=True)
class TokenScores:
    """One text's tokens, each with its log-probability (Scorer.token_scores).

    tokens: the tokens as the tokenizer writes them (`Ġbear`, `##s`), the text's only: no
        start token, no [CLS] or [SEP].
    offsets: [tokens x 2] int64 character offsets of each token in the text (start, end), as
        the tokenizer gives them.
    logprob: [tokens] float64 natural-log probabilities: a causal LM's log P(token | the start
        token and the tokens before it); a masked LM's pseudo-log-likelihood of the token
        (`original`: itself masked, every other token seen; `within_word_l2r`: itself and the
        later tokens of its word masked).
    """

    tokens: tuple[str, ...]
    offsets: np.ndarray
    logprob: np.ndarray


# (indices into the distinct texts, [texts x shared vocabulary] scores, [texts] log_z, cut)
VocabScores = tuple[np.ndarray, Any, Any, int]


@dataclass(frozen=True)
class Needed:
    """What a reduction reads of each prompt's scores over the shared vocabulary, so that a
    family whose exact score costs work per word (a causal LM's text after the blank:
    tacit.models.causal_words) scores only the words that can change it, and gives each other
    word an upper bound of its score lying below every score read. Ranks, top-k words, average
    precision (over the vocabulary or a subset) and probabilities of the words read are then
    exactly those of every word scored. None where score_vocab is asked: every word exact.

    golds: per prompt, the positions (in the shared vocabulary) whose scores and ranks are
        read (retrieval's target, elicitation's and Prince's gold answers).
    top_k: how many of each prompt's best words are read.
    groups: per prompt, its group (an item's templates) where their mean is read too
        (the ensemble of tacit.ranking), else None.
    every_word: every word's score is read (a softmax over the shared vocabulary, as
        retrieval's `target_prob_shared`): no bound will do.
    """

    golds: Sequence[Sequence[int]]
    top_k: int
    groups: Sequence[int] | None = None
    every_word: bool = False

    def subset(self, positions: np.ndarray) -> Needed:
        """The needs of the prompts at `positions` alone; a group some of whose prompts are
        left out (scored another way) cannot be bounded from these: every word is read."""
        if self.groups is None:
            return replace(self, golds=[self.golds[int(i)] for i in positions])
        groups = np.asarray(self.groups)
        kept = groups[positions]
        split = bool(np.isin(groups, kept).sum() != len(positions))
        return Needed(
            [self.golds[int(i)] for i in positions],
            self.top_k,
            kept.tolist(),
            self.every_word or split,
        )
