"""JSON over HTTP to an OpenAI-compatible server, with the standard library only: keep-alive
connections (http.client, one per thread), a bounded pool of concurrent requests, a timeout per
request, and retries with exponential backoff on what passes (429, any 5xx, a dropped
connection, a timeout). Anything else is one line naming the URL.

The API key is read from the environment (API_KEY_VARIABLES) and sent as a bearer token; it is
never written anywhere, and `public_url` is the base URL without the user name or password a
URL may carry.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tacit.core.errors import TacitError, shorten

# where the API key is read from, in this order (tacit's own first, then the one OpenAI's
# clients and lm-evaluation-harness read)
API_KEY_VARIABLES = ("TACIT_API_KEY", "OPENAI_API_KEY")
BACKOFF_FIRST = 0.5  # seconds before the first retry; doubled for each next one
BACKOFF_MAX = 30.0  # no wait between retries is longer (nor a server's Retry-After)
# what a retry may mend: a server busy (429) or failing for a moment (5xx)
TRANSIENT = frozenset({429})
# a connection that went away, or a request that took longer than the timeout
DROPPED = (ConnectionError, http.client.HTTPException, socket.timeout, TimeoutError, OSError)


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
    may show.

    Examples:
        >>> public_url("http://me:secret@host:8000/v1?key=1")
        'http://host:8000/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


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
        self._local = threading.local()
        self._lock = threading.Lock()
        key = api_key()
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"

    def where(self, path: str, *, root: bool = False) -> str:
        """The URL of an API path (`/completions`) or, with `root`, of a server path."""
        base = self.url.removesuffix(self._api) + (self._root if root else self._api)
        return base + path

    # --- one request ------------------------------------------------------------------------

    def get(self, path: str, *, root: bool = False, retries: int | None = None) -> Any:
        return self.request("GET", path, None, root=root, retries=retries)

    def post(self, path: str, body: Any, *, root: bool = False, retries: int | None = None) -> Any:
        return self.request("POST", path, body, root=root, retries=retries)

    def request(self, method: str, path: str, body: Any, *, root: bool, retries: int | None) -> Any:
        """The JSON answer; retried (at most `retries` times, the client's by default) with
        exponential backoff on 429, 5xx, a dropped connection or a timeout."""
        full = (self._root if root else self._api) + path
        data = json.dumps(body).encode("utf-8") if body is not None else None
        limit = self.retries if retries is None else retries
        for attempt in range(limit + 1):
            try:
                status, reason, headers, text = self._send(method, full, data)
            except DROPPED as err:
                problem = self._dropped(err)
                if attempt == limit:
                    raise self._gave_up(problem, path, root, limit, None) from None
                self._wait(attempt, None)
                continue
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
            if attempt == limit:
                raise self._gave_up(problem, path, root, limit, status)
            self._wait(attempt, headers.get("Retry-After"))
        raise AssertionError("unreachable")

    def _send(
        self, method: str, path: str, data: bytes | None
    ) -> tuple[int, str, http.client.HTTPMessage, str]:
        """One request on this thread's connection (opened again after any failure, and
        where the server has closed it since: see `closed_by_server`)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None and closed_by_server(connection):
            connection.close()
            connection = None
        if connection is None:
            kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            connection = kind(self._host, self._port, timeout=self.timeout)
            self._local.connection = connection
        try:
            connection.request(method, path, body=data, headers=self._headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", errors="replace")
        except BaseException:
            connection.close()
            self._local.connection = None
            raise
        if response.will_close:
            connection.close()
            self._local.connection = None
        return response.status, response.reason, response.headers, text

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        with self._lock:
            self.retried += 1
        wait_s = BACKOFF_FIRST * 2**attempt
        if retry_after is not None and retry_after.strip().replace(".", "", 1).isdigit():
            wait_s = float(retry_after)  # seconds (an HTTP date: the backoff's own wait)
        time.sleep(min(max(wait_s, 0.0), BACKOFF_MAX))

    def _dropped(self, err: BaseException) -> str:
        if isinstance(err, (socket.timeout, TimeoutError)):
            return f"no answer within {self.timeout:g} s (timeout=)"
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
    ) -> list[Any]:
        """Every body posted, at most `concurrency` at a time; the answers in order. `done(i,
        answer)` is called in this thread as each answer comes (a progress bar). A request that
        fails after its retries stops the rest: its one-line error is raised."""
        if len(bodies) <= 1 or self.concurrency == 1:
            answers = []
            for i, body in enumerate(bodies):
                answers.append(self.post(path, body, root=root))
                if done is not None:
                    done(i, answers[-1])
            return answers
        results: list[Any] = [None] * len(bodies)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            pending: dict[Future[Any], int] = {
                pool.submit(self.post, path, body, root=root): i for i, body in enumerate(bodies)
            }
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_EXCEPTION)
                    for future in finished:
                        i = pending.pop(future)
                        results[i] = future.result()  # raises the request's error
                        if done is not None:
                            done(i, results[i])
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
        return results


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
