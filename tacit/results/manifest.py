"""What a manifest records about the software and the models of a run."""

from __future__ import annotations

import platform
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from tacit.scorer import MaskedLMScorer


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


def model_record(scorer: MaskedLMScorer) -> dict[str, str | None]:
    """A model as given, with the revision asked for and the one resolved."""
    local = Path(scorer.name)
    return {
        "name": scorer.name,
        "local_path": str(local.resolve()) if local.is_dir() else None,
        "class": type(scorer.model).__name__,
        "revision": scorer.revision,
        "resolved_revision": scorer.resolved_revision,
        "mask_token": scorer.tokenizer.mask_token,
    }


def now() -> str:
    """An ISO 8601 timestamp with the time zone."""
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def command_line() -> str:
    """The command line as typed (as far as Python can tell)."""
    return " ".join(sys.argv)
