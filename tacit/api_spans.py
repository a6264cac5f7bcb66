"""Retrieval and elicitation over candidate spans: what `tacit.retrieve(..., candidates=
"concepts")` and `tacit.elicit(..., candidates="answers")` run (tacit.probes.candidates says
how spans are scored and ranked). The same run loop, summaries and reports as vocabulary mode;
the manifest adds the candidate set(s), the span scoring, the normalisation and the forward
rows run against the naive count."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.manifest import now
from tacit.core.options import RunOptions
from tacit.engine.runner import Scored, Work, run_manifest, run_models
from tacit.norms.reader import NormSet
from tacit.probes.candidates import (
    CandidateSet,
    SpanRanker,
    check_span_options,
    concept_candidates,
    read_candidates,
)
from tacit.results.reports import elicitation_span_report
from tacit.results.result import ProbeResult
from tacit.results.summary import summarize_elicitation

SPAN_KINDS = ("masked", "causal")  # the model families whose scorers implement score_spans


def span_record(
    sets: dict[str, CandidateSet], scoring: str, normalize: str, records: list[dict[str, Any]]
) -> dict[str, Any]:
    """The manifest's account of a span run."""
    return {
        "candidates": {name: s.record() for name, s in sets.items()},
        "span_scoring": scoring,
        "normalize": normalize,
        # masked LMs' forward rows against one per span token per (prompt, candidate) pair;
        # causal LMs' tokens against each sentence whole (Scorer.span_work), over all models
        "span_work": {
            key: sum(r.get(key, 0) for r in records)
            for key in ("span_rows", "span_rows_naive", "span_tokens", "span_tokens_naive")
            if any(key in r for r in records)
        },
    }


def _run(
    probe: str,
    models: Sequence[str],
    run: RunOptions,
    rows: pd.DataFrame,
    score: Callable[[Any, pd.DataFrame, Any], pd.DataFrame],
    rankers: Sequence[SpanRanker],
    sets: dict[str, CandidateSet],
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Score the prompts with each model; (rows, manifest with the span record)."""
    started = now()

    def scored(scorer: Any, chunk: pd.DataFrame, bar: Any) -> Scored:
        table = score(scorer, chunk, bar)
        counts: dict[str, int] = {}
        for ranker in rankers:
            for key, value in ranker.take_counts().items():
                counts[key] = counts.get(key, 0) + value
        return Scored(table, counts)

    first = rankers[0]
    plan = {"candidates_sha256": {n: s.sha256 for n, s in sets.items()},
            "span_scoring": first.scoring, "normalize": first.normalize}  # fmt: skip
    table, records = run_models(models, run, Work(rows, "prompt", scored, kinds=SPAN_KINDS),
                                probe=probe, plan=plan)  # fmt: skip
    record = span_record(sets, first.scoring, first.normalize, records)
    return table, run_manifest(probe, run, records, started, **record)


def retrieve_spans(
    models: Sequence[str],
    norms: NormSet,
    conditions: list[Any],
    *,
    candidates: str,
    span_scoring: str,
    normalize: str,
    articles: Mapping[str, str] | None,
    max_props: int,
    concepts: Sequence[str] | None,
    run: RunOptions,
) -> tuple[pd.DataFrame, Any, CandidateSet, dict[str, Any]]:
    """(prompts scored by every model, the prompt set, the candidate set, the manifest)."""
    from tacit.probes.retrieve import build_prompts, span_prompt
    from tacit.probes.retrieve_spans import property_free, score_span_prompts

    check_span_options(span_scoring, normalize)
    prompt_set = build_prompts(norms, None, conditions, max_props=max_props, concepts=concepts,
                               seed=run.seed, template=span_prompt)  # fmt: skip
    if prompt_set.prompts.empty:
        raise TacitError("no concept is left to probe")
    every, span_of = concept_candidates(norms, list(prompt_set.prompts["concept"]), articles)
    chosen = every if candidates == "concepts" else read_candidates(candidates)
    missing = sorted(set(span_of.values()) - set(chosen.spans))
    if missing:
        raise TacitError(
            f"--candidates {candidates}: every target must be a candidate; {len(missing)} are "
            f"not (e.g. {', '.join(repr(m) for m in missing[:3])})"
        )
    ranker = SpanRanker(chosen, span_scoring, normalize, property_free)
    table, manifest = _run(
        "retrieve", models, run, prompt_set.prompts,
        lambda scorer, rows, bar: score_span_prompts(rows, scorer, ranker, span_of, bar),
        [ranker], {"all": chosen},
    )  # fmt: skip
    return table, prompt_set, chosen, manifest


def elicit_spans(
    models: Sequence[str],
    norms: NormSet,
    relations: Sequence[str],
    prefixes: Sequence[bool],
    *,
    candidates: str,
    span_scoring: str,
    normalize: str,
    concepts: Sequence[str] | None,
    run: RunOptions,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any], dict[str, str]]:
    """(prompts scored by every model, the prompts, answers left out per relation, manifest,
    the candidate files: candidates.txt for a FILE, candidates-<relation>.txt for answers)."""
    from tacit.probes.elicit_spans import (
        build_span_prompts,
        concept_free,
        score_span_elicitation,
        span_golds,
    )

    check_span_options(span_scoring, normalize)
    given = None if candidates == "answers" else read_candidates(candidates)
    sets, gold, left_out = span_golds(norms, relations, given)
    prompts = build_span_prompts(gold, relations, prefixes, concepts)
    if prompts.empty:
        raise TacitError(f"no concept has a gold answer among the candidates ({candidates})")
    answering = {r: set(gold.loc[gold["relation"] == r, "span"]) for r in relations}
    rankers = {r: SpanRanker(sets[r], span_scoring, normalize, concept_free(r)) for r in relations}
    table, manifest = _run(
        "elicit", models, run, prompts,
        lambda scorer, rows, bar: score_span_elicitation(rows, scorer, rankers, answering, bar),
        list(rankers.values()), dict(sets),
    )  # fmt: skip
    if given is not None:
        files = {"candidates.txt": given.text}
    else:
        files = {f"candidates-{r.replace(' ', '_')}.txt": sets[r].text for r in relations}
    return table, prompts, left_out, manifest, files


def elicit_result(
    models: Sequence[str],
    norm_set: NormSet,
    relations: Sequence[str],
    prefix: bool | str,
    prefixes: list[bool],
    concepts: Sequence[str] | None,
    run: RunOptions,
    **span: str,
) -> ProbeResult:
    """Elicitation over candidate spans (tacit.api_spans): the same summary and report."""
    from tacit.api import norms_record
    from tacit.probes.elicit import PAPER_PROMPTS

    prompts, per_model, left_out, manifest, files = elicit_spans(
        models, norm_set, relations, prefixes, concepts=concepts, run=run, **span
    )
    counts = per_model[per_model.prefix == prefixes[0]].groupby("relation").size()
    chosen = list(concepts) if concepts is not None else None
    manifest["options"] = {"relations": relations, "prefix": prefix, **span, "concepts": chosen}
    manifest["norms"] = norms_record(norm_set)
    manifest["counts"] = {
        "prompts_per_model": len(per_model),
        "prompts_by_relation": {r: int(counts.get(r, 0)) for r in relations},
        "answers_not_candidates": left_out.to_dict("records"),
        "spearman_undefined": int(prompts["spearman"].isna().sum()),
    }
    summary = summarize_elicitation(prompts)
    text, notes = elicitation_span_report(summary, left_out, manifest, PAPER_PROMPTS)
    return ProbeResult(prompts, summary, None, manifest, {"answers_left_out": left_out},
                       text=text, notes=notes, files=files)  # fmt: skip
