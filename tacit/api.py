"""The Python API: run a probe end to end and get its tables as DataFrames."""

from __future__ import annotations

import gc
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from tacit.errors import TacitError
from tacit.files import json_text, sha256_bytes, table_text, write_files
from tacit.norms.reader import NormSet
from tacit.norms.store import load_norms
from tacit.probes.elicit import (
    PAPER_PROMPTS,
    RELATIONS,
    build_elicitation_prompts,
    gold_answers,
    score_elicitation,
)
from tacit.probes.prince import prince_prompts, score_prince
from tacit.probes.retrieve import ABLATIONS, Condition, build_prompts, names_target, score_prompts
from tacit.results.checkpoint import PARTIAL, Checkpoint
from tacit.results.manifest import command_line, model_record, now, software
from tacit.results.rundir import prepare_run_dir
from tacit.results.summary import summarize_elicitation, summarize_retrieval
from tacit.scorer import MaskedLMScorer, resolve_device, resolve_dtype
from tacit.vocab.shared import Vocabulary, vocabulary_for


@dataclass
class ProbeResult:
    """What a probe run produced.

    Attributes:
        prompts: one row per prompt x model (prompts.csv; items.csv for NLI suites, one row
            per item x model x seed).
        summary: the per-condition means (summary.csv).
        vocab: the shared vocabulary scored over (vocab.txt); None for NLI suites.
        manifest: everything needed to rerun and to trust the numbers (manifest.json).
        extra: further tables by file stem, e.g. `dropped` (retrieval: concepts left out and
            why) or `excluded` (elicitation: features left out of the gold answers and why).
    """

    prompts: pd.DataFrame
    summary: pd.DataFrame
    vocab: Vocabulary | None
    manifest: dict[str, Any]
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    rows_file: str = "prompts.csv"

    @property
    def dropped(self) -> pd.DataFrame:
        """Retrieval: `concept, reason` for every concept left out."""
        if "dropped" not in self.extra:
            raise AttributeError(f"a {self.manifest.get('probe')} run drops no concepts")
        return self.extra["dropped"]

    def save(self, out: str | Path) -> Path:
        """Write the run directory: all of its files appear together, each whole, or none."""
        out = prepare_run_dir(out)
        files = {"vocab.txt": self.vocab.text()} if self.vocab is not None else {}
        files.update({f"{name}.csv": table_text(table) for name, table in self.extra.items()})
        files[self.rows_file] = table_text(self.prompts)
        files["summary.csv"] = table_text(self.summary)
        files["manifest.json"] = json_text(self.manifest)
        write_files(out, files)
        shutil.rmtree(out / PARTIAL, ignore_errors=True)  # the checkpoint is no longer needed
        return out


RetrievalResult = ProbeResult


@dataclass(frozen=True)
class RunOptions:
    """How models are found, loaded and run; shared by every probe."""

    vocab_models: Sequence[str] = ()
    vocab_file: str | Path | None = None
    revision: str | None = None
    device: str = "auto"
    dtype: str = "float32"
    batch_size: int = 32
    compile: bool = False  # torch.compile the encoder (see scorer.compile_encoder)
    seed: int = 0
    progress: bool = True
    checkpoint: Path | None = None  # where scored chunks are kept (the CLI: RUN_DIR/.partial)
    resume: bool = False  # reuse the chunks an interrupted run left in `checkpoint`

    def __post_init__(self) -> None:
        """Check what can be checked before anything slow is loaded."""
        if self.batch_size < 1:
            raise TacitError(f"--batch-size {self.batch_size}: must be at least 1")
        resolve_dtype(self.dtype)
        resolve_device(self.device)


CHUNK_TEXTS = 2048  # distinct prompt texts per checkpointed chunk


def _score_each_model(
    models: Sequence[str],
    options: RunOptions,
    score: Callable[[MaskedLMScorer, Vocabulary, pd.DataFrame, Any], pd.DataFrame],
    prepare: Callable[[Vocabulary], pd.DataFrame],
    probe: str,
) -> tuple[pd.DataFrame, Vocabulary, dict[str, Any]]:
    """Build the shared vocabulary, then load and score each model in turn (one in memory).

    `prepare(vocab)` returns the prompt table; it runs once the vocabulary is known and before
    any model is loaded, so that bad input (no prompt left, unknown concept) fails before the
    slow part. Prompts are scored in chunks of CHUNK_TEXTS distinct texts (the same chunks in
    every run), each kept in the checkpoint so that an interrupted run can resume.
    """
    if not models:
        raise TacitError("no --model given")
    started = now()
    vocab, tokenizers = vocabulary_for(
        models,
        vocab_models=options.vocab_models,
        vocab_file=options.vocab_file,
        revision=options.revision,
    )
    prompts = prepare(vocab)
    models = list(dict.fromkeys(models))
    shrinkage = vocab.shrinkage()
    checkpoint = Checkpoint(
        options.checkpoint,
        {
            "probe": probe,
            "tacit": software()["tacit"],
            "models": models,
            "vocabulary_sha256": vocab.sha256,
            "prompts_sha256": sha256_bytes(table_text(prompts)),
            **{
                k: v
                for k, v in asdict(options).items()
                if k not in ("progress", "checkpoint", "resume")
            },
        },
        resume=options.resume,
    )
    chunk_of_row = pd.factorize(prompts["prompt"])[0] // CHUNK_TEXTS
    chunks = [prompts[chunk_of_row == c] for c in range(chunk_of_row.max() + 1)]
    n_texts = prompts["prompt"].nunique()
    tables, records, device = [], [], None
    for number, name in enumerate(models):
        scored = [checkpoint.load(f"{number}-{c}") for c in range(len(chunks))]
        record = checkpoint.load(f"{number}-model")
        if record is None or any(table is None for table in scored):
            scorer = MaskedLMScorer(
                name,
                revision=options.revision,
                device=options.device,
                dtype=options.dtype,
                batch_size=options.batch_size,
                tokenizer=tokenizers[name],
                compile=options.compile,
            )
            record = {**model_record(scorer), "device": str(scorer.device)}
            checkpoint.save(f"{number}-model", record)
            done = sum(chunks[c]["prompt"].nunique() for c, t in enumerate(scored) if t is not None)
            with tqdm(
                total=n_texts, initial=done, desc=f"scoring {name}", unit="prompt",
                disable=not options.progress,
            ) as bar:  # fmt: skip
                for c, chunk in enumerate(chunks):
                    if scored[c] is None:
                        scored[c] = score(scorer, vocab, chunk, bar)
                        checkpoint.save(f"{number}-{c}", scored[c])
            record["batch_size_used"] = scorer.batch_size  # smaller if memory ran out
            checkpoint.save(f"{number}-model", record)
            del scorer
            if number < len(models) - 1:  # free this model before the next one loads
                gc.collect()
        device = record.pop("device")
        records.append(record)
        tables.append(pd.concat(scored).sort_index())
    manifest = {
        "probe": probe,
        "command": command_line(),
        "software": software(),
        "models": records,
        "vocab_models": list(dict.fromkeys(options.vocab_models)),
        "device": device,
        "dtype": options.dtype,
        "batch_size": options.batch_size,
        "compile": options.compile,
        "seed": options.seed,
        "resumed": options.resume,
        "vocabulary": {
            "size": len(vocab),
            "sha256": vocab.sha256,
            "file": str(options.vocab_file) if options.vocab_file is not None else None,
            "coverage": vocab.coverage.to_dict("records"),
            "single_token_words": dict(vocab.found_by),
            "shrinkage": {n: {"without": a, "with": b} for n, (a, b) in shrinkage.items()},
            "warnings": vocab.warnings(shrinkage),
        },
        "started": started,
        "finished": now(),
    }
    return pd.concat(tables, ignore_index=True), vocab, manifest


def _norms_record(norms: NormSet) -> dict[str, Any]:
    return {
        "path": str(norms.path),
        "sha256": norms.sha256,
        "rows": len(norms.table),
        "concepts": len(norms.concepts),
        "merged_duplicates": norms.merged.to_dict("records"),
    }


def _as_norms(norms: NormSet | str | Path | None) -> NormSet:
    return norms if isinstance(norms, NormSet) else load_norms(norms)


def retrieval_conditions(
    selection: str, order: str, category: str, ablation: str | None
) -> list[Condition]:
    """The conditions of a run: one from --select/--order/--category, or an ablation's grid."""
    if ablation is None:
        return [Condition(selection, order, category)]
    if ablation not in ABLATIONS:
        raise TacitError(f"--ablation {ablation!r}: expected one of {', '.join(ABLATIONS)}")
    if (selection, order, category) != ("top", "decreasing", "all"):
        raise TacitError(
            f"--ablation {ablation} runs its own grid of conditions: drop --select, --order "
            "and --category"
        )
    return list(ABLATIONS[ablation])


def retrieve(
    models: Sequence[str],
    *,
    norms: NormSet | str | Path | None = None,
    max_props: int = 10,
    selection: str = "top",
    order: str = "decreasing",
    category: str = "all",
    ablation: str | None = None,
    concepts: Sequence[str] | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run the concept-retrieval probe: "A <mask> has fur, is big, and has claws."

    Args:
        models: hub names or local directories of masked LMs, scored in turn.
        norms: a NormSet or a norms file path; None uses the installed norms or $TACIT_NORMS.
        max_props: prompts grow from 1 to this many properties.
        selection, order, category: which properties, in which order (see DESIGN.md).
        ablation: `ordering` (top/bottom x decreasing/increasing plus the random baseline) or
            `category` (all, visual, functional, encyclopaedic): the paper's grids in one run;
            selection, order and category must then stay at their defaults.
        concepts: restrict to these concepts (each must be eligible).
        run_options: vocab_models, vocab_file, revision, device, dtype, batch_size, seed,
            progress (see RunOptions).

    Example:
        >>> result = tacit.retrieve(["roberta-base"], max_props=3)  # doctest: +SKIP
        >>> result.summary[["n_props", "mrr"]]  # doctest: +SKIP
    """
    options = RunOptions(**run_options)
    norm_set = _as_norms(norms)
    conditions = retrieval_conditions(selection, order, category, ablation)
    built: dict[str, Any] = {}

    def prepare(vocab: Vocabulary) -> pd.DataFrame:
        built["set"] = build_prompts(
            norm_set, vocab, conditions, max_props=max_props, concepts=concepts, seed=options.seed
        )
        if built["set"].prompts.empty:
            raise TacitError("no concept is left to probe: see `probe norms show --model ...`")
        return built["set"].prompts

    prompts, vocab, manifest = _score_each_model(
        models,
        options,
        lambda scorer, vocab, rows, bar: score_prompts(rows, scorer, vocab, progress=bar),
        prepare,
        "retrieve",
    )
    prompt_set = built["set"]
    dropped = prompt_set.dropped
    manifest = {
        **manifest,
        "options": {
            "max_props": max_props,
            "selection": selection,
            "order": order,
            "category": category,
            "ablation": ablation,
            "conditions": [asdict(c) for c in conditions],
            "concepts": list(concepts) if concepts is not None else None,
            "bootstrap": {"resamples": 1000, "confidence": 0.95, "unit": "concept"},
        },
        "norms": _norms_record(norm_set),
        "counts": {
            "concepts": int(prompt_set.prompts["concept"].nunique()),
            "prompts_per_model": len(prompt_set.prompts),
            "unique_prompt_texts": int(prompt_set.prompts["prompt"].nunique()),
            "prompt_rows": len(prompts),
            "concepts_dropped": len(dropped),
            "concepts_dropped_by_reason": dropped["reason"].value_counts().to_dict(),
            "concepts_with_fewer_properties_than_max_props": prompt_set.short,
            "duplicate_property_phrases_merged": prompt_set.duplicate_phrases,
            "prompts_naming_their_target": _naming_target(prompt_set.prompts),
        },
    }
    summary = summarize_retrieval(prompts, seed=options.seed)
    return ProbeResult(prompts, summary, vocab, manifest, {"dropped": dropped})


def _naming_target(prompts: pd.DataFrame) -> dict[str, Any]:
    """Prompts whose properties contain the target word: kept (as in the paper), but counted,
    since the answer is then in the question."""
    naming = [names_target(p, t) for p, t in zip(prompts["prompt"], prompts["target"])]
    concepts = sorted(set(prompts.loc[naming, "concept"]))
    return {"prompts": int(sum(naming)), "concepts": concepts}


def elicit(
    models: Sequence[str],
    *,
    norms: NormSet | str | Path | None = None,
    relations: Sequence[str] = RELATIONS,
    prefix: bool | str = True,
    concepts: Sequence[str] | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run the property-elicitation probe: "Everyone knows that a bear has <mask>."

    Args:
        models: hub names or local directories of masked LMs, scored in turn.
        norms: a NormSet or a norms file path; None uses the installed norms or $TACIT_NORMS.
        relations: any of `is`, `is a`, `has`, `has a`, `made of` (default all five).
        prefix: True for "Everyone knows that ...", False without it, "both" for both (the
            paper's Table 2 ablation in one run).
        concepts: restrict to these concepts.
        run_options: as for `retrieve`.
    """
    options = RunOptions(**run_options)
    unknown = [r for r in relations if r not in RELATIONS]
    if unknown or not relations:
        raise TacitError(
            f"--relation {', '.join(unknown) or '(none)'}: expected any of {', '.join(RELATIONS)}"
        )
    relations = list(dict.fromkeys(relations))
    if prefix not in (True, False, "both"):
        raise TacitError(f"prefix {prefix!r}: expected True, False or 'both'")
    prefixes = [True, False] if prefix == "both" else [bool(prefix)]
    norm_set = _as_norms(norms)
    built: dict[str, Any] = {}

    def prepare(vocab: Vocabulary) -> pd.DataFrame:
        golds = gold_answers(norm_set, vocab, relations)
        built["golds"] = golds
        built["prompts"] = build_elicitation_prompts(golds, relations, prefixes, concepts)
        if built["prompts"].empty:
            raise TacitError("no concept has a gold answer in the shared vocabulary")
        answers = golds.answers
        built["sensible"] = {
            r: np.array(
                sorted({vocab.index(w) for w in answers.loc[answers.relation == r, "word"]})
            )
            for r in relations
            if (answers.relation == r).any()
        }
        return built["prompts"]

    prompts, vocab, manifest = _score_each_model(
        models,
        options,
        lambda scorer, vocab, rows, bar: score_elicitation(
            rows, scorer, vocab, built["sensible"], progress=bar
        ),
        prepare,
        "elicit",
    )
    per_model = built["prompts"]
    counts = per_model[per_model.prefix == prefixes[0]].groupby("relation").size()
    manifest = {
        **manifest,
        "options": {
            "relations": relations,
            "prefix": prefix,
            "concepts": list(concepts) if concepts is not None else None,
        },
        "norms": _norms_record(norm_set),
        "counts": {
            "prompts_per_model": len(per_model),
            "prompts_by_relation": {r: int(counts.get(r, 0)) for r in relations},
            "paper_prompts_by_relation": {r: PAPER_PROMPTS[r] for r in relations},
            "sensible_vocabulary_by_relation": {r: len(v) for r, v in built["sensible"].items()},
            "features_excluded": built["golds"].excluded.to_dict("records"),
            "spearman_undefined": int(prompts["spearman"].isna().sum()),
        },
    }
    summary = summarize_elicitation(prompts)
    return ProbeResult(prompts, summary, vocab, manifest, {"excluded": built["golds"].excluded})


def prince(models: Sequence[str], **run_options: Any) -> ProbeResult:
    """Prince (1978)'s own examples, both directions (the paper's Figure 4); no norms needed."""
    options = RunOptions(**run_options)
    prompts, vocab, manifest = _score_each_model(
        models,
        options,
        lambda scorer, vocab, rows, bar: score_prince(rows, scorer, vocab, progress=bar),
        prince_prompts,
        "prince",
    )
    summary = prompts[["model", "direction", "rank", "target_prob", "ap_vocab"]]
    return ProbeResult(prompts, summary, vocab, manifest)
