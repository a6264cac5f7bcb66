"""ServerScorer: a causal LM served by an OpenAI-compatible completions server, scored as the
in-process causal family scores it (tacit.models.causal), from the server's prompt
log-probabilities.

- Spans: the candidate span in the template's blank, the sentence's log-probability (every
  token's, the first conditioned on the start token: tacit.models.server.connect), and the
  span's own share (the tokens that overlap its characters, its leading space included), read
  off the echo's tokens and their texts (tacit.models.server.echo).
- Words in a blank anywhere: each word put in the blank and its sentence scored, as above.
- Generation (`generate`): a chat's messages to the chat-completions endpoint, a plain prompt
  to the completions endpoint (tacit.models.server.generation).

A probe that asks for nothing but generation loads a ServerGenerator: its start checks are
the model served and the engine (a chat API gives no prompt log-probabilities to check), so
any chat-completions API serves.

The vocabulary at a blank (the next-token distribution over a whole vocabulary) is not asked
of a server: a completions API returns a few top tokens, not the whole distribution, so a
probe that needs it refuses the model in one line and names `--candidates` instead.
Sentences go `per_request` prompts to a request, `concurrency` requests at a time; each
distinct sentence is sent once.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tacit.core.blank import filled
from tacit.models.answers import Completion, GenerationRequest, Sampling, SpanTokens
from tacit.models.base import Scorer, SpanScores, progress_bar
from tacit.models.server.client import Client
from tacit.models.server.connect import (
    Served,
    connect,
    engine_of,
    sentence_logprobs,
    served_model,
)
from tacit.models.server.echo import Echo, echoes
from tacit.models.server.generation import generate

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tqdm.auto import tqdm

    from tacit.core.modelspec import ModelSpec
    from tacit.models.server.record import ServerRecord


class ServerGenerator(Scorer):
    """A model a server runs, asked only to generate (see the module docstring)."""

    kind: ClassVar[str] = "server"
    capabilities: ClassVar[frozenset[str]] = frozenset({"generate"})

    def __init__(
        self, text: str, spec: ModelSpec, client: Client, max_answer: int | None = None
    ) -> None:
        """Connect: a one-line error if the server is down or serves another model.
        `max_answer`: the `max_answer_bytes=` option (generation.answer_limit)."""
        self.name, self.spec, self.client, self.tokenizer = text, spec, client, None
        self.model_entry = served_model(client, spec.name)
        self.engine = engine_of(client)
        self.batch_size = 1  # one conversation a request, `concurrency` requests at a time
        self.where = f"{client.url} ({spec.name})"
        self.max_answer = max_answer
        self.answered_as: Counter[str] = Counter()  # the models the answers said they came from

    def chats(self) -> bool:
        """A server is asked through its chat endpoint (its model's own template)."""
        return True

    def record(self) -> ServerRecord:
        return {
            "name": self.name,
            "source": self.spec.name,
            "kind": self.kind,
            "class": type(self).__name__,
            "revision": None,
            "device": "server",
            "batch_size_used": None,  # requests are sent `concurrency` at a time: none halves
            "server": {
                "base_url": self.client.url,
                "model": self.model_entry,
                "engine": self.engine,
                "concurrency": self.client.concurrency,
                "timeout_s": self.client.timeout,
                "retries_allowed": self.client.retries,
                "retries_made": self.client.retried,
                **({"max_answer_bytes": self.max_answer} if self.max_answer else {}),
                # a server that refused `n`: each sampled draw asked on its own
                **({"draws": "one request a draw"} if self.client.takes_n is False else {}),
                # the models the answers named (a note where one is not the model asked for)
                **(
                    {"answered_as": dict(sorted(self.answered_as.items()))}
                    if self.answered_as
                    else {}
                ),
            },
        }

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        sampling: Sampling | None = None,
        *,
        progress: bool | tqdm = True,
    ) -> list[list[Completion]]:
        """As every scorer generates; the model each distinct answer named is counted."""
        answers = super().generate(requests, sampling, progress=progress)
        seen = {json.dumps(r.record(), sort_keys=True): a for r, a in zip(requests, answers)}
        self.answered_as.update(a[0].model for a in seen.values() if a and a[0].model)
        return answers

    def _generate(
        self,
        requests: list[GenerationRequest],
        sampling: Sampling,
        progress: bool | tqdm,
        each: Callable[[int, list[Completion]], None] | None = None,
    ) -> list[list[Completion]]:
        """Each request to its endpoint (tacit.models.server.generation), concurrently, each
        answer given to `each` as it comes."""
        with progress_bar(progress, len(requests), f"generating {self.name}", "request") as bar:
            return generate(
                self.client,
                self.spec.name,
                requests,
                sampling,
                bar.update,
                each=each,
                least=self.max_answer,
            )


class ServerScorer(ServerGenerator):
    """A model a completions server scores (see the module docstring)."""

    capabilities: ClassVar[frozenset[str]] = frozenset({"spans", "words", "generate"})

    def __init__(
        self,
        text: str,
        spec: ModelSpec,
        client: Client,
        *,
        batch_size: int,
        tokenizer: Any = None,
        tolerance: float,
        max_answer: int | None = None,
    ) -> None:
        """Connect and check the server (tacit.models.server.connect): a one-line error if it
        is down, serves another model, or its log-probabilities are missing or inconsistent."""
        self.name, self.spec, self.client, self.tokenizer = text, spec, client, tokenizer
        self.where = f"{client.url} ({spec.name})"
        self.max_answer = max_answer
        self.answered_as = Counter()
        self.served: Served = connect(
            client,
            spec.name,
            asked_per_request=batch_size,
            start_token=spec.start_token,
            tokenizer=tokenizer,
            tolerance=tolerance,
        )
        self.batch_size = self.served.per_request
        import torch

        # the engine's precision is not reported: counted as bfloat16, the widest tie
        # tolerance (tacit.ranking.ties), so near ties are settled on prompts scored alone
        self.dtype = torch.bfloat16
        self.max_tokens = self.served.max_tokens or self.max_tokens
        self.model_entry, self.engine = self.served.model, self.served.engine

    def record(self) -> ServerRecord:
        """The generator's record, with what the start checks found for scoring."""
        record = super().record()
        served = self.served
        record["server"] |= {
            "start_token": served.start_record,
            "consistency_check": served.check,
            "prompts_per_request": served.per_request,
            "planning_tokenizer": planning_tokenizer(self.spec, self.tokenizer),
        }
        return record

    def _echoes(self, sentences: list[str], bar: tqdm) -> list[Echo]:
        start = self.served.start
        return echoes(
            self.client,
            self.spec.name,
            [start + s for s in sentences],
            self.batch_size,
            bar.update,
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
        """Every span in every template's blank (distinct both), each sentence sent once: a
        causal LM reads left to right whatever the `scoring`; `cache` is the server's. With
        `tokens`, the span's tokens as the echo writes them, and their terms."""
        pairs = [filled(t, s) for t in templates for s in spans]
        shape = (len(templates), len(spans))
        with progress_bar(progress, len(pairs), f"scoring spans {self.name}", "sentence") as bar:
            read = self._echoes([text for text, _, _ in pairs], bar)
        skip = len(self.served.start)
        sentence, span = np.zeros(len(pairs)), np.zeros(len(pairs))
        n_tokens = np.zeros(len(pairs), dtype=np.int64)
        kept = np.empty(len(pairs), dtype=object) if tokens else None
        for n, ((_, first, last), echo) in enumerate(zip(pairs, read)):
            values = np.asarray(sentence_logprobs(echo, self.served.start, self.where))
            own = echo.bounds[:, 0] >= skip
            bounds = echo.bounds[own] - skip
            inside = (bounds[:, 0] < last) & (bounds[:, 1] > first) & (last > first)
            sentence[n], span[n], n_tokens[n] = values.sum(), values[inside].sum(), inside.sum()
            if kept is not None:
                texts = np.asarray(echo.tokens, dtype=object)[own][inside]
                kept[n] = SpanTokens(tuple(texts.tolist()), values[inside].astype(np.float64))
        # the tokens the server ran: each sentence whole, with its start token
        ran = int(sum(len(e.tokens) + len(e.added) for e in read))
        return SpanScores(
            span=span.reshape(shape),
            n_tokens=n_tokens.reshape(shape),
            sentence=sentence.reshape(shape),
            work={"span_tokens": ran, "span_tokens_naive": ran},
            tokens=None if kept is None else kept.reshape(shape),
        )

    def _words_in_place(
        self, texts: list[str], words: list[str], progress: bool | tqdm
    ) -> Iterator[tuple[np.ndarray, Any]]:
        """Every word in the blank of each text, its sentence scored (as in-process causal
        models do): a word's score is log P(sentence), which ranks words as P(word | the
        rest)."""
        scores = self._span_scores(texts, words, "l2r", progress, True)
        assert scores.sentence is not None
        yield np.arange(len(texts)), scores.sentence.astype(np.float32)


def planning_tokenizer(spec: ModelSpec, tokenizer: Any) -> str | None:
    """Which tokenizer the probes planned with, for the manifest."""
    if spec.get("tokenizer") is not None:
        return str(spec.get("tokenizer"))
    return getattr(tokenizer, "source", None)
