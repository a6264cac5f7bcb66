"""Masked-LM scoring of candidate spans of any length in a template's blank, exactly.

A span's tokens are those it has in the full sentence (by character offsets). `l2r`: the
chain rule from left to right, sum_i log P(t_i | t1..t(i-1) written, t_i..t_k masked);
`independent` (mLAMA's): all k masked in one pass. Candidates that share a prefix of tokens
share the row that predicts the next one, so each node of a prefix tree is one row; rows of
all templates are batched longest first, the LM head runs only where read, and the sums are
taken on the device (docs/probes/candidates.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from tacit.core.blank import MASK
from tacit.core.errors import TacitError, shorten
from tacit.models.answers import cut_tokens, span_token_grid
from tacit.models.base import SpanScores, progress_bar
from tacit.models.batching import InProcessModel, longest_first_batches, padded
from tacit.models.meter import longest_first


class MaskedModel(InProcessModel, Protocol):
    """What span scoring reads of a masked LM's scorer (tacit.models.masked.MaskedLMScorer):
    its model and tokenizer on a device, and the hook that runs the LM head at the rows read."""

    _rows: torch.Tensor | None

    def _mask_rows_hook(self) -> torch.utils.hooks.RemovableHandle: ...


@dataclass
class SpanPlan:
    """The forward rows that score every (template, span) pair, and what each row's reads add
    to which pair.

    rows: token ids of each row; reads: the positions read in each row (its masks scored).
    row, read, token, pair: one entry per (pair, span token): the log-probability of `token`
        at the `read`-th position read in `row` is added to pair `pair` (template-major).
    n_tokens: each pair's number of span tokens.
    """

    rows: list[list[int]] = field(default_factory=list)
    reads: list[list[int]] = field(default_factory=list)
    row: list[int] = field(default_factory=list)
    read: list[int] = field(default_factory=list)
    token: list[int] = field(default_factory=list)
    pair: list[int] = field(default_factory=list)
    n_tokens: list[int] = field(default_factory=list)

    def add_row(self, ids: list[int], reads: list[int]) -> int:
        self.rows.append(ids)
        self.reads.append(reads)
        return len(self.rows) - 1


def span_tokens_in_context(
    tokenizer, template: str, spans: Sequence[str]
) -> list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """(left ids, span ids, right ids) of each span in the template's sentence: the tokens of
    the whole sentence, cut where the span's characters begin and end (a token overlapping the
    span belongs to it)."""
    if template.count(MASK) != 1:
        raise TacitError(f"template {shorten(template)!r} must contain {MASK} exactly once")
    start = template.index(MASK)
    before, after = template[:start], template[start + len(MASK) :]
    sentences = [before + span + after for span in spans]
    encoded = tokenizer(sentences, return_offsets_mapping=True)
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}  # an unknown word counts
    cut = []
    for span, ids, offsets in zip(spans, encoded["input_ids"], encoded["offset_mapping"]):
        end = start + len(span)
        inside = [
            n
            for n, ((a, b), token) in enumerate(zip(offsets, ids))
            if token not in special and b > start and a < end and b > a
        ]
        if not inside:
            raise TacitError(f"candidate {shorten(span)!r} has no tokens in {shorten(template)!r}")
        first, last = inside[0], inside[-1] + 1
        cut.append((tuple(ids[:first]), tuple(ids[first:last]), tuple(ids[last:])))
    return cut


def plan_spans(
    scorer: MaskedModel, templates: Sequence[str], spans: Sequence[str], scoring: str
) -> SpanPlan:
    """The rows for every (template, span) pair (pair = template index x len(spans) + span)."""
    mask_id = scorer.tokenizer.mask_token_id
    plan = SpanPlan()
    for t, template in enumerate(templates):
        nodes: dict[tuple, int] = {}  # (left, right, k, prefix) -> row
        for s, (left, ids, right) in enumerate(
            span_tokens_in_context(scorer.tokenizer, template, spans)
        ):
            k, pair = len(ids), t * len(spans) + s
            if len(left) + k + len(right) > scorer.max_tokens:
                raise TacitError(
                    f"{shorten(template)!r} with {shorten(spans[s])!r} is longer than "
                    f"{scorer.name} allows ({scorer.max_tokens} tokens)"
                )
            plan.n_tokens.append(k)
            for i, token in enumerate(ids):
                prefix = ids[:i] if scoring == "l2r" else ()
                key = (left, right, k, prefix)
                if key not in nodes:
                    masked = [*left, *prefix, *[mask_id] * (k - len(prefix)), *right]
                    positions = (
                        [len(left) + i] if scoring == "l2r" else [len(left) + j for j in range(k)]
                    )
                    nodes[key] = plan.add_row(masked, positions)
                plan.row.append(nodes[key])
                plan.read.append(0 if scoring == "l2r" else i)
                plan.token.append(token)
                plan.pair.append(pair)
    return plan


def score_spans(
    scorer: MaskedModel,
    templates: Sequence[str],
    spans: Sequence[str],
    *,
    scoring: str = "l2r",
    progress: bool | tqdm = True,
    tokens: bool = False,
) -> SpanScores:
    """Every (distinct) span in the blank of every (distinct) template ([templates x spans];
    see the module), with the rows run against one per span token per pair; with `tokens`,
    each pair's span tokens and their terms (SpanTokens), read in the same pass."""
    plan = plan_spans(scorer, templates, spans, scoring)
    naive = sum(plan.n_tokens) if scoring == "l2r" else len(plan.n_tokens)
    terms = np.zeros(len(plan.pair)) if tokens else None
    sums = run_plan(scorer, plan, progress, "spans", terms).reshape(len(templates), len(spans))
    n_tokens = np.asarray(plan.n_tokens).reshape(len(templates), len(spans))
    grid = None
    if terms is not None:  # a pair's entries are its span's tokens, in order, one after another
        names = scorer.tokenizer.convert_ids_to_tokens(plan.token)
        found = cut_tokens(names, terms, plan.n_tokens)
        grid = span_token_grid(
            [found[t * len(spans) : (t + 1) * len(spans)] for t in range(len(templates))]
        )
    work = {"span_rows": len(plan.rows), "span_rows_naive": naive}
    return SpanScores(sums, n_tokens, work=work, tokens=grid)


def run_plan(
    scorer: MaskedModel,
    plan: SpanPlan,
    progress: bool | tqdm,
    desc: str,
    terms: np.ndarray | None = None,
) -> np.ndarray:
    """Run the plan's rows in batches, longest first, the LM head only at the positions read;
    the pairs' summed log-probabilities, float64 (a pair of one entry: that token's). The
    forward loop of every masked-LM score read at masks (spans, a text's every token).
    `terms` (float64, one per plan entry): filled with each entry's own log-probability,
    the terms of the sums."""
    device = scorer.device
    order = np.argsort(plan.row, kind="stable")  # each row's entries together
    entry_row = np.asarray(plan.row)[order]
    bounds = np.searchsorted(entry_row, np.arange(len(plan.rows) + 1))
    read, token = np.asarray(plan.read)[order], np.asarray(plan.token)[order]
    pair = np.asarray(plan.pair)[order]
    sums = torch.zeros(len(plan.n_tokens), dtype=torch.float64, device=device)
    pad_id = scorer.tokenizer.pad_token_id or 0

    def run(indices: np.ndarray) -> None:
        ids, attention = padded(plan.rows, indices, pad_id, device)
        reads = [(b, p) for b, r in enumerate(indices) for p in plan.reads[r]]
        scorer._rows = torch.as_tensor(reads, device=device)
        log_probs = scorer.model(input_ids=ids, attention_mask=attention).logits[0]
        log_probs = log_probs.float().log_softmax(dim=-1)
        first_read = np.cumsum([0] + [len(plan.reads[r]) for r in indices])
        entries = [np.arange(bounds[r], bounds[r + 1]) for r in indices]
        at = np.concatenate([first_read[b] + read[e] for b, e in enumerate(entries)])
        chosen = np.concatenate(entries)
        values = log_probs[
            torch.as_tensor(at, device=device), torch.as_tensor(token[chosen], device=device)
        ]
        sums.index_add_(0, torch.as_tensor(pair[chosen], device=device), values.double())
        if terms is not None:
            terms[order[chosen]] = values.double().cpu().numpy()

    hook = scorer._mask_rows_hook()
    try:
        with (
            progress_bar(
                progress,
                len(plan.rows),
                f"{desc} {scorer.name}",
                "row",
                longest_first([len(r) for r in plan.rows]),
            ) as bar,
            torch.inference_mode(),
        ):
            for indices, _ in longest_first_batches([len(r) for r in plan.rows], scorer, run):
                bar.update(len(indices))
    finally:
        hook.remove()
    return sums.cpu().numpy()
