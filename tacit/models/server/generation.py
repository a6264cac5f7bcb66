"""Generation by an OpenAI-compatible server: a chat's messages to `/v1/chat/completions`, a
plain prompt to `/v1/completions` (no echo), one request each, `concurrency` at a time,
through the family's client (its deadline, retries and one-line errors).

- Greedy (temperature 0) asks for one completion (some engines refuse `n` > 1 when greedy)
  and gives it `n` times. Sampled, each request carries `n` and a seed of its own
  (tacit.models.answers.request_seed): its N draws in one request. A server that refuses `n`
  (a 400 or 422 to a request with `n` > 1) is asked for each draw on its own from then on
  (`Client.takes_n`), one request a draw with `n` 1, draw d seeded by `draw_seed`.
  `logprobs` > 0 asks for the generated tokens' log-probabilities and that many
  alternatives.
- An answer is read up to `answer_limit` bytes (from max_tokens, n and logprobs; the
  `max_answer_bytes=` option raises it): a longer one is cut there and its completions are
  `oversized` (counted, never matched). A missing choice is `no_choice`, an empty content an
  empty text: answers that say nothing, counted as such.
- `read` is the one reader of an answer: every field it takes is checked for its type and
  range, and one that is not what the API says is one line naming the request and the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tacit.core.errors import shorten
from tacit.models.answers import (
    NO_CHOICE,
    OVERSIZED,
    Completion,
    GeneratedToken,
    GenerationRequest,
    Sampling,
    request_seed,
)
from tacit.models.server.client import Client, Cut, ServerError

CHAT = "/chat/completions"
COMPLETIONS = "/completions"
ANSWER_BASE = 256 << 10  # bytes of an answer beside its tokens: ids, usage, the JSON around
# bytes a generated token may take in an answer, at worst: its text as JSON escapes it (up to
# 6 bytes a character) with its log-probability entry, and as much again per alternative
TOKEN_BYTES = 128
COUNT_LIMIT = 2**53  # a token count above this is no count a float can hold exactly
REASON_LIMIT = 64  # characters of a finish reason (a word, `stop`, `length`, a server's own)


def answer_limit(sampling: Sampling, least: int | None = None) -> int:
    """The most bytes of an answer read (see the module docstring).

    Examples:
        >>> answer_limit(Sampling(max_tokens=64))
        270336
    """
    n = 1 if sampling.greedy else sampling.n
    derived = ANSWER_BASE + n * sampling.max_tokens * TOKEN_BYTES * (1 + sampling.logprobs)
    return max(derived, least or 0)


def body(
    model: str, request: GenerationRequest, sampling: Sampling, draw: int | None = None
) -> tuple[str, dict[str, Any]]:
    """(the API path, the request's body) for one request (see the module docstring);
    `draw`: the seed of one draw asked on its own (draw_seed)."""
    asked: dict[str, Any] = {
        "model": model,
        "n": 1 if sampling.greedy else sampling.n,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
    }
    if not sampling.greedy and sampling.seed is not None:
        asked["seed"] = request_seed(sampling.seed, request) if draw is None else draw
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
    *,
    each: Callable[[int, list[Completion]], None] | None = None,
    least: int | None = None,
) -> list[list[Completion]]:
    """`sampling.n` completions of each request, in order; chat requests and plain prompts
    each to their endpoint, concurrently. As each answer comes back it is read, given to
    `each(n, completions)` (the run keeps it at once: tacit.models.answered) and counted by
    `done(1)`. `least`: the `max_answer_bytes=` option (answer_limit). Sampled draws go N to
    a request, or one a request where the server refuses `n` (the module docstring)."""
    several = not sampling.greedy and sampling.n > 1
    if several and client.takes_n is False:
        return draws(client, model, requests, sampling, done, each=each, least=least)
    found: list[list[Completion]] = [[] for _ in requests]
    try:
        _together(client, model, requests, sampling, found, done, each, least)
    except ServerError as err:
        if not several or client.takes_n or err.status not in (400, 422):
            raise
        client.takes_n = False  # asked for each draw alone; refused again: that error
        left = [n for n, said in enumerate(found) if not said]

        def kept(at: int, completions: list[Completion]) -> None:
            found[left[at]] = completions
            if each is not None:
                each(left[at], completions)

        rest = [requests[n] for n in left]
        draws(client, model, rest, sampling, done, each=kept, least=least)
        return found
    if several:
        client.takes_n = True
    return found


def draw_seed(seed: int, request: GenerationRequest, draw: int) -> int:
    """The seed of a request's draw `draw` asked on its own (a server that refuses `n`):
    from the run's seed, the request and the draw, a 31-bit number."""
    from tacit.core.cache import fingerprint

    return int(fingerprint(seed, request.record(), draw)[:8], 16) & 0x7FFFFFFF


def draws(
    client: Client,
    model: str,
    requests: Sequence[GenerationRequest],
    sampling: Sampling,
    done: Callable[[int], None] | None = None,
    *,
    each: Callable[[int, list[Completion]], None] | None = None,
    least: int | None = None,
) -> list[list[Completion]]:
    """`sampling.n` draws of each request, one request a draw (`n` 1, seeded by draw_seed):
    a request's completions, in draw order, given to `each` once all have come."""
    one = replace(sampling, n=1)
    n = sampling.n
    seeds = [
        [None if sampling.seed is None else draw_seed(sampling.seed, r, d) for d in range(n)]
        for r in requests
    ]
    asked = [body(model, r, one, seeds[i][d]) for i, r in enumerate(requests) for d in range(n)]
    found: list[list[Completion | None]] = [[None] * n for _ in requests]
    limit = answer_limit(one, least)
    for path in (CHAT, COMPLETIONS):
        chosen = [at for at, (p, _) in enumerate(asked) if p == path]
        if not chosen:
            continue

        def arrived(i: int, answer: Any, path: str = path, chosen: list[int] = chosen) -> None:
            request, draw = divmod(chosen[i], n)
            where = asking(client, path, request, requests)
            found[request][draw] = read(answer, path, one, where)[0]
            if all(c is not None for c in found[request]):
                whole = [c for c in found[request] if c is not None]
                if each is not None:
                    each(request, whole)
                if done is not None:
                    done(1)

        client.post_all(path, [asked[at][1] for at in chosen], arrived, limit=limit, cut=True)
    return [[c for c in said if c is not None] for said in found]


def _together(
    client: Client,
    model: str,
    requests: Sequence[GenerationRequest],
    sampling: Sampling,
    found: list[list[Completion]],
    done: Callable[[int], None] | None,
    each: Callable[[int, list[Completion]], None] | None,
    least: int | None,
) -> None:
    """Each request's `sampling.n` completions in one request, put in `found` as they come."""
    asked = [body(model, r, sampling) for r in requests]
    limit = answer_limit(sampling, least)
    for path in (CHAT, COMPLETIONS):
        chosen = [n for n, (p, _) in enumerate(asked) if p == path]
        if not chosen:
            continue

        def arrived(i: int, answer: Any, path: str = path, chosen: list[int] = chosen) -> None:
            n = chosen[i]
            found[n] = read(answer, path, sampling, asking(client, path, n, requests))
            if each is not None:
                each(n, found[n])
            if done is not None:
                done(1)

        client.post_all(path, [asked[n][1] for n in chosen], arrived, limit=limit, cut=True)


def asking(client: Client, path: str, n: int, requests: Sequence[GenerationRequest]) -> str:
    """Which request an answer is to, as an error names it."""
    request = requests[n]
    said = request.prompt if request.messages is None else request.messages[-1]["content"]
    return f"{client.where(path)}, request {n + 1} of {len(requests)} ({shorten(repr(said), 50)})"


class Malformed(ServerError):
    """An answer with a field that is not what the API says, in one line naming the request
    and the field."""


def _malformed(where: str, field: str, value: Any, expected: str) -> Malformed:
    if isinstance(value, Mapping | list):
        shown = f"a JSON {'object' if isinstance(value, Mapping) else 'list'}"
    else:
        shown = shorten(repr(value), 40)
    return Malformed(f"{where}: the answer's {field} is {shown}, not {expected}", 200)


def read(answer: Any, path: str, sampling: Sampling, where: str) -> list[Completion]:
    """An answer's completions, `sampling.n` of them (see the module docstring), every field
    checked (a thinking model's `reasoning_content` with the others): `where` names the
    request in an error."""
    asked = 1 if sampling.greedy else sampling.n
    if isinstance(answer, Cut):  # longer than its bound: unread
        return [Completion("", OVERSIZED, None, None, None)] * sampling.n
    if not isinstance(answer, Mapping):
        raise _malformed(where, "body", answer, "a JSON object")
    model = answer.get("model")
    if model is not None and not isinstance(model, str):
        raise _malformed(where, "model", model, "a model's name")
    listed = answer.get("choices", [])
    if not isinstance(listed, list):
        raise _malformed(where, "choices", listed, "a list")
    choices: dict[int, tuple[str, Mapping[str, Any]]] = {}
    for at, choice in enumerate(listed):
        field = f"choices[{at}]"
        if not isinstance(choice, Mapping):
            raise _malformed(where, field, choice, "a JSON object")
        index = choice.get("index", at)
        if not _whole(index) or not 0 <= index < asked:
            raise _malformed(where, f"{field}.index", index, f"a choice's number below {asked}")
        if int(index) in choices:
            raise _malformed(where, f"{field}.index", index, "a number no other choice has")
        choices[int(index)] = field, choice
    usage = answer.get("usage") or {}
    if not isinstance(usage, Mapping):
        raise _malformed(where, "usage", usage, "a JSON object")
    prompt_tokens = _count(usage.get("prompt_tokens"), where, "usage.prompt_tokens")
    total = _count(usage.get("completion_tokens"), where, "usage.completion_tokens")
    details = usage.get("completion_tokens_details") or {}
    if not isinstance(details, Mapping):
        raise _malformed(where, "usage.completion_tokens_details", details, "a JSON object")
    thinking = _count(
        details.get("reasoning_tokens"), where, "usage.completion_tokens_details.reasoning_tokens"
    )
    completions = []
    for n in range(asked):
        if n not in choices:
            completions.append(Completion("", NO_CHOICE, None, prompt_tokens, 0, model=model))
            continue
        field, choice = choices[n]
        text = _text(choice, path, where, field)
        reason = choice.get("finish_reason")
        if reason is not None and (not isinstance(reason, str) or len(reason) > REASON_LIMIT):
            raise _malformed(where, f"{field}.finish_reason", reason, "a finish reason")
        logprobs = choice.get("logprobs")
        if path == CHAT:
            tokens = chat_tokens(logprobs, sampling.logprobs, where, f"{field}.logprobs")
        else:
            tokens = completion_tokens(logprobs, sampling.logprobs, where, f"{field}.logprobs")
        if tokens is not None:
            ran: int | None = len(tokens)
        else:
            ran = total if n == 0 else (None if total is None else 0)
        reasoning = _reasoning(choice, path, where, field)
        thought = None if thinking is None else (thinking if n == 0 else 0)
        completions.append(
            Completion(
                text,
                reason or "",
                tokens,
                prompt_tokens,
                ran,
                model=model,
                reasoning=reasoning,
                reasoning_tokens=thought if reasoning is not None or thinking else None,
            )
        )
    return completions if not sampling.greedy else completions * sampling.n


def _text(choice: Mapping[str, Any], path: str, where: str, field: str) -> str:
    """A choice's text: a completion's `text`; a chat message's `content` (a text, or a list
    of content parts, whose texts are joined), else its `refusal` (what a model that declines
    says instead); empty where it has none."""
    if path != CHAT:
        text = choice.get("text")
        if text is not None and not isinstance(text, str):
            raise _malformed(where, f"{field}.text", text, "a text")
        return text or ""
    message = choice.get("message")
    if message is None:
        return ""
    if not isinstance(message, Mapping):
        raise _malformed(where, f"{field}.message", message, "a JSON object")
    content = message.get("content")
    if isinstance(content, list):  # content parts: {"type": "text", "text": ...} and others
        parts: list[str] = []
        for at, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else None
            said = part.get(kind) if isinstance(part, Mapping) and isinstance(kind, str) else None
            if not isinstance(kind, str) or (
                kind in ("text", "refusal") and not isinstance(said, str)
            ):
                raise _malformed(where, f"{field}.message.content[{at}]", part, "a content part")
            if kind in ("text", "refusal") and isinstance(said, str):
                parts.append(said)
        content = "".join(parts)
    if content is not None and not isinstance(content, str):
        raise _malformed(where, f"{field}.message.content", content, "a text")
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise _malformed(where, f"{field}.message.refusal", refusal, "a text")
    return content or refusal or ""


def _reasoning(choice: Mapping[str, Any], path: str, where: str, field: str) -> str | None:
    """A chat message's thinking (`reasoning_content`: vLLM, SGLang, llama.cpp, DeepSeek;
    else `reasoning`, vLLM's newer name), or None; its tokens are usage's
    `completion_tokens_details.reasoning_tokens`, on the first completion (a `<think>` in the
    content is kept apart by Scorer.generate: tacit.models.answers.thought)."""
    message = choice.get("message") if path == CHAT else None
    if not isinstance(message, Mapping):
        return None
    for name in ("reasoning_content", "reasoning"):
        said = message.get(name)
        if said is not None and not isinstance(said, str):
            raise _malformed(where, f"{field}.message.{name}", said, "a text")
        if said:
            return said
    return None


def _whole(value: Any) -> bool:
    """Is `value` a whole number as JSON writes one (not a boolean, not 1.5, not NaN)?"""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value == int(value)


def _count(value: Any, where: str, field: str) -> int | None:
    """A token count (None where the server gives none); anything else is one line."""
    if value is None:
        return None
    if not _whole(value) or not 0 <= value < COUNT_LIMIT:
        raise _malformed(where, field, value, "a count of tokens")
    return int(value)


def _float(value: Any) -> float:
    """A log-probability as given; NaN where the server gave none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return float("nan")
    return float(value)


def _top(pairs: Sequence[tuple[str, float]], k: int) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(pairs, key=lambda pair: -pair[1] if pair[1] == pair[1] else math.inf)[:k])


def _token(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str):
        raise _malformed(where, field, value, "a token's text")
    return value


def chat_tokens(
    logprobs: Any, k: int, where: str = "", field: str = "logprobs"
) -> tuple[GeneratedToken, ...] | None:
    """A chat choice's `logprobs.content` ({token, logprob, top_logprobs: [{token,
    logprob}]} each) as GeneratedTokens; None where it has none (or none was asked)."""
    if not k or logprobs is None:
        return None
    if not isinstance(logprobs, Mapping):
        raise _malformed(where, field, logprobs, "a JSON object")
    content = logprobs.get("content")
    if content is None:
        return None
    if not isinstance(content, list):
        raise _malformed(where, f"{field}.content", content, "a list")
    tokens = []
    for at, entry in enumerate(content):
        here = f"{field}.content[{at}]"
        if not isinstance(entry, Mapping):
            raise _malformed(where, here, entry, "a JSON object")
        alternatives = entry.get("top_logprobs") or []
        if not isinstance(alternatives, list) or not all(
            isinstance(t, Mapping) for t in alternatives
        ):
            raise _malformed(where, f"{here}.top_logprobs", alternatives, "a list of objects")
        top = [
            (_token(t.get("token", ""), where, f"{here}.top_logprobs"), _float(t.get("logprob")))
            for t in alternatives
        ]
        text = _token(entry.get("token", ""), where, f"{here}.token")
        tokens.append(GeneratedToken(text, _float(entry.get("logprob")), _top(top, k)))
    return tuple(tokens)


def completion_tokens(
    logprobs: Any, k: int, where: str = "", field: str = "logprobs"
) -> tuple[GeneratedToken, ...] | None:
    """A completion choice's `logprobs` (tokens, token_logprobs, top_logprobs: a {token:
    logprob} per token) as GeneratedTokens; None where it has none (or none was asked)."""
    if not k or logprobs is None:
        return None
    if not isinstance(logprobs, Mapping):
        raise _malformed(where, field, logprobs, "a JSON object")
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if tokens is None or values is None:
        return None
    for name, listed in (("tokens", tokens), ("token_logprobs", values)):
        if not isinstance(listed, list) or len(listed) != len(tokens):
            raise _malformed(where, f"{field}.{name}", listed, "a list, one entry a token")
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    if not isinstance(tops, list) or not all(t is None or isinstance(t, Mapping) for t in tops):
        raise _malformed(where, f"{field}.top_logprobs", tops, "a list of objects")
    return tuple(
        GeneratedToken(
            _token(token, where, f"{field}.tokens[{at}]"),
            _float(value),
            _top([(str(t), _float(v)) for t, v in (top or {}).items()], k),
        )
        for at, (token, value, top) in enumerate(
            zip(tokens, values, [*tops, *[None] * len(tokens)])
        )
    )
