"""The Hugging Face hub, asked once and briefly.

Without a network, transformers' loaders retry each file with growing pauses (about a minute
before the error, a dozen `Retrying in 8s` lines). tacit asks the hub's endpoint once per run,
with a short timeout, before it loads anything by hub id: when the hub answers, loading goes
as usual; when it does not (or HF_HUB_OFFLINE=1 says not to ask), models are read from the
hub's cache only (`local_files_only`), so a model downloaded before loads at once, and one
that is not there is one line naming the option that named it, the cache, and
HF_HUB_OFFLINE=1. Local directories never ask the hub.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, first_line, shorten
from tacit.core.option_names import option

HUB_CHECK_TIMEOUT = 5.0  # seconds; the hub's own HF_HUB_ETAG_TIMEOUT, when lower, wins
_ANSWERS: dict[str, str | None] = {}  # endpoint -> None (it answered) or why it did not
_WARNED: list[str] = []  # the warning about reading from the cache, once per process
_READ: ContextVar[dict[Hashable, Any] | None] = ContextVar("tacit_read_once", default=None)


def offline_reason() -> str | None:
    """None when the hub may be asked; else why not: HF_HUB_OFFLINE=1, or the endpoint did
    not answer one short request (asked once per endpoint and process)."""
    from huggingface_hub import constants

    if constants.is_offline_mode():
        return "HF_HUB_OFFLINE=1 is set"
    endpoint = constants.ENDPOINT
    if endpoint not in _ANSWERS:
        _ANSWERS[endpoint] = _unreachable(endpoint, constants.HF_HUB_ETAG_TIMEOUT)
    return _ANSWERS[endpoint]


def _unreachable(endpoint: str, etag_timeout: float) -> str | None:
    """Why the endpoint does not answer one HEAD request, or None when it does (any HTTP
    status will do: the question is the network, not the page)."""
    from huggingface_hub.utils import get_session

    try:
        get_session().head(endpoint, timeout=min(HUB_CHECK_TIMEOUT, etag_timeout))
    except Exception as err:  # the HTTP client's connection and timeout errors, OSError
        return f"the Hugging Face hub ({endpoint}) cannot be reached ({shorten(first_line(err))})"
    return None


def is_local(name_or_path: str) -> bool:
    """A directory on this machine (loaded as it is: no hub)."""
    try:
        return Path(name_or_path).expanduser().is_dir()
    except OSError:
        return False


@contextmanager
def hub_access(name_or_path: str) -> Iterator[dict[str, Any]]:
    """The keywords `from_pretrained` needs in the block: nothing for a local directory or
    while the hub answers, `local_files_only=True` otherwise. A load from the cache because the
    hub did not answer is said once per run, as a warning, when it succeeded (a failure is
    not_cached's one line)."""
    reason = None if is_local(name_or_path) else offline_reason()
    yield {} if reason is None else {"local_files_only": True}
    if reason is not None and "HF_HUB_OFFLINE" not in reason and not _WARNED:
        _WARNED.append(reason)
        warnings.warn(
            f"{reason}: models are read from its cache (set HF_HUB_OFFLINE=1 to skip the attempt)",
            stacklevel=3,
        )


def not_cached(name_or_path: str, flag: str = "--model") -> TacitError | None:
    """When loading a hub id failed because the hub is not to be asked: one line that says the
    model is not in the cache, where the cache is, and what to do. None otherwise."""
    reason = None if is_local(name_or_path) else offline_reason()
    if reason is None:
        return None
    from huggingface_hub import constants

    skip = "" if "HF_HUB_OFFLINE" in reason else "; set HF_HUB_OFFLINE=1 to skip the attempt"
    return TacitError(
        f"{option(flag)} {name_or_path}: not in the Hugging Face cache ({constants.HF_HUB_CACHE}), "
        f"and {reason}: download it where the hub can be reached (`hf download "
        f"{name_or_path}`), then copy that cache here (or set HF_HOME to it), or give a local "
        f"directory{skip}"
    )


def resolve_revision(name_or_path: str, revision: str | None) -> str | None:
    """The commit a hub model was loaded from, read off the cache's snapshot path.

    None for a local directory, or when the cache does not say (never a network call).
    """
    if Path(name_or_path).is_dir():
        return None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(name_or_path, "config.json", revision=revision)
    if not isinstance(cached, str):
        return None
    match = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", cached)
    return match.group(1) if match else None


@contextmanager
def read_once() -> Iterator[None]:
    """Within the block (a run: tacit.probe_api.run_probe), what `remembered` reads is read
    once: a model's config serves its scorer class, its tokenizer, its weights and its
    random-weight control. Outside it, every call reads anew."""
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def remembered(key: Hashable, read: Callable[[], Any]) -> Any:
    """`read()`, or what it gave for `key` earlier in the same `read_once` block."""
    memo = _READ.get()
    if memo is None:
        return read()
    if key not in memo:
        memo[key] = read()
    return memo[key]
