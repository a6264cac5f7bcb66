"""The shared vocabulary: building it from tokenizers, reading a vocab file, coverage.

The names below load tacit.vocab.shared (and pandas) on first use, not on import: the model
loaders import tacit.hub.access, and a scorer alone needs neither."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tacit.vocab.shared import (
        Vocabulary,
        build_vocabulary,
        read_vocab_file,
        single_token_words,
    )

__all__ = [
    "Vocabulary",
    "build_vocabulary",
    "read_vocab_file",
    "single_token_words",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module("tacit.vocab.shared"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
