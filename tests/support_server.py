"""A real OpenAI-compatible completions server for the tests, on 127.0.0.1 (a free port), that
scores with a transformers model in its own thread: `/v1/models`, `/v1/completions` (echo,
logprobs, max_tokens as vLLM answers them), `/tokenize`, `/detokenize` and `/version` as
vLLM's, `/openapi.json` with its own title.

It can be made to misbehave: `faults` (a queue, one taken per completion request: `429`,
`500`, `drop` (the connection closed without an answer), `sleep:SECONDS` (an answer later than
the client waits), `idle-close` (an answer, then the connection closed without saying so, as
a server closes a kept connection that stayed idle)); `fail_after` (every completion request after that many answers 500, until
set back to None); `own_position` (prompt log-probabilities read at each token's own position,
as llama-cpp-python 0.3's echo does); `batching=False` (one prompt a request, as
llama-cpp-python's server); `add_bos` (its tokenizer puts BOS before every prompt, as Llama's
does); `api_key` (it wants one).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

TITLE = "tacit test server"


class TestServer:
    """See the module docstring. Use as a context manager, or start() and stop()."""

    __test__ = False  # not a test class for pytest

    def __init__(
        self,
        model_dir: str,
        name: str = "tiny",
        *,
        add_bos: bool = False,
        own_position: bool = False,
        batching: bool = True,
        api_key: str | None = None,
    ) -> None:
        self.name, self.add_bos, self.own_position = name, add_bos, own_position
        self.batching, self.api_key = batching, api_key
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        self.model_dir = model_dir
        self.faults: deque[str] = deque()
        self.fail_after: int | None = None
        self.completions = 0  # completion requests answered
        self.prompts = 0  # prompts scored
        self._lock = threading.Lock()
        self._http: ThreadingHTTPServer | None = None

    # --- running ----------------------------------------------------------------------------

    def start(self) -> TestServer:
        # one thread: torch's pool, spinning in the server's thread beside the test's own
        # work on a loaded machine, made a request 7x slower (put back by stop)
        self._threads = torch.get_num_threads()
        torch.set_num_threads(1)
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            torch.set_num_threads(self._threads)

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._http is not None
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}/v1"

    def spec(self, name: str | None = None, **options: Any) -> str:
        """`--model NAME,base_url=...,KEY=VALUE...` for this server."""
        extra = "".join(f",{k}={v}" for k, v in options.items())
        return f"{name or self.name},base_url={self.url}{extra}"

    # --- scoring ----------------------------------------------------------------------------

    def ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return [self.tokenizer.bos_token_id, *ids] if self.add_bos else ids

    def pieces(self, ids: list[int]) -> list[str]:
        """Each token's text as it adds to the text before it (as vLLM's detokenizer gives)."""
        texts, before = [], ""
        for n in range(len(ids)):
            now = self.tokenizer.decode(ids[: n + 1])
            texts.append(now[len(before) :] if now.startswith(before) else now)
            before = now
        return texts

    def complete(self, prompt: str, *, echo: bool, logprobs: int | None, max_tokens: int) -> dict:
        """One choice of a completion, as vLLM gives it (one greedy token generated)."""
        ids = self.ids(prompt)
        with self._lock, torch.no_grad():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
            self.prompts += 1
        logprobs_all = torch.log_softmax(logits, dim=-1)
        generated = int(logprobs_all[-1].argmax())
        full = ids + ([generated] if max_tokens > 0 else [])
        texts = self.pieces(full)
        if self.own_position:  # llama-cpp-python 0.3: each token at its own position
            prompt_lp = [None] + [float(logprobs_all[j, ids[j]]) for j in range(1, len(ids))]
        else:
            prompt_lp = [None] + [float(logprobs_all[j - 1, ids[j]]) for j in range(1, len(ids))]
        last = logprobs_all[-1]
        top = torch.topk(last, max(logprobs or 1, 1))
        before = self.tokenizer.decode(ids)

        def piece(token: int) -> str:
            now = self.tokenizer.decode([*ids, token])
            return now[len(before) :] if now.startswith(before) else self.tokenizer.decode([token])

        top_dict = {piece(int(t)): float(v) for v, t in zip(top.values, top.indices)}
        top_dict[piece(generated)] = float(last[generated])
        if echo:
            tokens = texts
            values = prompt_lp + ([float(last[generated])] if max_tokens > 0 else [])
            tops = [None] + [{t: v} for t, v in zip(tokens[1:], values[1:])]
            if max_tokens > 0:
                tops[-1] = top_dict
            text = prompt + (texts[-1] if max_tokens > 0 else "")
        else:
            tokens, values, tops = texts[len(ids) :], [float(last[generated])], [top_dict]
            text = tokens[0] if tokens else ""
        offsets, at = [], 0
        for t in tokens:
            offsets.append(at)
            at += len(t)
        choice: dict[str, Any] = {"text": text, "finish_reason": "length", "logprobs": None}
        if logprobs is not None:
            choice["logprobs"] = {
                "tokens": tokens,
                "token_logprobs": values,
                "top_logprobs": tops,
                "text_offset": offsets,
            }
        return choice


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the engines
    server_state: TestServer

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client left (it timed out)
            self.close_connection = True

    def _error(self, status: int, message: str, **headers: str) -> None:
        self._answer(status, {"error": {"message": message, "code": status}}, headers)

    def _authorised(self) -> bool:
        key = self.server_state.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "Invalid API key")
        return False

    def do_GET(self) -> None:
        state = self.server_state
        if not self._authorised():
            return
        if self.path == "/v1/models":
            max_len = getattr(state.model.config, "n_positions", None) or getattr(
                state.model.config, "max_position_embeddings", None
            )
            entry = {"id": state.name, "object": "model", "owned_by": "tacit-tests"}
            entry |= {"root": state.model_dir, "max_model_len": max_len}
            self._answer(200, {"object": "list", "data": [entry]})
        elif self.path == "/version":
            self._answer(200, {"version": "0.0-test"})
        elif self.path == "/openapi.json":
            self._answer(200, {"info": {"title": TITLE, "version": "1"}})
        else:
            self._error(404, "Not Found")

    def do_POST(self) -> None:
        state = self.server_state
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self._authorised():
            return
        if self.path == "/tokenize":
            ids = state.tokenizer(
                body["prompt"], add_special_tokens=bool(body.get("add_special_tokens", True))
            )["input_ids"]
            self._answer(200, {"count": len(ids), "tokens": ids, "max_model_len": 128})
        elif self.path == "/detokenize":
            self._answer(200, {"prompt": state.tokenizer.decode(body["tokens"])})
        elif self.path == "/v1/completions":
            self._completions(body)
        else:
            self._error(404, "Not Found")

    def _completions(self, body: dict) -> None:
        state = self.server_state
        fault = state.faults.popleft() if state.faults else None
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault == "idle-close":
            self.close_connection = True  # after this answer, with no `Connection: close`
        if fault is not None and fault.startswith("sleep:"):
            time.sleep(float(fault.partition(":")[2]))
        elif fault in ("429", "500"):
            self._error(
                int(fault), "fault injected", **({"Retry-After": "0"} if fault == "429" else {})
            )
            return
        if state.fail_after is not None and state.completions >= state.fail_after:
            self._error(500, "fault injected: the server is failing")
            return
        if body.get("model") != state.name:
            self._error(404, f"The model `{body.get('model')}` does not exist.")
            return
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        if len(prompts) > 1 and not state.batching:
            self._error(500, "Internal Server Error")  # llama-cpp-python's assertion
            return
        choices = []
        for n, prompt in enumerate(prompts):
            choice = state.complete(
                prompt,
                echo=bool(body.get("echo")),
                logprobs=body.get("logprobs"),
                max_tokens=int(body.get("max_tokens", 16)),
            )
            choices.append({"index": n, **choice})
        state.completions += 1
        self._answer(
            200,
            {
                "id": "cmpl-test",
                "object": "text_completion",
                "model": state.name,
                "choices": choices,
            },
        )
