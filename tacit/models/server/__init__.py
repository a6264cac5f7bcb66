"""The server family: a causal LM scored by an OpenAI-compatible completions server that
returns prompt log-probabilities (vLLM's `vllm serve`, SGLang, llama.cpp's server), or asked
to generate by any chat-completions server (hosted APIs too), named
`--model NAME,base_url=http://HOST:PORT/v1` (NAME: the model as the server serves it).

It claims every model with a `base_url`. Its loading options: `tokenizer=` (a tokenizer to
plan with, a hub id or path, loaded as the in-process family loads one; without it, the
server's own tokenize endpoint, else none), `start_token=` (the text of the token a sentence
starts from, or `bos`/`eos` of `tokenizer=`, for a server that puts none before a prompt),
`concurrency=` (requests in flight, default 8), `timeout=` (a request's whole deadline in
seconds, default 300), `retries=` (default 5), `max_answer_bytes=` (what an answer to a
generation request may take, beyond the bound its max_tokens gives) and `check_tolerance=`
(nats, default 0.1). `--batch-size` is the number of prompts per request (`auto`: 32), where
the server takes several. The API key comes from $TACIT_API_KEY, else $OPENAI_API_KEY,
never from the command line or the manifest; a user name and password in the URL go as basic
authentication.

Modules: client (HTTP: pool, timeouts, retries), echo (reading a server's prompt
log-probabilities), connect (what is checked at start, the consistency check among it),
scorer (ServerScorer: spans, words in place and generation; ServerGenerator: generation
alone), generation (chat and completion requests), tokenizer (the server's tokenize endpoint).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.core.modelspec import LOAD_OPTIONS, LoadOption, ModelSpec
from tacit.core.option_names import option
from tacit.core.secrets import secret_key
from tacit.models.families import Family, resolve
from tacit.models.server.record import ServerRecord

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.models.base import Needs, Scorer
    from tacit.models.server.client import Client

PER_REQUEST_AUTO = 32  # prompts per request for --batch-size auto
# the family's own loading options, declared as tacit's are (LoadOption)
SETTINGS: Mapping[str, LoadOption] = {
    "concurrency": LoadOption("requests in flight at once", "N", int, 8, 1),
    "timeout": LoadOption(
        "seconds a request may take, from sending it to the last byte of its answer, before it "
        "is retried",
        "S",
        float,
        300.0,
        0.001,
    ),
    "retries": LoadOption(
        "retries of a request that failed for a moment: 429, 5xx, a dropped connection, a "
        "timeout (backoff 0.5 s, doubled each time)",
        "N",
        int,
        5,
        0,
    ),
    "max_answer_bytes": LoadOption(
        "the most bytes of an answer to a generation request read, where the bound derived "
        "from max_tokens is too small (longer answers are cut and counted as oversized)",
        "B",
        int,
        None,
        1,
    ),
    "check_tolerance": LoadOption(
        "nats by which the start check lets a server's prompt and next-token "
        "log-probabilities differ",
        "NATS",
        float,
        0.1,
        0.0,
    ),
}


def setting(spec: ModelSpec, key: str) -> Any:
    """One of the family's options, as given or its default, checked (one line naming it)."""
    declared = SETTINGS[key]
    value = spec.get(key, declared.default)
    return (
        None if value is None else declared.read(key, value, f"{option('--model')} {spec.public}")
    )


class ServerFamily(Family):
    """Models an OpenAI-compatible completions server scores (see the module docstring)."""

    name = "openai"
    description = "an OpenAI-compatible completions server"
    record_keys = ServerRecord
    options = {
        **{k: LOAD_OPTIONS[k] for k in ("base_url", "tokenizer", "start_token")},
        **SETTINGS,
    }

    def claims(self, spec: ModelSpec) -> bool:
        return spec.base_url is not None

    def check_options(self, spec: ModelSpec) -> None:
        """As every family; a key or token given as an option (`api_key=`) is refused in one
        line naming where it belongs: the environment (tacit.models.server.client)."""
        from tacit.models.server.client import API_KEY_VARIABLES

        for key in spec.given():
            if secret_key(key):
                raise TacitError(
                    f"{option('--model')} {spec.public}: {key}= would be seen in the command "
                    f"line and shell history: set {' or '.join(API_KEY_VARIABLES)} instead "
                    "(tacit sends it as a bearer token, and writes it nowhere)"
                )
        super().check_options(spec)
        for key in SETTINGS:
            setting(spec, key)

    def scorer_class(self, spec: ModelSpec, needs: Needs | None = None) -> type[Scorer]:
        """ServerGenerator for a probe that asks for generation alone (any chat API serves
        it), else ServerScorer (a completions server with prompt log-probabilities)."""
        from tacit.models.server.scorer import ServerGenerator, ServerScorer

        if needs is not None and needs.met_by(ServerGenerator):
            return ServerGenerator
        return ServerScorer

    def client(self, spec: ModelSpec) -> Client:
        from tacit.models.server.client import Client

        return Client(
            spec.base_url,
            timeout=setting(spec, "timeout"),
            retries=setting(spec, "retries"),
            concurrency=setting(spec, "concurrency"),
        )

    def tokenizer(self, spec: ModelSpec, flag: str = "--model") -> Any:
        """`tokenizer=` loaded as the in-process family loads one; else the server's tokenize
        endpoint (tacit.models.server.tokenizer); else None."""
        from tacit.models.server.connect import served_model
        from tacit.models.server.tokenizer import server_tokenizer

        if spec.get("tokenizer") is not None:
            from tacit.hub.model_files import load_tokenizer

            return load_tokenizer(str(spec.get("tokenizer")), flag=f"{flag} ...,tokenizer")
        client = self.client(spec)
        served_model(client, spec.name)  # a server that is down: one line, before planning
        return server_tokenizer(client, spec.name)

    def load(self, text: str, options: RunOptions, scorer: type[Scorer], **extra: Any) -> Scorer:
        from tacit.models.server.scorer import ServerGenerator, ServerScorer

        _, spec = resolve(text, options.model_defaults())
        if scorer is ServerGenerator:
            return ServerGenerator(text, spec, self.client(spec), setting(spec, "max_answer_bytes"))
        tokenizer = extra.get("tokenizer")
        if tokenizer is None and spec.get("tokenizer") is not None:
            tokenizer = self.tokenizer(spec)
        batch = options.batch_size
        return ServerScorer(
            text,
            spec,
            self.client(spec),
            batch_size=PER_REQUEST_AUTO if batch == "auto" else int(batch),
            tokenizer=tokenizer,
            tolerance=setting(spec, "check_tolerance"),
            max_answer=setting(spec, "max_answer_bytes"),
        )


FAMILY = ServerFamily()
