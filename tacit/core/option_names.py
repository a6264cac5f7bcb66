"""Which interface a call came through, so that an error names an option as the caller wrote
it: `--out DIR` on the command line (set for the whole command: tacit.cli.common.user_errors),
`out` in Python. A probe's own options say the same through their declaration.

Examples:
    >>> option('--batch-size'), option('--model')
    ('batch_size', 'models')
    >>> with from_command_line():
    ...     option('--batch-size')
    '--batch-size'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_INTERFACE: ContextVar[str] = ContextVar("tacit_interface", default="api")

# a flag -> the Python argument that says the same, where it is not the flag's own name
API_NAMES = {
    "--model": "models",
    "--vocab-model": "vocab_models",
    "--overwrite": "overwrite=True",
    "--resume": "resume=True",
    "--quiet": "progress=False",
    "--select": "selection",
    "--relation": "relations",
    "--task": "tasks",
}


def on_command_line() -> bool:
    """Whether the current call came from the `probe` command line."""
    return _INTERFACE.get() == "cli"


def option(flag: str) -> str:
    """The option as the caller names it: the flag on the command line, else the Python
    argument (`--batch-size` -> `batch_size`)."""
    if on_command_line():
        return flag
    return API_NAMES.get(flag, flag.lstrip("-").replace("-", "_"))


@contextmanager
def from_command_line() -> Iterator[None]:
    """While the block runs, errors name command-line flags."""
    token = _INTERFACE.set("cli")
    try:
        yield
    finally:
        _INTERFACE.reset(token)
