"""The one redaction of what may hold a secret: a model's text, a command line, an error.

A model's text may carry credentials (`NAME,base_url=http://user:password@host/v1?key=K`,
`org/model,token=hf_...`). Everything tacit writes or shows (manifests and their `command`,
every table's model column, messages.jsonl, result.json, reports, progress bars, notes,
errors, leaderboards, comparisons, exports, caches) names a model by `redact(text)`: a URL
without its user name, password, query or fragment, and every option whose name reads as a
key's or a token's (`api_key=`, `token=`, `hf_token=`, `password=`: SECRET_WORDS) shown as
`***`. Only the client that sends a request reads the text as given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

HIDDEN = "***"  # what a secret option's value is shown as
# the last word of an option's name (split at `_` and `-`) that marks its value a secret
SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "auth", "credential",
     "credentials", "bearer"}
)  # fmt: skip
# tacit's own options whose names end so but hold no secret (a start token is a text)
NOT_SECRET = frozenset({"start_token"})
# scheme://[user[:password]@]host[:port][/path][?query][#fragment], up to a comma or a space
_URL = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^\s/,?#]*@)?(?P<host>[^\s/,?#]*)"
    r"(?P<path>[^\s,?#]*)(?P<query>\?[^\s,#]*)?(?P<fragment>#[^\s,]*)?"
)
# an option KEY=VALUE where a model's text or a command line holds one: after the start, a
# comma, a space or `--flag=`
_OPTION = re.compile(
    r"(?P<before>(?:^|[,\s=(\['\"]))(?P<key>[A-Za-z_][\w\-]*)=(?P<value>[^,\s]*?)"
    r"(?P<after>[:;.)\]'\"]*)(?=[,\s]|$)"
)


def secret_key(key: str) -> bool:
    """Does an option of this name hold a secret (its last word is one of SECRET_WORDS)?

    Examples:
        >>> [secret_key(k) for k in ("api_key", "hf_token", "start_token", "pad_token_id")]
        [True, True, False, False]
    """
    if key in NOT_SECRET:
        return False
    words = [w for w in re.split(r"[_\-]", key.lower()) if w]
    return bool(words) and (words[-1] in SECRET_WORDS or "apikey" in words)


def _url(found: re.Match[str]) -> str:
    return found["scheme"] + found["host"] + found["path"].rstrip("/")


_PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*")  # a form's placeholder, `KEY=VALUE`: no secret


def _option(found: re.Match[str]) -> str:
    value = found["value"]
    if not secret_key(found["key"]) or not value or _PLACEHOLDER.fullmatch(value):
        return found.group(0)
    return f"{found['before']}{found['key']}={HIDDEN}{found['after']}"


def redact(text: str) -> str:
    """`text` with every secret it may hold taken out (the module docstring).

    Examples:
        >>> redact("m,base_url=http://alice:pw@host:8000/v1?api_key=k,timeout=5")
        'm,base_url=http://host:8000/v1,timeout=5'
        >>> redact("org/model,token=hf_abc,revision=main")
        'org/model,token=***,revision=main'
    """
    if "://" not in text and "=" not in text:
        return text
    return _OPTION.sub(_option, _URL.sub(_url, text))


def redacted(value: Any) -> Any:
    """A recorded value (text, or lists and mappings of them) with its secrets taken out: a
    mapping's value under a secret key hidden whole."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {
            k: HIDDEN if isinstance(k, str) and secret_key(k) else redacted(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value
