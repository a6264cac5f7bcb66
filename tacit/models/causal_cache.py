"""The key/value-cache bookkeeping of CausalLMScorer.score_spans: each (template, span)
sentence tokenised whole, whether it may reuse its template's prefix, and the prefix's cache
expanded over a batch (tacit.models.causal says what is scored and why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from transformers import DynamicCache

from tacit.core.errors import TacitError, shorten

if TYPE_CHECKING:
    from tacit.models.causal import CausalLMScorer


@dataclass
class Pair:
    """One (template, span) sentence, tokenised without special tokens."""

    ids: list[int]
    in_span: np.ndarray  # bool per token: does it overlap the span's characters
    cacheable: bool  # its tokens begin with its template's prefix's tokens
    start: int = 0  # tokens taken from the template's cached prefix (0: scored whole)


def cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(keys, values) of each layer of a DynamicCache (transformers 5 and 4)."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache))


def expanded_cache(layers: list[tuple[torch.Tensor, torch.Tensor]], batch: int, config) -> Any:
    """A DynamicCache holding one prefix's keys and values for each of `batch` rows: views,
    not copies (the forward pass concatenates onto them, never writes into them)."""
    data = [(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) for k, v in layers]
    try:
        return DynamicCache(ddp_cache_data=data, config=config)
    except TypeError:  # transformers 4
        return DynamicCache.from_legacy_cache(tuple(data))  # type: ignore[attr-defined]


def tokenised_pairs(
    scorer: CausalLMScorer,
    split: Sequence[tuple[str, str, str]],
    spans: Sequence[str],
    *,
    cache: bool,
) -> tuple[list[list[int]], list[list[Pair]]]:
    """Each template's prefix ids (its text before the blank, `split` by
    CausalLMScorer.split_at_blank) and each (template, span) sentence tokenised whole, with the
    tokens that overlap the span's characters (its leading space included). A pair whose
    tokens do not begin with its prefix's (BPE merges across the blank) cannot use the cache."""
    prefixes = scorer._encode_texts([p for p, _, _ in split])
    texts = [p + gap + span + after for p, gap, after in split for span in spans]
    encoded = scorer.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
    pairs: list[list[Pair]] = []
    for t, (prefix, gap, _) in enumerate(split):
        row = []
        for s, span in enumerate(spans):
            n = t * len(spans) + s
            ids = encoded["input_ids"][n]
            if len(ids) + 1 > scorer.max_tokens:
                raise TacitError(
                    f"{shorten(repr(texts[n]))} is {len(ids) + 1} tokens with the start "
                    f"token: longer than {scorer.name} takes ({scorer.max_tokens})"
                )
            first, last = len(prefix), len(prefix) + len(gap) + len(span)
            offsets = np.asarray(encoded["offset_mapping"][n], dtype=np.int64).reshape(-1, 2)
            in_span = (offsets[:, 0] < last) & (offsets[:, 1] > first) & (last > first)
            shared = cache and ids[: len(prefixes[t])] == prefixes[t]
            row.append(Pair(ids, in_span, shared and len(ids) > len(prefixes[t])))
        pairs.append(row)
    return prefixes, pairs
