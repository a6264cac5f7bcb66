"""tacit's floor: every call tacit makes to its model during a job (token ids, attention
mask, the key/value cache it hands over, the rows its LM head is given) recorded, then run again
with nothing else: the model's compute on tacit's batches, the LM head where tacit reads it.
Used by run_tacit.py and bench_in_place.py."""

from __future__ import annotations

import time
from typing import Any

import torch

from tacit.models.causal_cache import cache_layers, expanded_cache
from tacit.models.masked import MaskedLMScorer

CACHE_KEYWORDS = ("cache", "past_key_values")


def recording(scorer) -> list[tuple[dict[str, Any], Any]]:
    """Record each call to the scorer's model from now on: (keyword arguments, the rows its LM
    head is to keep); a key/value cache is kept as its layers (the call appends to the cache)."""
    calls: list[tuple[dict[str, Any], Any]] = []
    forward = scorer.model.forward

    def record(**kwargs: Any):
        kept = dict(kwargs)
        for key in CACHE_KEYWORDS:
            if kept.get(key) is not None:
                kept[key] = cache_layers(kept[key])
        calls.append((kept, getattr(scorer, "_rows", None)))
        return forward(**kwargs)

    scorer.model.forward = record
    return calls


def replay(scorer, calls: list[tuple[dict[str, Any], Any]]) -> float:
    """Seconds to run the recorded calls again, bare (the masked LM's head hook in place)."""
    del scorer.model.forward  # the model's own forward again
    hook = scorer._mask_rows_hook() if isinstance(scorer, MaskedLMScorer) else None

    start = time.perf_counter()
    with torch.inference_mode():
        for kwargs, rows in calls:
            scorer._rows = rows
            call = dict(kwargs)
            for key in CACHE_KEYWORDS:
                if call.get(key) is not None:
                    batch = call["input_ids"].shape[0]
                    call[key] = expanded_cache(call[key], batch, scorer.model.config)
            scorer.model(**call)
    seconds = time.perf_counter() - start
    if hook is not None:
        hook.remove()
    return seconds
