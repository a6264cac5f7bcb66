"""Generation by an OpenAI-compatible server: a chat's messages to `/v1/chat/completions`, a
plain prompt to `/v1/completions` (no echo), one request each, `concurrency` at a time,
through the family's client (its retries and one-line errors).

- Greedy (temperature 0) asks for one completion (some engines refuse `n` > 1 when greedy,
  and greedy completions are one anyway) and gives it `n` times.
- Sampled, each request carries `n` and a seed of its own (Sampling.seed and the request:
  tacit.models.answers.request_seed), for engines that take one (vLLM, SGLang, llama.cpp;
  OpenAI's own API tries to honour it).
- `logprobs` > 0 asks for the generated tokens' log-probabilities and that many top
  alternatives (chat: `logprobs: true, top_logprobs: K`; completions: `logprobs: K`).
- What the answer lacks is not an error: a choice with no content is an empty text, a choice
  missing from the answer an empty text with `finish_reason: no_choice`, so that the caller
  counts them as answers that say nothing.
- Tokens counted as the server's `usage` says (prompt tokens once a request; its completion
  tokens per completion where the tokens are listed, else the request's total on its first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tacit.models.answers import (
    NO_CHOICE,
    Completion,
    GeneratedToken,
    GenerationRequest,
    Sampling,
    request_seed,
)
from tacit.models.server.client import Client

CHAT = "/chat/completions"
COMPLETIONS = "/completions"


def body(model: str, request: GenerationRequest, sampling: Sampling) -> tuple[str, dict[str, Any]]:
    """(the API path, the request's body) for one request (see the module docstring)."""
    asked: dict[str, Any] = {
        "model": model,
        "n": 1 if sampling.greedy else sampling.n,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
    }
    if not sampling.greedy and sampling.seed is not None:
        asked["seed"] = request_seed(sampling.seed, request)
    if sampling.stop:
        asked["stop"] = list(sampling.stop)
    if request.messages is not None:
        asked["messages"] = [dict(m) for m in request.messages]
        if sampling.logprobs:
            asked |= {"logprobs": True, "top_logprobs": sampling.logprobs}
        return CHAT, asked
    asked |= {"prompt": request.prompt, "echo": False}
    if sampling.logprobs:
        asked["logprobs"] = sampling.logprobs
    return COMPLETIONS, asked


def generate(
    client: Client,
    model: str,
    requests: Sequence[GenerationRequest],
    sampling: Sampling,
    done: Callable[[int], None] | None = None,
) -> list[list[Completion]]:
    """`sampling.n` completions of each request, in order; chat requests and plain prompts
    each to their endpoint, concurrently; `done(1)` as each answer comes back."""
    asked = [body(model, r, sampling) for r in requests]
    found: list[list[Completion]] = [[] for _ in requests]
    for path in (CHAT, COMPLETIONS):
        chosen = [n for n, (p, _) in enumerate(asked) if p == path]
        if not chosen:
            continue
        answers = client.post_all(
            path,
            [asked[n][1] for n in chosen],
            None if done is None else lambda i, _: done(1),
        )
        for n, answer in zip(chosen, answers):
            found[n] = read(answer, path, sampling)
    return found


def read(answer: Any, path: str, sampling: Sampling) -> list[Completion]:
    """An answer's completions, `sampling.n` of them (see the module docstring)."""
    asked = 1 if sampling.greedy else sampling.n
    answer = answer if isinstance(answer, Mapping) else {}
    listed = answer.get("choices")
    choices = {
        int(c.get("index", at)): c
        for at, c in enumerate(listed if isinstance(listed, list) else [])
        if isinstance(c, Mapping)
    }
    usage = answer.get("usage") if isinstance(answer.get("usage"), Mapping) else {}
    prompt_tokens = _count(usage.get("prompt_tokens"))
    total = _count(usage.get("completion_tokens"))
    completions = []
    for n in range(asked):
        choice = choices.get(n)
        if choice is None:
            completions.append(Completion("", NO_CHOICE, None, prompt_tokens, 0))
            continue
        if path == CHAT:
            message = choice.get("message")
            text = message.get("content") if isinstance(message, Mapping) else None
            tokens = chat_tokens(choice.get("logprobs"), sampling.logprobs)
        else:
            text = choice.get("text")
            tokens = completion_tokens(choice.get("logprobs"), sampling.logprobs)
        if tokens is not None:
            ran: int | None = len(tokens)
        else:
            ran = total if n == 0 else (None if total is None else 0)
        completions.append(
            Completion(
                text if isinstance(text, str) else "",
                str(choice.get("finish_reason") or ""),
                tokens,
                prompt_tokens,
                ran,
            )
        )
    return completions if not sampling.greedy else completions * sampling.n


def _float(value: Any) -> float:
    """A log-probability as given; NaN where the server gave none."""
    return float(value) if isinstance(value, (int, float)) else float("nan")


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) else None


def _top(pairs: Sequence[tuple[str, float]], k: int) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(pairs, key=lambda pair: -pair[1])[:k])


def chat_tokens(logprobs: Any, k: int) -> tuple[GeneratedToken, ...] | None:
    """A chat choice's `logprobs.content` ({token, logprob, top_logprobs: [{token,
    logprob}]} each) as GeneratedTokens; None where it has none."""
    content = logprobs.get("content") if isinstance(logprobs, Mapping) and k else None
    if not isinstance(content, list):
        return None
    return tuple(
        GeneratedToken(
            str(entry.get("token", "")),
            _float(entry.get("logprob")),
            _top(
                [
                    (str(t.get("token", "")), _float(t.get("logprob")))
                    for t in entry.get("top_logprobs") or []
                    if isinstance(t, Mapping)
                ],
                k,
            ),
        )
        for entry in content
        if isinstance(entry, Mapping)
    )


def completion_tokens(logprobs: Any, k: int) -> tuple[GeneratedToken, ...] | None:
    """A completion choice's `logprobs` (tokens, token_logprobs, top_logprobs: a {token:
    logprob} per token) as GeneratedTokens; None where it has none."""
    if not isinstance(logprobs, Mapping) or not k:
        return None
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list):
        return None
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    return tuple(
        GeneratedToken(
            str(token),
            _float(value),
            _top([(str(t), _float(v)) for t, v in (top or {}).items()], k),
        )
        for token, value, top in zip(tokens, values, tops)
    )
