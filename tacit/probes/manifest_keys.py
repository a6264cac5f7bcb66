"""The manifest keys several probes share, declared once (a probe's own are beside its
options): what the Asks record (RankedManifest: the vocabulary's or the candidate spans';
AskedManifest: asking in words; RankedOrAskedManifest: either), and what a model's scoring and
ranking add to its record (ScoringCounts, RankingCounts). Light: probes declare their keys
with these before any array library loads."""

from __future__ import annotations

from typing import Any, TypedDict

from tacit.core.manifest import Manifest


class ScoringCounts(TypedDict, total=False):
    """What a model's answers count of the work they ran, summed over a run's chunks into the
    model's manifest record (the runner adds every answer's `work`)."""

    # candidate spans: a masked LM's forward rows, a causal LM's tokens, and the naive counts
    span_rows: int
    span_rows_naive: int
    span_tokens: int
    span_tokens_naive: int
    # a causal model's vocabulary mode: words whose text after the blank was scored
    vocab_suffixes: int
    vocab_suffixes_naive: int
    # texts scored in batch-invariant batches (tacit.models.invariant), whose near ties needed
    # no settling: their scores were those of the prompt alone already
    tie_invariant_texts: int
    # generation (generation_counts): requests the model ran, their prompt and completion
    # tokens, and requests read from --cache instead
    generation_requests: int
    generation_prompt_tokens: int
    generation_completion_tokens: int
    generation_cached: int
    # where it happened: answers longer than their bound; a thinking model's reasoning tokens
    # (of the completion tokens) and completions that spent their whole max_tokens thinking
    generation_oversized: int
    generation_reasoning_tokens: int
    generation_thought_to_limit: int
    # the same of the judge's requests (--judge: tacit.ask.judge), made for this model's answers
    judge_generation_requests: int
    judge_generation_prompt_tokens: int
    judge_generation_completion_tokens: int
    judge_generation_cached: int
    judge_generation_oversized: int
    judge_generation_reasoning_tokens: int
    judge_generation_thought_to_limit: int


class RankingCounts(ScoringCounts, total=False):
    """What a Ranking's `counts` add to a model's manifest record (summed over a run's chunks):
    the scoring's work, and the tie rule's (tacit.ranking.ties)."""

    # near ties settled on the prompt scored alone: rows, scores computed again, those that
    # had moved by more than a third of the tolerance, the distinct prompts (spans: templates)
    # scored alone (the milliseconds it took go to the record's timing)
    tie_rows: int
    tie_scores: int
    tie_noisy: int
    tie_prompts: int
    # with --suffix-top: gold ranks counted against bounds (upper bounds of the ranks), and
    # top-k lists a bound could pass (the best of the words scored)
    ranks_bounded: int
    tops_bounded: int


class RankedManifest(Manifest, total=False):
    """What a probe that ranks candidates records of them (Candidates.record), beside the keys
    of every run: the vocabulary's (a shared key) or the spans' scoring, and the tie rule."""

    span_scoring: str  # how a masked LM scores a span (tacit.ranking.spans)
    normalize: str  # how a span's token scores become its score: sum, mean, pmi
    token_scores: bool  # --token-scores: every span token's score kept (tokens.csv)
    span_work: dict[str, int]  # the work the span scoring ran, summed over the models
    ties: dict[str, Any]  # the tie rule and its tolerance (tacit.ranking.ties.record)


class AskedManifest(Manifest, total=False):
    """What a run by generation records of how the models were asked (generation_record)."""

    generation: dict[str, Any]


class RankedOrAskedManifest(RankedManifest, AskedManifest, total=False):
    """What a probe that ranks candidates or asks by generation records (retrieve, elicit)."""
