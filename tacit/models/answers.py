"""What a scorer answers (tacit.models.base.Scorer), and what generation is asked with
(Sampling, GenerationRequest): typed values a caller can use without torch. Arrays are numpy
arrays, or, from a family that runs its model in this process, torch tensors on its device
(ScoredBatch: so that a reduction over a vocabulary stays there)."""

from __future__ import annotations

import json
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
    exact: [texts x shared vocabulary] bool, where `Needed.suffix_top` bounded the work: True
        where `shared` holds a word's exact score, False where an upper bound that a reduction
        may read (a rank counted against it is an upper bound of the rank). None: every
        score a reduction reads is exact.
    fixed: [texts x shared vocabulary] bool, or None: scores that are the same whatever the
        batch (a causal LM's bounds: the text before the blank is always run alone), which
        the tie rule leaves as they are.
    """

    rows: Any
    batch_rows: Any
    shared: Any
    log_z: Any
    cut: int = 0
    work: Mapping[str, int] = field(default_factory=dict)
    exact: Any = None
    fixed: Any = None


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


# nats: how far below every score a reduction reads a word left unscored lies at least (far
# more than float noise, so that no tie rule within it changes a rank); with a budget
# (Needed.suffix_top), how far above every bound left a gold's score lies where its rank is
# counted exact
MARGIN = 0.01


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
    suffix_top: a budget (`--suffix-top K`; 0: none): beyond the top k's words, only the
        K words of highest upper bound (and the golds) are scored exactly, whatever the golds'
        ranks need; the rest keep their bound, and ScoredBatch.exact says which (a gold's rank
        counted against a bound is an upper bound of its rank). It overrides `every_word`.
    """

    golds: Sequence[Sequence[int]]
    top_k: int
    groups: Sequence[int] | None = None
    every_word: bool = False
    suffix_top: int = 0

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
            self.suffix_top,
        )


# --- generation: what a model says (Scorer.generate) ------------------------------------------

FINISH_REASONS = ("stop", "length")  # the ones tacit's families give; a server may say others
NO_CHOICE = "no_choice"  # a server's answer that lacked a choice asked for (counted, not matched)
# a server's answer longer than its bound (tacit.models.server.generation.answer_limit): cut
# there, unread (counted, not matched)
OVERSIZED = "oversized"


@dataclass(frozen=True)
class Sampling:
    """How completions are drawn (one setting for every request of a call).

    n: completions per request (N samples, N participants of a norming study).
    temperature: 0 is greedy (the default: a run is reproducible; its N completions are one
        completion N times); above 0, sampled.
    top_p: nucleus sampling's mass (1: the whole distribution; no top-k is applied).
    max_tokens: the longest completion, in tokens; one cut there ends with
        `finish_reason: length`.
    seed: sampling's seed (None: unseeded, drawn anew each run and never cached); each
        request draws from its own generator, seeded by this seed and the request itself
        (request_seed), so that a request's samples do not depend on what else is asked with it.
    logprobs: how many top alternatives to keep for each generated token, beside its own
        log-probability (0: none, no token log-probabilities at all).
    stop: texts that end a completion where one appears (not included in the text;
        `finish_reason: stop`), beside the model's end-of-sequence token.
    """

    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 64
    seed: int | None = None
    logprobs: int = 0
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from tacit.core.errors import TacitError

        object.__setattr__(self, "stop", tuple(self.stop))
        checks = [
            ("n", self.n >= 1, "at least 1"),
            ("temperature", self.temperature >= 0, "0 (greedy) or more"),
            ("top_p", 0 < self.top_p <= 1, "in (0, 1]"),
            ("max_tokens", self.max_tokens >= 1, "at least 1"),
            ("logprobs", self.logprobs >= 0, "0 (none) or more"),
            ("stop", all(isinstance(s, str) and s for s in self.stop), "non-empty texts"),
        ]
        for name, fine, expected in checks:
            if not fine:
                raise TacitError(f"sampling {name}={getattr(self, name)!r}: expected {expected}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    @property
    def cacheable(self) -> bool:
        """Greedy completions and seeded samples are the same in every run, so a cache may
        keep them (tacit.models.score_cache); an unseeded sample is a fresh draw each run,
        and a kept one would pass a single draw off as many."""
        return self.greedy or self.seed is not None

    def record(self) -> dict[str, Any]:
        """The settings for the manifest (and a cache entry's name)."""
        return {
            "n": self.n,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "logprobs": self.logprobs,
            "stop": list(self.stop),
        }


@dataclass(frozen=True)
class GenerationRequest:
    """One request: a conversation (`messages`: {"role", "content"} each, rendered with the
    model's chat template, the assistant's turn opened) or a plain `prompt` (a base model's
    text, no template). Exactly one of the two.

    `about`: what the request asks about, as the probe's key columns and values (`concept`,
    `relation`, ...): never sent and not in its record; a model whose answers were recorded
    (tacit.models.recorded) finds them by it."""

    messages: tuple[Mapping[str, str], ...] | None = None
    prompt: str | None = None
    about: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        from tacit.core.errors import TacitError

        if (self.messages is None) == (self.prompt is None):
            raise TacitError("a generation request takes messages or a prompt (one of the two)")
        if self.messages is not None:
            messages = tuple(dict(m) for m in self.messages)
            for m in messages:
                if set(m) != {"role", "content"} or not all(isinstance(v, str) for v in m.values()):
                    raise TacitError(
                        f"a chat message is {{'role': ..., 'content': ...}} (texts), not {m!r}"
                    )
            if not messages:
                raise TacitError("a generation request's messages are empty")
            object.__setattr__(self, "messages", messages)

    @classmethod
    def chat(
        cls, messages: Sequence[Mapping[str, str]], about: Mapping[str, Any] | None = None
    ) -> GenerationRequest:
        return cls(messages=tuple(messages), about=_about(about))

    @classmethod
    def text(cls, prompt: str, about: Mapping[str, Any] | None = None) -> GenerationRequest:
        return cls(prompt=prompt, about=_about(about))

    def record(self) -> dict[str, Any]:
        """As JSON (messages.jsonl, a cache entry's name)."""
        if self.messages is not None:
            return {"messages": [dict(m) for m in self.messages]}
        return {"prompt": self.prompt}


def _about(about: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """A request's `about` as pairs of texts."""
    return tuple((str(k), str(v)) for k, v in (about or {}).items())


def request_seed(seed: int, request: GenerationRequest) -> int:
    """The seed of one request's samples: from the run's `seed` and the request itself (not its
    position in a call, which depends on the chunk and on what else was asked), a 31-bit
    number every engine takes.

    Examples:
        >>> request_seed(0, GenerationRequest.text("A bear")) == request_seed(
        ...     0, GenerationRequest.text("A bear"))
        True
    """
    from tacit.core.cache import fingerprint

    return int(fingerprint(seed, request.record())[:8], 16) & 0x7FFFFFFF


@dataclass(frozen=True)
class GeneratedToken:
    """One generated token: its text (as it adds to the text before it), its natural-log
    probability under the model's distribution (before temperature or top_p), and the `top`
    most likely tokens at that step with theirs (Sampling.logprobs of them, most likely
    first)."""

    text: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """One completion of a request.

    text: what the model said (its end-of-sequence token and a stop text left out); empty
        where a server gave no content or no choice (`finish_reason` says which).
    finish_reason: `stop` (the model ended, or a stop text), `length` (max_tokens reached), a
        server's own word, or `no_choice` (the server's answer lacked this choice).
    tokens: the generated tokens with their log-probabilities (Sampling.logprobs > 0, where
        the model gives them), else None.
    prompt_tokens: the request's tokens as the model read it (its template included); the
        same for each of a request's completions.
    completion_tokens: the tokens generated for this completion (a server that reports only
        a request's total for several completions: the total on the first, 0 on the others).
    cached: read from `--cache` or the run's own answers kept (tacit.models.answered), not
        generated in this run.
    model: the model the answer said it came from (a server's `model`), where it says.
    reasoning: a thinking model's thinking, kept apart from `text` (thought): its
        `<think>...</think>`, or a server's `reasoning_content`; None where it gave none.
    reasoning_tokens: how many of `completion_tokens` were thinking, where known.
    """

    text: str
    finish_reason: str
    tokens: tuple[GeneratedToken, ...] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    model: str | None = None
    reasoning: str | None = None
    reasoning_tokens: int | None = None

    @property
    def thought_to_limit(self) -> bool:
        """It spent its whole max_tokens thinking: a thinking that never ended, no answer."""
        return (
            self.reasoning is not None and not self.text.strip() and self.finish_reason == "length"
        )

    def record(self) -> dict[str, Any]:
        """As JSON (what a cache keeps; Completion.from_record reads it back)."""
        tokens = None
        if self.tokens is not None:
            tokens = [[t.text, t.logprob, [list(pair) for pair in t.top]] for t in self.tokens]
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "tokens": tokens,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            **({"model": self.model} if self.model is not None else {}),
            **({"reasoning": self.reasoning} if self.reasoning is not None else {}),
            **(
                {"reasoning_tokens": self.reasoning_tokens}
                if self.reasoning_tokens is not None
                else {}
            ),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, cached: bool = False) -> Completion:
        tokens = record.get("tokens")
        return cls(
            text=str(record["text"]),
            finish_reason=str(record["finish_reason"]),
            tokens=None
            if tokens is None
            else tuple(
                GeneratedToken(str(text), float(lp), tuple((str(t), float(v)) for t, v in top))
                for text, lp, top in tokens
            ),
            prompt_tokens=record.get("prompt_tokens"),
            completion_tokens=record.get("completion_tokens"),
            cached=cached,
            model=record.get("model"),
            reasoning=record.get("reasoning"),
            reasoning_tokens=record.get("reasoning_tokens"),
        )


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def thought(completion: Completion) -> Completion:
    """A completion with its thinking kept apart from its answer: a text that starts with
    `<think>` (after whitespace) thinks up to `</think>` (to its end, where the think never
    closed: no answer); one with `</think>` but no `<think>` (a chat template that opens the
    think in the prompt, as DeepSeek-R1's and Qwen3's do) thinks up to it. The answer is what
    follows, its leading whitespace off. A completion with its reasoning given apart already
    (a server's `reasoning_content`) or without a think is as it was.

    Examples:
        >>> said = thought(Completion("<think>Bears are big.</think> It is big.", "stop"))
        >>> said.text, said.reasoning
        ('It is big.', 'Bears are big.')
        >>> thought(Completion("<think>Hmm, a bear", "length")).thought_to_limit
        True
    """
    text = completion.text
    if completion.reasoning is not None:
        return completion
    start = text.lstrip()
    if start.startswith(THINK_OPEN):
        thinking, closed, answer = start[len(THINK_OPEN) :].partition(THINK_CLOSE)
        if not closed:
            thinking, answer = start[len(THINK_OPEN) :], ""
    elif THINK_CLOSE in text:
        thinking, _, answer = text.partition(THINK_CLOSE)
    else:
        return completion
    return replace(completion, text=answer.lstrip(), reasoning=thinking.strip())


def generation_counts(
    answers: Sequence[Sequence[Completion]],
    requests: Sequence[GenerationRequest] | None = None,
) -> dict[str, int]:
    """What generating `answers` (Scorer.generate's) cost, for the model's manifest record
    (added up over chunks as every count is: tacit.probes.base.Scored.counts):
    `generation_requests` run by the model and their `generation_prompt_tokens` and
    `generation_completion_tokens`; `generation_cached`, the requests read from `--cache` or
    the run's answers kept (their tokens cost nothing this time); `generation_oversized`, the
    requests whose answer was longer than its bound (cut, unread); where a completion thought
    (Completion.reasoning), `generation_reasoning_tokens` (of the completion tokens, those
    that were thinking, where the model says) and `generation_thought_to_limit` (completions
    that spent their whole max_tokens thinking). Given the `requests` asked,
    a repeated one counts once, as Scorer.generate runs it once."""
    counts = dict.fromkeys(
        (
            "generation_requests",
            "generation_cached",
            "generation_prompt_tokens",
            "generation_completion_tokens",
        ),
        0,
    )
    if any(c.finish_reason == OVERSIZED for completions in answers for c in completions):
        counts["generation_oversized"] = 0  # said only where it happened: golden runs stay
    if any(c.reasoning is not None for completions in answers for c in completions):
        counts["generation_reasoning_tokens"] = counts["generation_thought_to_limit"] = 0
    seen: set[str] = set()
    for n, completions in enumerate(answers):
        if requests is not None:
            key = json.dumps(requests[n].record(), sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
        if "generation_thought_to_limit" in counts:  # cached or not: what the answers hold
            counts["generation_thought_to_limit"] += sum(c.thought_to_limit for c in completions)
        if completions and all(c.cached for c in completions):
            counts["generation_cached"] += 1
            continue
        counts["generation_requests"] += 1
        if completions and completions[0].finish_reason == OVERSIZED:
            counts["generation_oversized"] += 1
        if completions:
            counts["generation_prompt_tokens"] += completions[0].prompt_tokens or 0
        counts["generation_completion_tokens"] += sum(c.completion_tokens or 0 for c in completions)
        if "generation_reasoning_tokens" in counts:
            counts["generation_reasoning_tokens"] += sum(
                c.reasoning_tokens or 0 for c in completions
            )
    return counts
