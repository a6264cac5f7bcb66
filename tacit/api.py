"""The Python API of the norms-based probes: retrieve, elicit and Prince's examples.

Each function builds its prompts, hands them to the runner (tacit.engine.runner) and returns a
ProbeResult whose tables, manifest, text and notes are what the command line prints and saves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.manifest import now
from tacit.core.options import (
    ABLATIONS,
    NORMS_FORMATS,
    RELATIONS,
    Ablation,
    Category,
    Normalize,
    NormsFormat,
    Order,
    Relation,
    RunOptions,
    Selection,
    SpanScoring,
    check_at_least,
    check_choice,
    check_choices,
)
from tacit.engine.runner import Work, run_manifest, run_models
from tacit.norms import NormSet, load_norms, parse_columns
from tacit.results.reports import elicitation_report, prince_report, retrieval_report
from tacit.results.result import ProbeResult
from tacit.results.summary import summarize_elicitation, summarize_retrieval

if TYPE_CHECKING:
    from tacit.models.base import Scorer
    from tacit.vocab.shared import Vocabulary

RetrievalResult = ProbeResult  # the name earlier versions exported

# the kinds that score a blank ending its sentence over the shared vocabulary (elicit, prince)
VOCAB_KINDS = ("masked", "causal")

ScoreRows = Callable[["Scorer", "Vocabulary", pd.DataFrame, Any], pd.DataFrame]


def _vocab_probe(
    probe: str,
    models: Sequence[str],
    options: RunOptions,
    prepare: Callable[[Vocabulary], pd.DataFrame],
    score: ScoreRows,
    kinds: Sequence[str] = ("masked",),
) -> tuple[pd.DataFrame, Vocabulary, dict[str, Any]]:
    """Build the shared vocabulary, the prompts (`prepare`, before any model loads, so that bad
    input fails before the slow part), then score them with each model in turn (models of
    `kinds`; the vocabulary is shared across kinds)."""
    from tacit.vocab.shared import vocabulary_for

    if not models:
        raise TacitError("no --model given")
    started = now()
    vocab, tokenizers = vocabulary_for(
        models, vocab_models=options.vocab_models, vocab_file=options.vocab_file,
        revision=options.revision,
    )  # fmt: skip
    work = Work(
        prepare(vocab), "prompt", lambda scorer, rows, bar: score(scorer, vocab, rows, bar), kinds
    )
    table, records = run_models(
        models, options, work, probe=probe, plan={"vocabulary_sha256": vocab.sha256},
        tokenizers=tokenizers,
    )  # fmt: skip
    manifest = run_manifest(
        probe, options, records, started, vocabulary=vocab.record(options.vocab_file)
    )
    return table, vocab, manifest


def norms_record(norms: NormSet) -> dict[str, Any]:
    return {
        "path": str(norms.path),
        "format": norms.format,
        "columns": dict(norms.columns) if norms.columns else None,
        "feature_types": norms.feature_types,
        "sha256": norms.sha256,
        "rows": len(norms.table),
        "concepts": len(norms.concepts),
        "merged_duplicates": norms.merged.to_dict("records"),
    }


def _as_norms(
    norms: NormSet | str | Path | None,
    norms_format: NormsFormat | None,
    norms_columns: Mapping[str, str] | str | None,
) -> NormSet:
    """A NormSet as given, or read from a path or installed name (tacit.norms.load_norms)."""
    if isinstance(norms, NormSet):
        return norms
    if norms_format is not None:
        check_choice("--norms-format", norms_format, NORMS_FORMATS)
    columns = parse_columns(norms_columns) if isinstance(norms_columns, str) else norms_columns
    return load_norms(norms, format=norms_format, columns=columns)


def _check_categories(norms: NormSet, conditions: Sequence[Any]) -> None:
    """A category condition needs feature types: a generic table without them has none."""
    typed = [c.category for c in conditions if c.category != "all"]
    if typed and not norms.feature_types:
        raise TacitError(
            f"--category {typed[0]}: {norms.path} gives no feature types (no feature_type "
            "column): add one, or run without --category / --ablation category"
        )


RETRIEVAL_DEFAULTS = {"--select": "top", "--order": "decreasing", "--category": "all"}


def retrieval_conditions(
    selection: str | None, order: str | None, category: str | None, ablation: str | None
) -> list[Any]:
    """The conditions of a run: one from --select/--order/--category (None: not given, the
    default), or an ablation's grid, which overrides all three: giving any of them with an
    ablation is refused, whatever its value, so that no option is silently ignored."""
    from tacit.probes.retrieve import ABLATION_GRIDS, Condition

    given = {"--select": selection, "--order": order, "--category": category}
    if ablation is None:
        chosen = {name: value or RETRIEVAL_DEFAULTS[name] for name, value in given.items()}
        condition = Condition(chosen["--select"], chosen["--order"], chosen["--category"])
        condition.check()
        return [condition]
    check_choice("--ablation", ablation, ABLATIONS)
    overridden = [name for name, value in given.items() if value is not None]
    if overridden:
        raise TacitError(
            f"--ablation {ablation} runs its own grid of conditions, which sets "
            f"{' and '.join(overridden)}: drop {'it' if len(overridden) == 1 else 'them'}"
        )
    return list(ABLATION_GRIDS[ablation])


def retrieve(
    models: Sequence[str],
    *,
    norms: NormSet | str | Path | None = None,
    max_props: int = 10,
    selection: Selection | None = None,
    order: Order | None = None,
    category: Category | None = None,
    ablation: Ablation | None = None,
    concepts: Sequence[str] | None = None,
    norms_format: NormsFormat | None = None,
    norms_columns: Mapping[str, str] | str | None = None,
    candidates: str = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    articles: str | Path | Mapping[str, str] | None = None,
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run the concept-retrieval probe: "A <mask> has fur, is big, and has claws."

    Args:
        models: hub names or local directories of masked LMs, scored in turn.
        norms: a NormSet, a norms file (CSLB, McRae or a generic table) or an installed norm
            set's name; None uses the installed default or $TACIT_NORMS.
        max_props: prompts grow from 1 to this many properties.
        selection: which properties, `top` (the most often named), `bottom` or `random`;
            None (not given) means `top`.
        order: the order they are listed in, `decreasing` or `increasing` production
            frequency, or `random`; None means `decreasing`.
        category: the feature type the properties come from: `all`, `visual`, `functional`
            or `encyclopaedic`; None means `all`.
        ablation: `ordering` (top/bottom x decreasing/increasing plus the random baseline) or
            `category` (all, visual, functional, encyclopaedic): the paper's grids in one run;
            selection, order and category must then not be given.
        concepts: restrict to these concepts (each must be eligible).
        norms_format: `cslb`, `mcrae` or `generic` when the file does not show it.
        norms_columns: a generic table's column names: {"concept": "Word", ...} or
            "concept=Word,feature=Property,pf=Count".
        candidates: `vocab` (the paper's: one-token concepts among the shared vocabulary),
            `concepts` (every concept of the norms as a span with its article, "A bear",
            ranked among all of them) or a file of spans, one a line.
        span_scoring: `l2r` (exact chain rule) or `independent` (all tokens masked at once).
        normalize: `sum`, `mean` (per token) or `pmi` (against the property-free "<span>.").
        articles: a concept,article CSV (or a mapping) overriding tacit.lexicon's articles.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object.
        **run_options: the same, as RunOptions' fields by keyword (`device="cuda"`,
            `batch_size=64`, ...).

    Example:
        >>> result = tacit.retrieve(["roberta-base"], max_props=3)  # doctest: +SKIP
        >>> result.summary[["n_props", "mrr"]]  # doctest: +SKIP
    """
    from tacit.probes.retrieve import build_prompts, score_prompts

    run = RunOptions.build(options, run_options)
    check_at_least("--max-props", max_props, 1)
    norm_set = _as_norms(norms, norms_format, norms_columns)
    conditions = retrieval_conditions(selection, order, category, ablation)
    _check_categories(norm_set, conditions)
    if candidates != "vocab":
        from tacit.api_spans import retrieve_spans
        from tacit.lexicon import read_articles

        table = read_articles(articles) if isinstance(articles, (str, Path)) else articles
        prompts, prompt_set, chosen, manifest = retrieve_spans(
            models, norm_set, conditions, candidates=candidates, span_scoring=span_scoring,
            normalize=normalize, articles=table, max_props=max_props, concepts=concepts, run=run,
        )  # fmt: skip
        files = {"candidates.txt": chosen.text}
        vocab = None
    else:
        if articles is not None or (span_scoring, normalize) != ("l2r", "sum"):
            raise TacitError("--articles, --span-scoring and --normalize are for candidate "
                             "spans: add --candidates concepts (or a FILE)")  # fmt: skip
        built: dict[str, Any] = {}

        def prepare(vocab: Vocabulary) -> pd.DataFrame:
            built["set"] = build_prompts(
                norm_set, vocab, conditions, max_props=max_props, concepts=concepts, seed=run.seed
            )
            if built["set"].prompts.empty:
                raise TacitError("no concept is left to probe: see `probe norms show --model ...`")
            return built["set"].prompts

        prompts, vocab, manifest = _vocab_probe(
            "retrieve", models, run, prepare,
            lambda scorer, vocab, rows, bar: score_prompts(rows, scorer, vocab, progress=bar),
        )  # fmt: skip
        prompt_set, files = built["set"], {}
    manifest["options"] = {
        "max_props": max_props, "selection": selection or "top", "order": order or "decreasing",
        "category": category or "all", "ablation": ablation,
        "conditions": [asdict(c) for c in conditions],
        "concepts": list(concepts) if concepts is not None else None,
        "bootstrap": {"resamples": 1000, "confidence": 0.95, "unit": "concept"},
        **({"candidates": candidates, "articles": str(articles) if articles else None}
           if candidates != "vocab" else {}),
    }  # fmt: skip
    manifest["norms"] = norms_record(norm_set)
    manifest["counts"] = _retrieval_counts(prompt_set, len(prompts))
    summary = summarize_retrieval(prompts, seed=run.seed)
    text, notes = retrieval_report(summary, prompt_set.dropped, manifest)
    return ProbeResult(prompts, summary, vocab, manifest, {"dropped": prompt_set.dropped},
                       text=text, notes=notes, files=files)  # fmt: skip


def _retrieval_counts(prompt_set: Any, prompt_rows: int) -> dict[str, Any]:
    """What the manifest counts of a retrieval run: prompts, and everything left out and why."""
    from tacit.probes.retrieve import names_target

    dropped, per_model = prompt_set.dropped, prompt_set.prompts
    naming = [names_target(p, t) for p, t in zip(per_model["prompt"], per_model["target"])]
    return {
        "concepts": int(per_model["concept"].nunique()),
        "prompts_per_model": len(per_model),
        "unique_prompt_texts": int(per_model["prompt"].nunique()),
        "prompt_rows": prompt_rows,
        "concepts_dropped": len(dropped),
        "concepts_dropped_by_reason": dropped["reason"].value_counts().to_dict(),
        "concepts_with_fewer_properties_than_max_props": prompt_set.short,
        "duplicate_property_phrases_merged": prompt_set.duplicate_phrases,
        # prompts whose properties contain the target word: kept (as in the paper), counted
        "prompts_naming_their_target": {
            "prompts": int(sum(naming)),
            "concepts": sorted(set(per_model.loc[naming, "concept"])),
        },
    }


def elicit(
    models: Sequence[str],
    *,
    norms: NormSet | str | Path | None = None,
    relations: Sequence[Relation] = RELATIONS,
    prefix: bool | str = True,
    concepts: Sequence[str] | None = None,
    norms_format: NormsFormat | None = None,
    norms_columns: Mapping[str, str] | str | None = None,
    candidates: str = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run the property-elicitation probe: "Everyone knows that a bear has <mask>."

    Args:
        models: hub names or local directories of masked LMs, scored in turn.
        norms: a NormSet, a norms file or an installed norm set's name, as for `retrieve`.
        relations: any of `is`, `is a`, `has`, `has a`, `made of` (default all five).
        prefix: True for "Everyone knows that ...", False without it, "both" for both (the
            paper's Table 2 ablation in one run).
        concepts: restrict to these concepts.
        candidates: `vocab` (the paper's: one-word answers among the shared vocabulary),
            `answers` (every answer to the relation, of any length, "four legs") or a file of
            spans, one a line.
        norms_format: as for `retrieve`.
        norms_columns: as for `retrieve`.
        span_scoring: as for `retrieve`.
        normalize: as for `retrieve` (`pmi` against the prompt with "it" for the concept).
        options: as for `retrieve`.
        **run_options: as for `retrieve`.
    """
    from tacit.probes.elicit import (
        PAPER_PROMPTS,
        build_elicitation_prompts,
        gold_answers,
        score_elicitation,
    )

    run = RunOptions.build(options, run_options)
    relations = check_choices("--relation", list(relations), RELATIONS)
    prefixes: list[bool] = [True, False] if prefix == "both" else [bool(prefix)]
    check_choice("prefix", prefix, (True, False, "both"))
    norm_set = _as_norms(norms, norms_format, norms_columns)
    if candidates != "vocab":
        from tacit.api_spans import elicit_result

        return elicit_result(models, norm_set, relations, prefix, prefixes, concepts, run,
                             candidates=candidates, span_scoring=span_scoring,
                             normalize=normalize)  # fmt: skip
    built: dict[str, Any] = {}

    def prepare(vocab: Vocabulary) -> pd.DataFrame:
        golds = gold_answers(norm_set, vocab, relations)
        built["golds"] = golds
        built["prompts"] = build_elicitation_prompts(golds.answers, relations, prefixes, concepts)
        if built["prompts"].empty:
            raise TacitError("no concept has a gold answer in the shared vocabulary")
        answers = golds.answers
        built["sensible"] = {
            r: np.array(sorted({vocab.index(w) for w in words}))
            for r in relations
            if len(words := answers.loc[answers.relation == r, "word"])
        }
        return built["prompts"]

    prompts, vocab, manifest = _vocab_probe(
        "elicit", models, run, prepare,
        lambda scorer, vocab, rows, bar: score_elicitation(
            rows, scorer, vocab, built["sensible"], progress=bar
        ),
        VOCAB_KINDS,
    )  # fmt: skip
    per_model, excluded = built["prompts"], built["golds"].excluded
    counts = per_model[per_model.prefix == prefixes[0]].groupby("relation").size()
    manifest["options"] = {
        "relations": relations,
        "prefix": prefix,
        "concepts": list(concepts) if concepts is not None else None,
    }
    manifest["norms"] = norms_record(norm_set)
    manifest["counts"] = {
        "prompts_per_model": len(per_model),
        "prompts_by_relation": {r: int(counts.get(r, 0)) for r in relations},
        "paper_prompts_by_relation": {r: PAPER_PROMPTS[r] for r in relations},
        "sensible_vocabulary_by_relation": {r: len(v) for r, v in built["sensible"].items()},
        "features_excluded": excluded.to_dict("records"),
        "spearman_undefined": int(prompts["spearman"].isna().sum()),
    }
    summary = summarize_elicitation(prompts)
    text, notes = elicitation_report(summary, excluded, manifest, PAPER_PROMPTS)
    return ProbeResult(prompts, summary, vocab, manifest, {"excluded": excluded}, text=text,
                       notes=notes)  # fmt: skip


def prince(
    models: Sequence[str], *, options: RunOptions | None = None, **run_options: Any
) -> ProbeResult:
    """Prince (1978)'s own examples, both directions (the paper's Figure 4); no norms needed."""
    from tacit.probes.prince import prince_prompts, score_prince

    run = RunOptions.build(options, run_options)
    prompts, vocab, manifest = _vocab_probe(
        "prince", models, run, prince_prompts,
        lambda scorer, vocab, rows, bar: score_prince(rows, scorer, vocab, progress=bar),
        VOCAB_KINDS,
    )  # fmt: skip
    summary = prompts[["model", "direction", "rank", "target_prob", "ap_vocab"]]
    text, notes = prince_report(prompts, manifest)
    return ProbeResult(prompts, summary, vocab, manifest, text=text, notes=notes)
