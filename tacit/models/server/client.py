"""JSON over HTTP to an OpenAI-compatible server, with the standard library only: keep-alive
connections (http.client, one per thread), a bounded pool of concurrent requests, and retries
with exponential backoff on what passes (429, any 5xx, a dropped connection, a timeout).
Anything else is one line naming the URL.

Every request is bounded: `timeout` is its whole deadline (connecting, sending, the answer's
headers and body: a server that drips bytes is cut off there, not at each read), and an
answer is read up to `limit` bytes, beyond which it is cut (`Cut`, where the caller takes one;
else one line).

The API key is read from the environment (API_KEY_VARIABLES) and sent as a bearer token; a
user name and password in the URL are sent as HTTP basic authentication, a query as it is;
a key in the query is refused (the environment is the place for it). None is ever written:
`public_url` is the base URL without them (tacit.core.secrets).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.client
import json
import os
import queue
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from tacit.core.errors import TacitError, shorten
from tacit.core.secrets import redact, secret_key

# where the API key is read from, in this order (tacit's own first, then the one OpenAI's
# clients and lm-evaluation-harness read)
API_KEY_VARIABLES = ("TACIT_API_KEY", "OPENAI_API_KEY")
BACKOFF_FIRST = 0.5  # seconds before the first retry; doubled for each next one
BACKOFF_MAX = 30.0  # no wait between retries is longer (nor a server's Retry-After)
# what a retry may mend: a server busy (429) or failing for a moment (5xx)
TRANSIENT = frozenset({429})
# a connection that went away, or a request that took longer than the timeout
DROPPED = (ConnectionError, http.client.HTTPException, socket.timeout, TimeoutError, OSError)
LIMIT = 64 << 20  # bytes: the longest answer read where the caller sets no bound of its own
BLOCK = 1 << 16  # bytes read at a time


@dataclass(frozen=True)
class Cut:
    """An answer longer than the request's bound, cut there: `read` bytes of it were read."""

    read: int


class ServerError(TacitError):
    """A request the server did not answer well, in one line naming the URL; `status` is the
    HTTP status (None where no answer came)."""

    def __init__(self, message: str, status: int | None = None, problem: str = "") -> None:
        super().__init__(message)
        self.status, self.problem = status, problem


def api_key() -> str | None:
    """The API key from the environment, if any (never from the command line or a manifest)."""
    return next((os.environ[v] for v in API_KEY_VARIABLES if os.environ.get(v)), None)


def public_url(url: str) -> str:
    """The URL without a user name, password, query or fragment: what errors and the manifest
    may show (tacit.core.secrets.redact).

    Examples:
        >>> public_url("http://me:secret@host:8000/v1?key=1")
        'http://host:8000/v1'
    """
    return redact(url)


def credentials(base_url: str) -> tuple[dict[str, str], str]:
    """(the headers that authenticate a request, the query sent with each) from the
    environment's API key and the URL: its user name and password as HTTP basic
    authentication, its query as it is. One line refuses a URL that holds a key in its query,
    and one that holds a user name and password where the environment gives a key too."""
    parts = urlsplit(base_url)
    key, shown = api_key(), public_url(base_url)
    names = " or ".join(API_KEY_VARIABLES)
    query = parse_qsl(parts.query, keep_blank_values=True)
    hidden = [name for name, _ in query if secret_key(name)]
    if hidden:
        raise TacitError(
            f"base_url={shown}: its query holds {hidden[0]}=, a key every log of the URL would "
            f"show: set {names} instead (tacit sends it as a bearer token, and writes it nowhere)"
        )
    if parts.username is not None or parts.password is not None:
        if key:
            raise TacitError(
                f"base_url={shown} holds a user name and password, and {names} a key: a "
                "request authenticates with one of them (take them out of the URL, or unset "
                "the variable)"
            )
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}, parts.query
    return ({"Authorization": f"Bearer {key}"} if key else {}), parts.query


class Client:
    """Requests to one server (see the module docstring). `base_url` ends in `/v1` (the
    OpenAI routes); `root` paths (`/version`, `/tokenize`) are the server's own, beside it.
    `retried` counts the retries made, for the manifest."""

    def __init__(self, base_url: str, *, timeout: float, retries: int, concurrency: int) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TacitError(
                f"base_url={shorten(public_url(base_url) or base_url)}: expected "
                "http://HOST:PORT/v1 (or https://)"
            )
        self.url = public_url(base_url)
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._api = parts.path.rstrip("/")
        self._root = self._api.removesuffix("/v1")
        self.timeout, self.retries, self.concurrency = timeout, retries, concurrency
        self.retried = 0
        # does the server take `n` > 1 (several draws a request)? None: not asked yet
        self.takes_n: bool | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        authorization, self._query = credentials(base_url)
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            **authorization,
        }

    def where(self, path: str, *, root: bool = False) -> str:
        """The URL of an API path (`/completions`) or, with `root`, of a server path."""
        base = self.url.removesuffix(self._api) + (self._root if root else self._api)
        return base + path

    # --- one request ------------------------------------------------------------------------

    def get(self, path: str, *, root: bool = False, retries: int | None = None) -> Any:
        return self.request("GET", path, None, root=root, retries=retries)

    def post(
        self,
        path: str,
        body: Any,
        *,
        root: bool = False,
        retries: int | None = None,
        limit: int = LIMIT,
        cut: bool = False,
    ) -> Any:
        return self.request("POST", path, body, root=root, retries=retries, limit=limit, cut=cut)

    def request(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        root: bool,
        retries: int | None,
        limit: int = LIMIT,
        cut: bool = False,
    ) -> Any:
        """The JSON answer; retried (at most `retries` times, the client's by default) with
        exponential backoff on 429, 5xx, a dropped connection or a timeout. An answer longer
        than `limit` bytes is `Cut` where `cut` takes one, else one line."""
        full = (self._root if root else self._api) + path
        if self._query:
            full += ("&" if "?" in full else "?") + self._query
        data = json.dumps(body).encode("utf-8") if body is not None else None
        tries = self.retries if retries is None else retries
        for attempt in range(tries + 1):
            try:
                status, reason, headers, text, read = self._send(method, full, data, limit)
            except DROPPED as err:
                problem = self._dropped(err)
                if attempt == tries:
                    raise self._gave_up(problem, path, root, tries, None) from None
                self._wait(attempt, None)
                continue
            if read > limit and status < 300:
                if cut:
                    return Cut(read)
                raise ServerError(
                    f"{self.where(path, root=root)} answered {status} with more than "
                    f"{limit:,} bytes: tacit reads no more of an answer to this request",
                    status,
                )
            if status < 300:
                try:
                    return json.loads(text)
                except ValueError:
                    raise ServerError(
                        f"{self.where(path, root=root)} answered {status} with no JSON "
                        f"({shorten(text.strip(), 60)!r}): is base_url an OpenAI-compatible "
                        "server's?",
                        status,
                    ) from None
            problem = f"{status} {reason}{detail(text)}"
            if status not in TRANSIENT and status < 500:
                raise ServerError(self._refused(status, problem, path, root), status)
            if attempt == tries:
                raise self._gave_up(problem, path, root, tries, status)
            self._wait(attempt, headers.get("Retry-After"))
        raise AssertionError("unreachable")

    def _send(
        self, method: str, path: str, data: bytes | None, limit: int
    ) -> tuple[int, str, http.client.HTTPMessage, str, int]:
        """One request on this thread's connection (opened again after any failure, and
        where the server has closed it since: see `closed_by_server`), within the client's
        timeout from start to end: (status, reason, headers, the answer's text up to `limit`
        bytes, how many bytes were read: more than `limit` where it was cut)."""
        deadline = time.monotonic() + self.timeout
        connection = getattr(self._local, "connection", None)
        if connection is not None and closed_by_server(connection):
            connection.close()
            connection = None
        if connection is None:
            kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            connection = kind(self._host, self._port, timeout=self.timeout)
            self._local.connection = connection
        late = threading.Event()
        timer: threading.Timer | None = None
        try:
            if connection.sock is None:
                connection.connect()
            left = max(deadline - time.monotonic(), 0.0)
            timer = threading.Timer(left, _cut_off, (connection, late))
            timer.daemon = True
            timer.start()
            connection.request(method, path, body=data, headers=self._headers)
            response = connection.getresponse()
            body = read_bounded(response, limit)
            if late.is_set():
                raise TimeoutError
        except BaseException as err:
            connection.close()
            self._local.connection = None
            if late.is_set() and isinstance(err, DROPPED):
                raise TimeoutError from None  # the deadline cut the connection
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if response.will_close or len(body) > limit:
            connection.close()
            self._local.connection = None
        text = body[:limit].decode("utf-8", errors="replace")
        return response.status, response.reason, response.headers, text, len(body)

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        with self._lock:
            self.retried += 1
        wait_s = BACKOFF_FIRST * 2**attempt
        if retry_after is not None and retry_after.strip().replace(".", "", 1).isdigit():
            wait_s = float(retry_after)  # seconds (an HTTP date: the backoff's own wait)
        time.sleep(min(max(wait_s, 0.0), BACKOFF_MAX))

    def _dropped(self, err: BaseException) -> str:
        if isinstance(err, (socket.timeout, TimeoutError)):
            return f"no whole answer within {self.timeout:g} s (timeout=)"
        if isinstance(err, ConnectionRefusedError):
            return "connection refused: is the server running?"
        return f"the connection was dropped ({type(err).__name__}: {shorten(str(err), 60)})"

    def _gave_up(
        self, problem: str, path: str, root: bool, retries: int, status: int | None
    ) -> ServerError:
        tries = f"; gave up after {retries + 1} tries (retries={retries})" if retries else ""
        return ServerError(f"{self.where(path, root=root)}: {problem}{tries}", status, problem)

    def _refused(self, status: int, problem: str, path: str, root: bool) -> str:
        if status in (401, 403):
            names = " or ".join(API_KEY_VARIABLES)
            return (
                f"{self.where(path, root=root)}: {problem}: the server wants an API key: set "
                f"{names} (tacit never takes it from the command line)"
            )
        return f"{self.where(path, root=root)}: {problem}"

    # --- many requests ----------------------------------------------------------------------

    def post_all(
        self,
        path: str,
        bodies: Sequence[Any],
        done: Callable[[int, Any], None] | None = None,
        *,
        root: bool = False,
        limit: int = LIMIT,
        cut: bool = False,
    ) -> list[Any]:
        """Every body posted, at most `concurrency` at a time; the answers in order. `done(i,
        answer)` is called in this thread as each answer comes (to keep it at once). A request
        that fails after its retries stops the rest: no other is sent, those in flight are
        waited for (their answers given to `done`), then its one-line error is raised. An
        interruption (Ctrl-C, SIGTERM) leaves those in flight unread."""
        post = functools.partial(self.post, path, root=root, limit=limit, cut=cut)
        if len(bodies) <= 1 or self.concurrency == 1:
            answers = []
            for i, body in enumerate(bodies):
                answers.append(post(body))
                if done is not None:
                    done(i, answers[-1])
            return answers
        results: list[Any] = [None] * len(bodies)
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(bodies)):
            todo.put(i)
        answered: queue.SimpleQueue[tuple[int, Any, BaseException | None]] = queue.SimpleQueue()
        stop = threading.Event()

        def work() -> None:
            while not stop.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    answered.put((i, post(bodies[i]), None))
                except BaseException as err:  # said in the caller's thread
                    answered.put((i, None, err))

        # daemons: an interruption does not wait for the requests in flight
        workers = [
            threading.Thread(target=work, daemon=True)
            for _ in range(min(self.concurrency, len(bodies)))
        ]
        for worker in workers:
            worker.start()
        failed: BaseException | None = None
        try:
            for _ in range(len(bodies)):
                while True:
                    try:
                        i, answer, error = answered.get(timeout=0.1)
                        break
                    except queue.Empty:
                        if failed is not None and not any(w.is_alive() for w in workers):
                            raise failed from None
                if error is not None:
                    failed = failed or error
                    stop.set()
                    continue
                results[i] = answer
                if done is not None:
                    done(i, answer)
        except BaseException:
            stop.set()
            raise
        if failed is not None:
            raise failed
        return results


def _cut_off(connection: http.client.HTTPConnection, late: threading.Event) -> None:
    """The request's deadline: end its connection (a read waiting on it returns at once)."""
    late.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def read_bounded(response: http.client.HTTPResponse, limit: int) -> bytes:
    """An answer's body, read up to one byte past `limit` (so that a longer one is told)."""
    blocks, size = [], 0
    while size <= limit:
        block = response.read(min(BLOCK, limit + 1 - size))
        if not block:
            break
        blocks.append(block)
        size += len(block)
    return b"".join(blocks)


def closed_by_server(connection: http.client.HTTPConnection) -> bool:
    """Has the server closed this kept connection while it was idle (uvicorn, behind
    llama-cpp-python's server, closes one after 5 s: a retry's backoff is longer)? Between
    requests the server sends nothing, so a socket with something to read has been closed by
    it (urllib3 checks its pooled connections the same way). A request on it would fail
    before any answer, and be counted as a retry."""
    sock = connection.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):  # closed on our side already
        return True
    return bool(readable)


def detail(text: str) -> str:
    """What an error answer says, in a few words: an OpenAI-style `error.message`, FastAPI's
    `detail`, or the text itself."""
    said: Any = text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        said = error if error is not None else said
    said = " ".join(str(said).split())
    return f": {shorten(said, 100)}" if said else ""
