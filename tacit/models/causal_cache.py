"""The key/value-cache bookkeeping of CausalLMScorer.score_spans: each (template, span)
sentence tokenised whole, whether it may reuse its template's prefix, which sentences share a
prefix, and the prefix's cache expanded over a batch (tacit.models.causal says what is scored
and why)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np
import torch
from transformers import DynamicCache

from tacit.core.errors import TacitError, shorten
from tacit.models.batching import InProcessModel


class CausalModel(InProcessModel, Protocol):
    """What the cache bookkeeping reads of a causal LM's scorer
    (tacit.models.causal.CausalLMScorer): its tokenizer, how many tokens it takes, and how
    many start tokens (or a chat template's prefix) go before a text."""

    @property
    def _n_start(self) -> int: ...

    def _encode_texts(self, texts: Sequence[str]) -> list[list[int]]: ...


SHARE_DEEPER = 2  # tokens after a template's prefix that its sentences may share in one run
# sentences that must share those tokens: a group of its own is batched apart from the rest, so
# a small one saves a few tokens per sentence and costs batches (at 9 retrieval prompts x 50
# concepts each concept's 9 sentences made a group: 450 batches of one row, 1.3x slower)
SHARE_DEEPER_MIN = 32
BAND_SLACK = 0.125  # a row in a band is padded by at most this share of the band's width


@dataclass
class Pair:
    """One (template, span) sentence, tokenised without special tokens."""

    ids: list[int]
    in_span: np.ndarray  # bool per token: does it overlap the span's characters
    cacheable: bool  # its tokens begin with its template's prefix's tokens
    start: int = 0  # tokens taken from a cached prefix (0: scored whole)


@dataclass(frozen=True)
class PrefixRun:
    """A text before the blank, run once after the start token: its tokens'
    log-probabilities (`prefix_lp`), the next token's float32 log-probabilities over the whole
    vocabulary (`following`) and its key/value cache (`kv`, cache_layers'), which every
    sentence that goes on from it reuses."""

    prefix_lp: np.ndarray
    following: torch.Tensor
    kv: list[tuple[torch.Tensor, torch.Tensor]]


def cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(keys, values) of each layer of a DynamicCache (transformers 5 and 4)."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache))


def expanded_cache(layers: list[tuple[torch.Tensor, torch.Tensor]], batch: int, config) -> Any:
    """A DynamicCache holding one prefix's keys and values (the first row of `layers`) for each
    of `batch` rows. The cache is built on the one row and its layers then expanded: views, not
    copies (a cache built on `batch` rows copies them, [batch x heads x prefix x head size] per
    layer for every batch, which at 32 rows of a 45-token prefix in GPT-2 small is 200 MB); the
    forward pass concatenates onto them, never writes into them."""
    data = [(k[:1], v[:1]) for k, v in layers]
    try:
        cache = DynamicCache(ddp_cache_data=data, config=config)
    except TypeError:  # transformers 4: no layers to expand
        expanded = [(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) for k, v in data]
        return DynamicCache.from_legacy_cache(tuple(expanded))  # type: ignore[attr-defined]
    for layer in cast(list[Any], cache.layers):  # attention layers, as cache_layers reads them
        layer.keys = layer.keys.expand(batch, -1, -1, -1)
        layer.values = layer.values.expand(batch, -1, -1, -1)
    return cache


def tokenised_pairs(
    scorer: CausalModel,
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
            if len(ids) + scorer._n_start > scorer.max_tokens:
                raise TacitError(
                    f"{shorten(repr(texts[n]))} is {len(ids) + scorer._n_start} tokens with "
                    f"the start token (or chat prefix): longer than {scorer.name} takes "
                    f"({scorer.max_tokens})"
                )
            first, last = len(prefix), len(prefix) + len(gap) + len(span)
            offsets = np.asarray(encoded["offset_mapping"][n], dtype=np.int64).reshape(-1, 2)
            in_span = (offsets[:, 0] < last) & (offsets[:, 1] > first) & (last > first)
            shared = cache and ids[: len(prefixes[t])] == prefixes[t]
            row.append(Pair(ids, in_span, shared and len(ids) > len(prefixes[t])))
        pairs.append(row)
    return prefixes, pairs


def shared_prefixes(
    prefixes: Sequence[Sequence[int]],
    pairs: Sequence[Sequence[Pair]],
    at_least: int,
    deeper: int = SHARE_DEEPER,
    deeper_at_least: int = SHARE_DEEPER_MIN,
) -> dict[tuple[int, ...], list[tuple[int, int]]]:
    """The (template, span) pairs that will reuse a cached prefix, by the prefix's tokens.

    A sentence's prefix is its template's text before the blank and up to `deeper` tokens
    after it: the longest such beginning that at least `at_least` cacheable sentences share
    (`deeper_at_least` where it goes past the template's text) and that leaves a token to
    score. Templates that begin alike share one run (retrieval's prompts
    all begin with the blank: "A bear has fur." and "A cat is big, ..." share the run of start
    + "A"). Sentences whose prefix is shared by fewer than `at_least` are left out (scored
    whole: not worth a run of their own). Each pair kept has its `start` set to its prefix's
    length; which tokens are shared never changes a score, only the work.

    Examples:
        >>> pair = lambda ids: Pair(ids, np.ones(len(ids), bool), cacheable=True)
        >>> rows = [[pair([5, 1, 2]), pair([5, 1, 3])], [pair([5, 4])], [pair([7, 3])]]
        >>> shared_prefixes([[5], [5], [7]], rows, 2, deeper_at_least=2)
        {(5, 1): [(0, 0), (0, 1)]}
        >>> [p.start for row in rows for p in row]
        [2, 2, 0, 0]
    """
    counts: Counter[tuple[int, ...]] = Counter()
    for t, row in enumerate(pairs):
        for pair in (p for p in row if p.cacheable):
            n = len(prefixes[t])
            counts.update(
                tuple(pair.ids[: n + d]) for d in range(min(deeper, len(pair.ids) - n - 1) + 1)
            )
    groups: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for t, row in enumerate(pairs):
        for s, pair in enumerate(row):
            if pair.cacheable:
                n = len(prefixes[t])
                keys = (
                    tuple(pair.ids[: n + d])
                    for d in range(min(deeper, len(pair.ids) - n - 1), -1, -1)
                    if counts[tuple(pair.ids[: n + d])] >= (deeper_at_least if d else at_least)
                )
                key = next(keys, tuple(prefixes[t]))
                groups.setdefault(key, []).append((t, s))
    groups = {prefix: members for prefix, members in groups.items() if len(members) >= at_least}
    for prefix, members in groups.items():
        for t, s in members:
            pairs[t][s].start = len(prefix)
    return groups


def length_bands(lengths: Sequence[int], slack: float = BAND_SLACK) -> list[np.ndarray]:
    """Item indices, longest first, cut into bands of similar length: a band ends where the
    next item is shorter than (1 - slack) x the band's longest, so that batched within a band no
    row is padded by more than `slack` of its batch's width.

    Examples:
        >>> [band.tolist() for band in length_bands([10, 50, 48, 9, 22, 20])]
        [[1, 2], [4, 5], [0, 3]]
    """
    order = np.argsort([-n for n in lengths], kind="stable")
    bands, first = [], 0
    for at in range(1, len(order) + 1):
        if at == len(order) or lengths[order[at]] < (1 - slack) * lengths[order[first]]:
            bands.append(order[first:at])
            first = at
    return bands
