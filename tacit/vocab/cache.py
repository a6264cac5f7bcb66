"""Each tokenizer's single-token words, kept on disk between runs: finding them encodes and
decodes every entry of the vocabulary (about a second for RoBERTa's 50,000), and the answer is
the same every run. An entry is keyed by a hash of all it depends on (the tokenizer's whole
serialised state, its special-token ids, its class, the `tokenizers` version, the rule's
version), so a change is a new key, never a stale answer; tokenizers without a Rust backend
are not cached. Entries live in tacit.core.cache: a damaged one is computed again, an
unwritable cache is a warning, and the manifest says where the words came from.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from tacit.core.cache import DiskCache, fingerprint
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
    return fingerprint(
        f"rule {RULE_VERSION}",
        f"tokenizers {tokenizers.__version__}",
        type(tokenizer).__name__,
        json.dumps(sorted(tokenizer.all_special_ids)),
        backend.to_str(),
    )


def _load(data: bytes) -> dict[str, int] | None:
    """The words of an entry, if it is a mapping of words to token ids."""
    words = json.loads(data.decode("utf-8"))
    valid = isinstance(words, dict) and all(
        isinstance(w, str) and type(i) is int and i >= 0 for w, i in words.items()
    )
    return words if valid and words else None


def words_cache() -> DiskCache[dict[str, int]]:
    return DiskCache(
        cache_dir() / "single-token-words",
        ".json",
        lambda words: json.dumps(words, ensure_ascii=False).encode("utf-8"),
        _load,
        what="single-token words",
        advice="set TACIT_CACHE_DIR to a writable directory",
    )


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
    cache = words_cache()
    words = cache.get(key, lambda: compute(tokenizer))
    if cache.hits:
        return words, f"cache {key[:16]}"
    if cache.unwritten is not None:
        return words, f"computed, not cached ({cache.unwritten})"
    return words, f"computed, cached as {key[:16]}"
