"""What tacit checks of a server once, before it scores anything with it, and records.

1. It serves the model asked for (`/v1/models`), and which engine it is, where it says
   (engine_of); an engine known to give no usable prompt log-probabilities (llama.cpp's
   llama-server, llama-cpp-python's server) is refused at once, naming its limit
   (refuse_known).
2. Whether it takes several prompts in one request (llama-cpp-python's server takes one).
3. The start token (DESIGN.md: a causal sentence's first token is conditioned on one): a
   server that puts its own before every prompt (a tokenizer that adds a BOS, as Llama's does)
   keeps it; where it adds none (GPT-2's), tacit writes the start token's text before each
   sentence, the in-process family's choice (tacit.models.start's one rule on `tokenizer=`)
   or `start_token=`, and checks that the server reads it as one token.
4. That its prompt log-probabilities are consistent with its own next-token answers: for each
   token position i of a known sentence, the server's `K` most likely next tokens after the
   sentence's first i tokens (a completion, no echo) and their log-probabilities; each such
   token put after those i tokens and echoed must get the same log-probability as a prompt
   token. A server that reads each prompt token under the distribution at its own position,
   not the one before (llama-cpp-python 0.3's echo, where the model adds no BOS), fails by
   nats and is refused in one line; so is one that gives no log-probability for a sentence's
   first token. Only pairs where the next token reads back as one token in place are
   compared (a token that merges with the text before it cannot be).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tacit.core.errors import TacitError, shorten
from tacit.models.server.client import Client, ServerError
from tacit.models.server.echo import Echo, UnreadEcho, echoes, next_tokens

CHECK_SENTENCE = "Everyone knows that a bear has fur."
CHECK_TOP = 5  # next tokens compared per position (OpenAI's legacy API allows up to 5)
CHECK_TOLERANCE = 0.1  # nats: a prompt read at the wrong position is off by whole nats
CHECK_AT_LEAST = 3  # pairs compared, or the server cannot be checked


@dataclass
class Served:
    """What the start checks found (see the module docstring), as the manifest records it."""

    model: dict[str, Any]
    engine: dict[str, Any]
    start: str  # the text tacit writes before each sentence ("": the server adds its own)
    start_record: dict[str, Any]
    per_request: int
    check: dict[str, Any] = field(default_factory=dict)

    @property
    def max_tokens(self) -> int | None:
        """The longest prompt the server takes, where it says (vLLM's `max_model_len`), less
        the token it generates."""
        length = self.model.get("max_model_len")
        return int(length) - 1 if isinstance(length, int) else None


def served_model(client: Client, name: str) -> dict[str, Any]:
    """The server's entry for `name` in /v1/models; a one-line refusal naming what it serves
    instead. Its first contact: a server that is not there fails at once, unretried."""
    try:
        listed = client.get("/models", retries=0)
    except ServerError as err:
        if err.status is None:
            raise TacitError(
                f"no server answers at base_url={client.url} ({err.problem}): start it, or give "
                "the address it listens on"
            ) from None
        raise
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        raise TacitError(
            f"{client.where('/models')}: not an OpenAI model list: is {client.url} "
            "an OpenAI-compatible server?"
        )
    models = {str(m.get("id")): m for m in data if isinstance(m, dict)}
    if name not in models:
        serving = ", ".join(models) or "nothing"
        raise TacitError(
            f"{client.url} serves {serving}, not {name}: give --model NAME,base_url=... with the "
            "name it serves"
        )
    return models[name]


def engine_of(client: Client) -> dict[str, Any]:
    """The engine and its version, where the server says (nothing is retried, nothing
    required): a FastAPI app's own title (llama-cpp-python's), llama.cpp's /props, SGLang's
    /get_server_info, vLLM's /version."""
    found: dict[str, Any] = {}

    def ask(path: str) -> Any:
        try:
            return client.get(path, root=True, retries=0)
        except TacitError:
            return None

    info = (ask("/openapi.json") or {}).get("info") or {}
    if info.get("title") and info["title"] != "FastAPI":
        found = {"name": info["title"], "version": info.get("version"), "from": "/openapi.json"}
    elif isinstance(props := ask("/props"), dict) and "default_generation_settings" in props:
        found = {"name": "llama.cpp server", "version": props.get("build_info"), "from": "/props"}
    elif isinstance(sglang := ask("/get_server_info"), dict) and "version" in sglang:
        found = {"name": "SGLang", "version": sglang["version"], "from": "/get_server_info"}
    elif isinstance(version := ask("/version"), dict) and "version" in version:
        found = {"name": "vLLM", "version": version["version"], "from": "/version"}
    return found


LLAMA_CPP = "llama.cpp server"  # engine_of's name for llama.cpp's llama-server
LLAMA_CPP_PYTHON = "llama.cpp Python API"  # in the title of llama-cpp-python's FastAPI app


def refuse_known(client: Client, name: str, model: dict[str, Any], engine: dict[str, Any]) -> None:
    """Refuse, in one line before any sentence is sent, an engine known to give no prompt
    log-probabilities tacit can score with: llama.cpp's llama-server (recognised by its
    /props, or /v1/models' `owned_by: llamacpp`) gives them for generated tokens only, no
    echo of the prompt (llama.cpp issue 27174; lm-evaluation-harness issue 4158: every
    loglikelihood request fails against it); llama-cpp-python's server (its FastAPI title)
    reads each echoed prompt token at its own position, not the one before (off by one), and
    drops special tokens from its echo. Both serve generation (`--by generation`)."""
    where = f"{client.url} ({name})"
    engine_name = str(engine.get("name") or "")
    if engine_name == LLAMA_CPP or model.get("owned_by") == "llamacpp":
        raise TacitError(
            f"{where} is llama.cpp's llama-server, which gives log-probabilities of generated "
            "tokens only, never of a prompt's (no echo: llama.cpp issue 27174), so it cannot "
            "score sentences: it serves --by generation; to score, serve the model with vLLM "
            "or SGLang, or give its GGUF file to --model (docs/models.md)"
        )
    if LLAMA_CPP_PYTHON in engine_name:
        raise TacitError(
            f"{where} is llama-cpp-python's server, whose echo reads each prompt token at its "
            "own position, not the one before (off by one), and drops special tokens, so it "
            "cannot score sentences: it serves --by generation; to score, serve the model with "
            "vLLM or SGLang, or give its GGUF file to --model (docs/models.md)"
        )


def per_request(client: Client, name: str, asked: int) -> tuple[int, list[Echo]]:
    """How many prompts a request may carry (`asked`, or 1 where the server refuses two), and
    the check sentence echoed bare."""
    if asked > 1:
        try:
            return asked, echoes(client, name, [CHECK_SENTENCE] * 2, 2)[:1]
        except ServerError as err:
            if err.status is None:  # no answer at all: not a question of batching
                raise
    return 1, echoes(client, name, [CHECK_SENTENCE], 1)


def start_text(
    client: Client, name: str, bare: Echo, start_token: str | None, tokenizer: Any, per: int
) -> tuple[str, dict[str, Any]]:
    """The text tacit writes before each sentence ("" where the server adds its own start
    token) and the manifest's record of the start token (see the module docstring)."""
    where = f"{client.url} ({name})"
    if bare.added:
        own = "".join(bare.added)
        if start_token is not None and start_token not in (own, "bos"):
            raise TacitError(
                f"{where} puts its own start token {own!r} before every prompt: "
                f"start_token={start_token} cannot replace it (leave start_token out)"
            )
        return "", {"text": own, "added_by": "server"}
    text = chosen_start(start_token, tokenizer, where)
    try:
        echo = echoes(client, name, [text + CHECK_SENTENCE], per)[0]
    except UnreadEcho:
        raise TacitError(
            f"{where} leaves the start token {text!r} out of its echo of a prompt that begins "
            "with it (llama-cpp-python 0.3 drops special tokens there): tacit cannot tell how "
            "it read it; give start_token= an ordinary token of its vocabulary, or serve the "
            "model with an engine that echoes every prompt token (vLLM, llama.cpp's server)"
        ) from None
    if echo.added or not echo.tokens or echo.tokens[0] != text:
        read = [*echo.added, *echo.tokens[:3]]
        raise TacitError(
            f"{where} does not read the start token {text!r} as one token (it reads "
            f"{shorten(repr(read))}): give start_token= a token of its own vocabulary"
        )
    return text, {"text": text, "added_by": "tacit", "chosen": start_token or "tokenizer"}


def chosen_start(start_token: str | None, tokenizer: Any, where: str) -> str:
    """The start token's text for a server that adds none: the in-process family's one rule
    (tacit.models.start) on `tokenizer=`, with `start_token=` as asked; without a tokenizer,
    `start_token=` as a token's text."""
    if tokenizer is not None and hasattr(tokenizer, "get_vocab"):
        from tacit.models.start import start_token as rule

        return rule(tokenizer, start_token, where).text
    if start_token is not None and start_token.strip().lower() not in ("bos", "eos", "none"):
        return start_token.strip()
    asked = "" if start_token is None else f" ({start_token} of which tokenizer?)"
    raise TacitError(
        f"{where} puts no start token before a prompt, and tacit does not know the model's"
        f"{asked}: give start_token=TEXT (a token's text, e.g. <|endoftext|>) or "
        "tokenizer=NAME (the model's tokenizer)"
    )


def sentence_logprobs(echo: Echo, start: str, where: str) -> list[float]:
    """The log-probability of each of the sentence's tokens (after the start text), refusing a
    token the server gave none for."""
    values = []
    for token, (first, _), value in zip(echo.tokens, echo.bounds, echo.logprobs):
        if first < len(start):
            continue  # the start token: conditioned on nothing
        if value is None:
            raise TacitError(
                f"{where} gives no log-probability for the token {token!r} of "
                f"{shorten(repr(echo.text[len(start) :]))} (a server that drops its start "
                "token from the echo does): tacit cannot score sentences with it"
            )
        values.append(value)
    return values


def consistency(
    client: Client, name: str, start: str, per: int, tolerance: float
) -> dict[str, Any]:
    """Check the server's prompt log-probabilities against its next-token answers (see the
    module docstring); the record, or a one-line refusal."""
    where = f"{client.url} ({name})"
    sentence = echoes(client, name, [start + CHECK_SENTENCE], per)[0]
    sentence_logprobs(sentence, start, where)  # every token has one
    positions = [
        (i, int(first))
        for i, (first, _) in enumerate(sentence.bounds)
        if first >= len(start) and int(first) > 0
    ]
    prefixes = [sentence.text[:first] for _, first in positions]
    tops = next_tokens(client, name, prefixes, per, CHECK_TOP)
    asked = [
        (i, prefix, token, value)
        for (i, _), prefix, top in zip(positions, prefixes, tops)
        for token, value in top.items()
        if token.strip() and "\ufffd" not in token
    ]
    echoed = echoes(client, name, [prefix + token for _, prefix, token, _ in asked], per)
    pairs = []
    for (i, prefix, token, value), echo in zip(asked, echoed):
        if len(echo.tokens) == i + 1 and echo.tokens[i] == token and echo.added == sentence.added:
            read = echo.logprobs[i]
            if read is not None and echo.tokens[:i] == sentence.tokens[:i]:
                pairs.append((abs(read - value), prefix, token, read, value))
    if len(pairs) < CHECK_AT_LEAST:
        raise TacitError(
            f"{where}: its next tokens after {shorten(repr(CHECK_SENTENCE))}'s words do not "
            f"read back as tokens in place ({len(pairs)} of {len(asked)} did): tacit cannot "
            "check its prompt log-probabilities, and will not score with it unchecked"
        )
    worst = max(pairs)
    record = {
        "sentence": CHECK_SENTENCE,
        "compared": len(pairs),
        "max_difference": round(worst[0], 9),
        "tolerance": tolerance,
        "passed": worst[0] <= tolerance,
    }
    if worst[0] > tolerance:
        bad = sum(p[0] > tolerance for p in pairs)
        _, prefix, token, read, value = worst
        raise TacitError(
            f"{where}: its prompt log-probabilities disagree with its own next-token ones in "
            f"{bad} of {len(pairs)} checks, by up to {worst[0]:.3g} nats ({token!r} after "
            f"{shorten(repr(prefix[len(start) :]), 40)}: {read:.4g} as a prompt token, "
            f"{value:.4g} as the next token; check_tolerance={tolerance:g}): it reads prompt "
            "tokens at the wrong position (llama-cpp-python 0.3 does), so tacit will not "
            "score with it"
        )
    return record


def connect(
    client: Client,
    name: str,
    *,
    asked_per_request: int,
    start_token: str | None,
    tokenizer: Any,
    tolerance: float,
) -> Served:
    """Every check of the module docstring, in order; what they found."""
    model = served_model(client, name)
    engine = engine_of(client)
    refuse_known(client, name, model, engine)
    per, bare = per_request(client, name, asked_per_request)
    start, record = start_text(client, name, bare[0], start_token, tokenizer, per)
    check = consistency(client, name, start, per, tolerance)
    return Served(model, engine, start, record, per, check)
