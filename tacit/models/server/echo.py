"""What a completions server says about a prompt: its tokens, their log-probabilities and where
each lies in the prompt's text, from an echo (`echo=True, logprobs=1`), and its next-token
log-probabilities (`logprobs=K` without echo).

Every echo asks for one generated token, which is dropped: `max_tokens=0` is refused by some
vLLM versions ("max_tokens must be at least 1") and read as "no limit" by llama-cpp-python, as
lm-evaluation-harness found too. Which of the echoed tokens are the prompt's is read from their
text, not counted: the tokens' texts joined are the server's own start token (if it adds one),
the prompt, then the generated token (or nothing, where it generated the end of text), so the
prompt is found in them at a token boundary. A token's characters in the prompt come from the
same texts (a server's `text_offset` counts the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tacit.core.errors import TacitError, shorten
from tacit.models.server.client import Client


class UnreadEcho(TacitError):
    """A server's echoed tokens that do not spell the prompt (see read_echo)."""


@dataclass(frozen=True)
class Echo:
    """One prompt as the server read it: its tokens' texts, each token's characters [start,
    end) in the prompt, and log P(token | the tokens before it) (None: the server gave none);
    `added`: the tokens the server put before the prompt (its own start token)."""

    text: str
    tokens: list[str]
    bounds: np.ndarray
    logprobs: list[float | None]
    added: list[str]


def read_echo(choice: Mapping[str, Any], text: str, where: str) -> Echo:
    """The prompt's tokens in one answer's choice (see the module docstring)."""
    logprobs = choice.get("logprobs") or {}
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not tokens or values is None or len(values) != len(tokens):
        raise TacitError(
            f"{where}: no prompt log-probabilities in its answer to echo=true, logprobs=1: the "
            "server cannot score sentences (serve the model with an engine that returns them: "
            "vLLM, llama.cpp's server, SGLang)"
        )
    texts = ["" if t is None else str(t) for t in tokens]
    ends = np.cumsum([len(t) for t in texts])
    starts = ends - [len(t) for t in texts]
    joined = "".join(texts)
    boundaries = {0, *ends.tolist()}
    first = next(
        (
            a
            for a in sorted(boundaries)
            if joined.startswith(text, a) and a + len(text) in boundaries
        ),
        None,
    )
    if first is None:
        raise UnreadEcho(
            f"{where}: the server's tokens of {shorten(repr(text))} read back as "
            f"{shorten(repr(joined))}: tacit cannot tell which tokens are the prompt's"
        )
    last = first + len(text)
    # the prompt's tokens: those within its characters, less the empty ones before its first
    # character (a start token the server writes as nothing) and after its last (the end of
    # text generated)
    inside = np.flatnonzero((starts >= first) & (ends <= last))
    nonempty = inside[starts[inside] < ends[inside]]
    if len(nonempty):
        inside = inside[(inside >= nonempty[0]) & (inside <= nonempty[-1])]
    added = [texts[i] for i in range(len(texts)) if i < (inside[0] if len(inside) else 0)]
    return Echo(
        text=text,
        tokens=[texts[i] for i in inside],
        bounds=np.stack([starts[inside] - first, ends[inside] - first], axis=1),
        logprobs=[None if values[i] is None else float(values[i]) for i in inside],
        added=added,
    )


def echo_body(model: str, prompts: Sequence[str]) -> dict[str, Any]:
    """A request for the prompts' own log-probabilities (one token generated, dropped)."""
    return {
        "model": model,
        "prompt": list(prompts),
        "echo": True,
        "logprobs": 1,
        "max_tokens": 1,
        "temperature": 0,
    }


def next_body(model: str, prompts: Sequence[str], top: int) -> dict[str, Any]:
    """A request for the `top` most likely next tokens after each prompt, with their
    log-probabilities."""
    return {
        "model": model,
        "prompt": list(prompts),
        "logprobs": top,
        "max_tokens": 1,
        "temperature": 0,
    }


def choices(answer: Any, n: int, where: str) -> list[Mapping[str, Any]]:
    """An answer's choices in the order of the prompts asked (one each)."""
    found = answer.get("choices") if isinstance(answer, Mapping) else None
    if not isinstance(found, list) or len(found) != n:
        got = len(found) if isinstance(found, list) else "no"
        raise TacitError(f"{where}: {got} choices in the answer to {n} prompt(s)")
    return sorted(found, key=lambda c: c.get("index", 0))


def batched(texts: Sequence[str], per_request: int) -> list[list[str]]:
    return [list(texts[i : i + per_request]) for i in range(0, len(texts), per_request)]


def echoes(
    client: Client,
    model: str,
    texts: Sequence[str],
    per_request: int,
    done: Callable[[int], None] | None = None,
) -> list[Echo]:
    """Each text echoed, `per_request` prompts a request, concurrently; `done(n)` as each
    request's n prompts come back."""
    where = client.where("/completions")
    groups = batched(texts, per_request)
    answers = client.post_all(
        "/completions",
        [echo_body(model, group) for group in groups],
        None if done is None else lambda i, _: done(len(groups[i])),
    )
    return [
        read_echo(choice, text, where)
        for group, answer in zip(groups, answers)
        for choice, text in zip(choices(answer, len(group), where), group)
    ]


def next_tokens(
    client: Client, model: str, texts: Sequence[str], per_request: int, top: int
) -> list[dict[str, float]]:
    """The `top` most likely next tokens after each text (their texts and log-probabilities),
    as the server answers a completion request."""
    where = client.where("/completions")
    groups = batched(texts, per_request)
    answers = client.post_all("/completions", [next_body(model, g, top) for g in groups])
    found = []
    for group, answer in zip(groups, answers):
        for choice in choices(answer, len(group), where):
            tops = (choice.get("logprobs") or {}).get("top_logprobs") or [None]
            if not isinstance(tops[0], Mapping):
                raise TacitError(
                    f"{where}: no next-token log-probabilities in its answer to logprobs={top}: "
                    "tacit cannot check the server's prompt log-probabilities against them"
                )
            found.append({str(k): float(v) for k, v in tops[0].items() if v is not None})
    return found
