"""The planning tokenizer of a served model, from the server's own tokenize endpoint: what the
probes check candidate spans with (each read whole: tacit.vocab.shared.span_problems), so
that the tokens planned with are the tokens scored.

Each engine has its own route: vLLM's `/tokenize` and `/detokenize` (`prompt`,
`add_special_tokens`), llama.cpp's server's (`content`, `add_special`), llama-cpp-python's
`/extras/tokenize` and `/extras/detokenize` (which always put the model's BOS first: it is
taken off). The first route that answers is used. It knows no special tokens' texts (a
server does not say them): the start token comes from the server or from `start_token=` /
`tokenizer=` (tacit.models.server.connect).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tacit.core.errors import TacitError
from tacit.models.server.client import Client


@dataclass(frozen=True)
class Route:
    """One engine's tokenize and detokenize endpoints: the bodies it takes, the key of the
    answer."""

    engine: str
    tokenize: str
    tokenize_body: Callable[[str, str], dict[str, Any]]  # (model, text) -> body
    detokenize: str
    detokenize_body: Callable[[str, list[int]], dict[str, Any]]
    text_key: str


ROUTES = (
    Route(
        "vLLM",
        "/tokenize",
        lambda model, text: {"model": model, "prompt": text, "add_special_tokens": False},
        "/detokenize",
        lambda model, ids: {"model": model, "tokens": ids},
        "prompt",
    ),
    Route(
        "llama.cpp server",
        "/tokenize",
        lambda model, text: {"content": text, "add_special": False},
        "/detokenize",
        lambda model, ids: {"tokens": ids},
        "content",
    ),
    Route(
        "llama-cpp-python",
        "/extras/tokenize",
        lambda model, text: {"model": model, "input": text},
        "/extras/detokenize",
        lambda model, ids: {"model": model, "tokens": ids},
        "text",
    ),
)


class ServerTokenizer:
    """Tokenize and decode by asking the server (the subset of a transformers tokenizer the
    probes plan with: called on texts, `decode`; no unknown token)."""

    unk_token_id = None
    bos_token = None
    eos_token = None

    def __init__(self, client: Client, model: str, route: Route, first: list[int]) -> None:
        self.client, self.model, self.route, self._first = client, model, route, first
        self.source = client.where(route.tokenize, root=True)

    def _ids(self, answer: Any) -> list[int]:
        ids = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise TacitError(f"{self.source}: its answer holds no token ids")
        return ids[len(self._first) :] if ids[: len(self._first)] == self._first else ids

    def __call__(self, texts: str | Sequence[str], **_: Any) -> dict[str, Any]:
        """{"input_ids": each text's ids, without special tokens}."""
        many = [texts] if isinstance(texts, str) else list(texts)
        bodies = [self.route.tokenize_body(self.model, t) for t in many]
        answers = self.client.post_all(self.route.tokenize, bodies, root=True)
        ids = [self._ids(a) for a in answers]
        return {"input_ids": ids[0] if isinstance(texts, str) else ids}

    def encode(self, text: str, **_: Any) -> list[int]:
        ids: list[int] = self(text)["input_ids"]
        return ids

    def decode(self, ids: Sequence[int], **_: Any) -> str:
        body = self.route.detokenize_body(self.model, [int(i) for i in ids])
        answer = self.client.post(self.route.detokenize, body, root=True)
        text = answer.get(self.route.text_key) if isinstance(answer, dict) else None
        if not isinstance(text, str):
            raise TacitError(f"{self.client.where(self.route.detokenize, root=True)}: no text")
        return text


def server_tokenizer(client: Client, model: str) -> ServerTokenizer | None:
    """The first route the server answers with token ids (see the module docstring), or None.
    A route is tried on a word (a server that ignores a body it does not know answers no ids
    for it) and on nothing (the ids the route puts before every text, taken off)."""
    for route in ROUTES:
        try:
            word, empty = (
                client.post(route.tokenize, route.tokenize_body(model, text), root=True, retries=0)
                for text in ("a", "")
            )
        except TacitError:
            continue
        ids = [a.get("tokens") if isinstance(a, dict) else None for a in (word, empty)]
        if ids[0] and all(isinstance(i, list) and all(isinstance(t, int) for t in i) for i in ids):
            return ServerTokenizer(client, model, route, list(ids[1] or []))
    return None
