"""A real OpenAI-compatible server for the tests, on 127.0.0.1 (a free port): `/v1/models`,
`/v1/completions` (echo, logprobs, max_tokens as vLLM answers them; without echo and more than
one token, a generation), `/v1/chat/completions` (the tokenizer's chat template, transformers'
own generate: greedy, or sampled under the request's seed; n, max_tokens, logprobs and
top_logprobs, usage), `/tokenize`, `/detokenize` and `/version` as vLLM's, `/openapi.json`
with its own title. It scores with a transformers model in its own thread; without one
(`model_dir=None`) it answers every generation request with `answer(body)` (by default a
numbered list made from the request), fast, for the tests that count requests.

It is the hostile server of the fault tests too: `faults` (a queue, one taken per completion
request: `429`, `500`, `drop` (the connection closed without an answer), `sleep:SECONDS` (an
answer later than the client waits), `idle-close` (an answer, then the connection closed
without saying so), `drip:SECONDS` (the answer's bytes sent four at a time, SECONDS apart),
`huge:BYTES` (a completion that long), `lines:N` (a completion of N numbered lines),
`model:NAME` (an answer naming another model), `body:JSON` (the answer's body as given: any
malformed field), `empty` (a content that is null), `missing` (an answer without choices),
`refusal` (a choice that says REFUSAL), `think:TEXT` (a thinking model's answer: TEXT as each
chat choice's `reasoning_content`, its words counted as `reasoning_tokens` in the usage),
`thought-out:TEXT` (a thinking model that spent its max_tokens thinking: `reasoning_content`
TEXT, no content, `finish_reason: length`)); `takes_n = False` (a 400 for any request of n > 1,
as an engine that takes no `n` answers); `fail_after` (every completion request after that
many answers 500, until set back to None). It counts what it answers (`answered`: each
generation request's body, in order). `own_position` (prompt log-probabilities read at each
token's own position, as llama-cpp-python 0.3's echo does); `batching=False` (one prompt a
request, as llama-cpp-python's server); `add_bos` (BOS before every prompt, as Llama's
tokenizer puts it); `api_key` (it wants one as a bearer token); `basic` (a (user, password) it
wants as HTTP basic authentication); `engine` (`llama.cpp` or `llama-cpp-python`: it answers
as that engine's server does: /v1/models' `owned_by: llamacpp` and /props, or its FastAPI
title).
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

TITLE = "tacit test server"
REFUSAL = "I'm sorry, but I can't help with that."
LLAMA_CPP_PYTHON_TITLE = "\U0001f999 llama.cpp Python API"  # its FastAPI app's title


def listed_answer(body: dict) -> str:
    """The canned answer: a numbered list of three properties, the same for the same request."""
    said = json.dumps(body.get("messages") or body.get("prompt"), sort_keys=True)
    words = ["fur", "claws", "teeth", "wings", "a tail", "stripes"]
    start = sum(map(ord, said)) % len(words)
    return "\n".join(f"{n + 1}. {words[(start + n) % len(words)]}" for n in range(3))


class TestServer:
    """See the module docstring. Use as a context manager, or start() and stop()."""

    __test__ = False  # not a test class for pytest

    def __init__(
        self,
        model_dir: str | None,
        name: str = "tiny",
        *,
        add_bos: bool = False,
        own_position: bool = False,
        batching: bool = True,
        api_key: str | None = None,
        basic: tuple[str, str] | None = None,
        engine: str | None = None,
        answer: Callable[[dict], str] = listed_answer,
    ) -> None:
        self.name, self.add_bos, self.own_position = name, add_bos, own_position
        self.batching, self.api_key, self.basic, self.engine = batching, api_key, basic, engine
        self.answer = answer
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir) if model_dir else None
        self.model = AutoModelForCausalLM.from_pretrained(model_dir).eval() if model_dir else None
        self.model_dir = model_dir
        self.answered: list[dict] = []  # every generation request answered, its body
        self.paths: list[str] = []  # every path asked for, its query included
        self.faults: deque[str] = deque()
        self.fail_after: int | None = None
        self.takes_n = True
        self.refused_n = 0  # requests refused for their n
        self.completions = 0  # completion requests answered
        self.completions_generated = 0  # completions generated (chat and completions)
        self.prompts = 0  # prompts scored
        self._lock = threading.Lock()
        self._http: ThreadingHTTPServer | None = None

    # --- running ----------------------------------------------------------------------------

    def start(self, port: int = 0) -> TestServer:
        # one thread: torch's pool, spinning in the server's thread beside the test's own
        # work on a loaded machine, made a request 7x slower (put back by stop)
        self._threads = torch.get_num_threads()
        torch.set_num_threads(1)
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", port), handler)
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

    def spec(self, name: str | None = None, url: str | None = None, **options: Any) -> str:
        """`--model NAME,base_url=...,KEY=VALUE...` for this server (`url`: another form of
        its address, with credentials in it)."""
        extra = "".join(f",{k}={v}" for k, v in options.items())
        return f"{name or self.name},base_url={url or self.url}{extra}"

    def answered_keys(self) -> list[str]:
        """Each generation request answered, as a key (its body, sorted): to count the ones
        answered twice."""
        return [json.dumps(body, sort_keys=True) for body in self.answered]

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

    def generate(self, ids: list[int], body: dict) -> tuple[list[dict], dict]:
        """transformers' generate after the prompt's tokens (greedy, or sampled under the
        body's seed): (a choice per completion, as vLLM gives them, and usage). Each choice:
        `text`, `finish_reason`, and with logprobs its tokens' ({token, logprob,
        top_logprobs}: chat's shape)."""
        n = int(body.get("n", 1))
        temperature = float(body.get("temperature", 1.0))
        top = body.get("top_logprobs") if "messages" in body else body.get("logprobs")
        with self._lock, torch.no_grad():
            sampled = {"do_sample": False}
            if temperature > 0:
                torch.manual_seed(int(body.get("seed", 0)))
                sampled = {"do_sample": True, "temperature": temperature, "top_k": 0}
                sampled |= {"top_p": float(body.get("top_p", 1.0))}
            out = self.model.generate(
                input_ids=torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=int(body.get("max_tokens", 16)),
                num_return_sequences=n,
                pad_token_id=self.tokenizer.eos_token_id,
                output_logits=True,
                return_dict_in_generate=True,
                **sampled,
            )
            self.completions_generated += n
        end = self.model.generation_config.eos_token_id
        logprobs = torch.log_softmax(torch.stack(out.logits, 1).float(), -1)
        choices, generated = [], 0
        for row, sequence in enumerate(out.sequences[:, len(ids) :].tolist()):
            ended = sequence.index(end) if end in sequence else None
            kept = sequence if ended is None else sequence[:ended]
            generated += len(kept) + (ended is not None)
            choice = {
                "index": row,
                "text": self.tokenizer.decode(kept, skip_special_tokens=True),
                "finish_reason": "length" if ended is None else "stop",
            }
            if top:
                entries = []
                for at, (piece, token) in enumerate(zip(self.pieces(kept), kept)):
                    best = torch.topk(logprobs[row, at], int(top))
                    entries.append(
                        {
                            "token": piece,
                            "logprob": float(logprobs[row, at, token]),
                            "top_logprobs": [
                                {"token": self.tokenizer.decode([int(t)]), "logprob": float(v)}
                                for v, t in zip(best.values, best.indices)
                            ],
                        }
                    )
                choice["logprobs"] = entries
            choices.append(choice)
        usage = {"prompt_tokens": len(ids), "completion_tokens": generated}
        return choices, usage

    def canned(self, body: dict) -> tuple[list[dict], dict]:
        """Without a model: `answer(body)` as each of the request's `n` choices."""
        text = self.answer(body)
        n = int(body.get("n", 1))
        choices = [{"index": i, "text": text, "finish_reason": "stop"} for i in range(n)]
        with self._lock:
            self.completions_generated += n
        return choices, {"prompt_tokens": 10, "completion_tokens": 5 * n}


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
        key, basic = self.server_state.api_key, self.server_state.basic
        given = self.headers.get("Authorization")
        if basic is not None:
            wanted = "Basic " + base64.b64encode(":".join(basic).encode()).decode()
            if given == wanted:
                return True
        elif key is None or given == f"Bearer {key}":
            return True
        self._error(401, "Invalid API key")
        return False

    @property
    def route(self) -> str:
        """The path asked for, without its query (kept in `paths`)."""
        return self.path.partition("?")[0]

    def do_GET(self) -> None:
        state = self.server_state
        state.paths.append(self.path)
        if not self._authorised():
            return
        if self.route == "/v1/models":
            entry = {"id": state.name, "object": "model", "owned_by": "tacit-tests"}
            if state.model is not None:
                max_len = getattr(state.model.config, "n_positions", None) or getattr(
                    state.model.config, "max_position_embeddings", None
                )
                entry |= {"root": state.model_dir, "max_model_len": max_len}
            if state.engine == "llama.cpp":  # as llama.cpp's server lists its model
                entry = {"id": state.name, "object": "model", "created": int(time.time())}
                entry |= {"owned_by": "llamacpp", "meta": {"n_vocab": 50257}}
            self._answer(200, {"object": "list", "data": [entry]})
        elif self.route == "/props" and state.engine == "llama.cpp":
            settings = {"n_ctx": 2048, "temperature": 0.8}
            self._answer(200, {"default_generation_settings": settings, "build_info": "b0000-test"})
        elif state.engine == "llama.cpp":
            self._error(404, "File Not Found")  # no /version, no /openapi.json
        elif self.route == "/version":
            self._answer(200, {"version": "0.0-test"})
        elif self.route == "/openapi.json":
            if state.engine == "llama-cpp-python":  # its app's title and version
                self._answer(200, {"info": {"title": LLAMA_CPP_PYTHON_TITLE, "version": "0.0.1"}})
            else:
                self._answer(200, {"info": {"title": TITLE, "version": "1"}})
        else:
            self._error(404, "Not Found")

    def do_POST(self) -> None:
        state = self.server_state
        state.paths.append(self.path)
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self._authorised():
            return
        if self.route in ("/tokenize", "/detokenize") and state.tokenizer is None:
            self._error(404, "Not Found")
        elif self.route == "/tokenize":
            ids = state.tokenizer(
                body["prompt"], add_special_tokens=bool(body.get("add_special_tokens", True))
            )["input_ids"]
            self._answer(200, {"count": len(ids), "tokens": ids, "max_model_len": 128})
        elif self.route == "/detokenize":
            self._answer(200, {"prompt": state.tokenizer.decode(body["tokens"])})
        elif self.route == "/v1/completions":
            self._completions(body)
        elif self.route == "/v1/chat/completions":
            self._chat(body)
        else:
            self._error(404, "Not Found")

    def _fault(self, body: dict) -> str | None:
        """The next fault: `done` where it has been acted on (the connection dropped, an error
        answered), else the fault the answer should show (None: none)."""
        state = self.server_state
        fault = state.faults.popleft() if state.faults else None
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return "done"
        if fault == "idle-close":
            self.close_connection = True  # after this answer, with no `Connection: close`
        if fault is not None and fault.startswith("sleep:"):
            time.sleep(float(fault.partition(":")[2]))
        elif fault in ("429", "500"):
            self._error(
                int(fault), "fault injected", **({"Retry-After": "0"} if fault == "429" else {})
            )
            return "done"
        if not state.takes_n and int(body.get("n", 1)) > 1:
            state.refused_n += 1
            self._error(400, "n > 1 is not supported")
            return "done"
        if state.fail_after is not None and state.completions >= state.fail_after:
            self._error(500, "fault injected: the server is failing")
            return "done"
        if body.get("model") != state.name:
            self._error(404, f"The model `{body.get('model')}` does not exist.")
            return "done"
        return fault

    def _chat(self, body: dict) -> None:
        """A chat completion: the messages written by the tokenizer's chat template, the
        assistant's turn opened, then generate (TestServer.generate); without a model, the
        canned answer."""
        state = self.server_state
        fault = self._fault(body)
        if fault == "done":
            return
        if state.model is None:
            choices, usage = state.canned(body)
        else:
            ids = state.tokenizer.apply_chat_template(
                body["messages"], add_generation_prompt=True, return_dict=True
            )["input_ids"]
            choices, usage = state.generate(ids, body)
        answer = []
        for choice in choices:
            content = REFUSAL if fault == "refusal" else choice["text"]
            entry = {
                "index": choice["index"],
                "message": {"role": "assistant", "content": None if fault == "empty" else content},
                "finish_reason": choice["finish_reason"],
            }
            if "logprobs" in choice:
                entry["logprobs"] = {"content": choice["logprobs"]}
            if fault and fault.startswith(("think:", "thought-out:")):
                thinking = fault.partition(":")[2]
                entry["message"]["reasoning_content"] = thinking
                usage = {**usage, "completion_tokens_details": {"reasoning_tokens": 7}}
                if fault.startswith("thought-out:"):
                    entry["message"]["content"] = None
                    entry["finish_reason"] = "length"
            answer.append(entry)
        self._answered(body, "chat.completion", answer, usage, fault)

    def _answered(
        self, body: dict, kind: str, choices: list[dict], usage: dict, fault: str | None
    ) -> None:
        """A generation request's answer, sent as the fault says: counted, then sent (whole,
        dripped, as a body given, naming another model, with a completion made enormous)."""
        state = self.server_state
        name = fault.partition(":")[2] if fault and fault.startswith("model:") else state.name
        if fault and fault.startswith(("huge:", "lines:")):
            size = int(fault.partition(":")[2])
            text = (
                "x" * size
                if fault.startswith("huge:")
                else "".join(f"{n}. thing {n}\n" for n in range(1, size + 1))
            )
            for choice in choices:
                if "message" in choice:
                    choice["message"]["content"] = text
                else:
                    choice["text"] = text
        answer: Any = {
            "id": "chatcmpl-test" if kind.startswith("chat") else "cmpl-test",
            "object": kind,
            "model": name,
            "choices": [] if fault == "missing" else choices,
            "usage": usage,
        }
        state.completions += 1
        state.answered.append(body)
        if fault and fault.startswith("body:"):
            self._raw(200, fault.partition(":")[2].encode("utf-8"))
        elif fault and fault.startswith("drip:"):
            self._raw(200, json.dumps(answer).encode("utf-8"), float(fault.partition(":")[2]))
        else:
            self._answer(200, answer)

    def _raw(self, status: int, data: bytes, drip: float = 0.0) -> None:
        """Bytes as an answer's body; with `drip`, four at a time, `drip` seconds apart."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not drip:
                self.wfile.write(data)
                return
            for at in range(0, len(data), 4):
                self.wfile.write(data[at : at + 4])
                self.wfile.flush()
                time.sleep(drip)
        except OSError:  # the client left (it timed out)
            self.close_connection = True

    def _generated(self, body: dict, fault: str | None) -> None:
        """A completion generated after a plain prompt (no echo), as vLLM answers one."""
        state = self.server_state
        if state.model is None:
            choices, usage = state.canned(body)
        else:
            choices, usage = state.generate(state.ids(body["prompt"]), body)
        for choice in choices:
            entries = choice.pop("logprobs", None)
            if entries is not None:
                choice["logprobs"] = {
                    "tokens": [e["token"] for e in entries],
                    "token_logprobs": [e["logprob"] for e in entries],
                    "top_logprobs": [
                        {t["token"]: t["logprob"] for t in e["top_logprobs"]} for e in entries
                    ],
                }
        self._answered(body, "text_completion", choices, usage, fault)

    def _completions(self, body: dict) -> None:
        state = self.server_state
        fault = self._fault(body)
        if fault == "done":
            return
        if not body.get("echo") and int(body.get("max_tokens", 16)) > 1:
            self._generated(body, fault)
            return
        if state.model is None or state.engine == "llama.cpp":  # no echo: llama.cpp's refusal
            self._error(400, "Only no echo is supported")
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
