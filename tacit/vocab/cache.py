"""Each tokenizer's single-token words, kept on disk between runs.

Finding them encodes and decodes every entry of the tokenizer's vocabulary (about a second for
RoBERTa's 50,000 on a laptop core), and the answer is the same every run for the same
tokenizer. A cache entry is keyed by a hash of everything that answer depends on: the
tokenizer's whole serialised state (vocabulary, merges, normaliser, pre-tokenizer, added
tokens), its special-token ids, its class, the `tokenizers` library's version and the version
of the rule in `single_token_words`. Any change to one of them is a new key, never a stale
answer. Tokenizers without a Rust backend (nothing to hash reliably) are not cached.

An entry that cannot be this tokenizer's words (cut short, damaged, not a mapping of words to
token ids) is computed again and replaced, with no error. A cache that cannot be written
(read-only, full disk) is a warning, and the run goes on without caching; the manifest's
record of where the words came from says why.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tacit.core.files import write_atomic
from tacit.core.paths import cache_dir

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

# Bump whenever single_token_words changes what it returns: old entries are then never read.
RULE_VERSION = 2  # 2: words read inside a sentence ("a word"), for SentencePiece


def tokenizer_key(tokenizer: PreTrainedTokenizerBase) -> str | None:
    """Hex sha256 identifying what single_token_words returns for this tokenizer; None when it
    has no Rust backend to serialise."""
    import tokenizers

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    digest = hashlib.sha256()
    for part in (
        f"rule {RULE_VERSION}",
        f"tokenizers {tokenizers.__version__}",
        type(tokenizer).__name__,
        json.dumps(sorted(tokenizer.all_special_ids)),
        backend.to_str(),
    ):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


def cached_words(
    tokenizer: PreTrainedTokenizerBase,
    compute: Callable[[PreTrainedTokenizerBase], dict[str, int]],
) -> tuple[dict[str, int], str]:
    """`compute(tokenizer)`, read from the cache when it holds this tokenizer's answer, else
    computed and written there. Returns the words and where they came from, for the manifest:
    `cache <key>` (read), `computed, cached as <key>`, `computed` (no Rust backend), or
    `computed, not cached (<why>)` (the cache directory cannot be written: the run goes on)."""
    key = tokenizer_key(tokenizer)
    if key is None:
        return compute(tokenizer), "computed"
    path = cache_dir() / "single-token-words" / f"{key}.json"
    words = _read_entry(path)
    if words is not None:
        return words, f"cache {key[:16]}"
    words = compute(tokenizer)
    problem = _write_entry(path, words)
    return words, (f"computed, cached as {key[:16]}" if problem is None
                   else f"computed, not cached ({problem})")  # fmt: skip


def _read_entry(path: Path) -> dict[str, int] | None:
    """The words of a cache entry; None when it is missing or unusable (then recomputed): not
    JSON (cut short), or not a mapping of words to token ids."""
    try:
        words = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    valid = isinstance(words, dict) and all(
        isinstance(w, str) and type(i) is int and i >= 0 for w, i in words.items()
    )
    return words if valid and words else None


def _write_entry(path: Path, words: dict[str, int]) -> str | None:
    """Write an entry whole or not at all (runs in parallel never read half of one); when the
    directory cannot be written, warn and return why."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(words, ensure_ascii=False))
    except OSError as err:
        problem = f"{path.parent}: {err.strerror}"
        warnings.warn(
            f"{path.parent}: cannot cache single-token words there ({err.strerror}); the run "
            "goes on without caching (free some space, or set TACIT_CACHE_DIR to a writable "
            "directory)",
            stacklevel=3,
        )
        return problem
    return None
