"""What every manifest records about the software, the time and the command line of a run."""

from __future__ import annotations

import platform
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def software() -> dict[str, str | None]:
    """Versions of tacit and of the libraries whose behaviour shapes the scores."""
    return {
        "tacit": _version("tacit"),
        "python": platform.python_version(),
        **{
            name: _version(name)
            for name in ("torch", "transformers", "tokenizers", "numpy", "pandas")
        },
    }


def now() -> str:
    """An ISO 8601 timestamp with the time zone."""
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def command_line() -> str:
    """The command line as typed (as far as Python can tell)."""
    return " ".join(sys.argv)
