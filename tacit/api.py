"""The Python API: run a probe end to end and get its tables as DataFrames."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.errors import TacitError
from tacit.norms.reader import NormSet
from tacit.norms.store import load_norms
from tacit.probes.retrieve import ABLATIONS, Condition, build_prompts, score_prompts
from tacit.results.manifest import command_line, model_record, now, software
from tacit.results.rundir import prepare_run_dir, write_atomic, write_json, write_table
from tacit.results.summary import summarize_retrieval
from tacit.scorer import MaskedLMScorer
from tacit.vocab.shared import Vocabulary, vocabulary_for


@dataclass
class RetrievalResult:
    """What a retrieval run produced.

    Attributes:
        prompts: one row per prompt x model (the columns of prompts.csv).
        summary: one row per model x selection x order x category x n_props (summary.csv).
        dropped: `concept, reason` for every concept left out.
        vocab: the shared vocabulary scored over.
        manifest: everything needed to rerun and to trust the numbers (manifest.json).
    """

    prompts: pd.DataFrame
    summary: pd.DataFrame
    dropped: pd.DataFrame
    vocab: Vocabulary
    manifest: dict[str, Any]

    def save(self, out: str | Path) -> Path:
        """Write the run directory; each file appears whole or not at all."""
        out = prepare_run_dir(out)
        write_atomic(out / "vocab.txt", self.vocab.text())
        write_table(out / "dropped.csv", self.dropped)
        write_table(out / "prompts.csv", self.prompts)
        write_table(out / "summary.csv", self.summary)
        write_json(out / "manifest.json", self.manifest)
        return out


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


def _as_norms(norms: NormSet | str | Path | None) -> NormSet:
    return norms if isinstance(norms, NormSet) else load_norms(norms)


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
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    revision: str | None = None,
    device: str = "auto",
    dtype: str = "float32",
    batch_size: int = 32,
    seed: int = 0,
    progress: bool = True,
) -> RetrievalResult:
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
        vocab_models: models whose tokenizers also constrain the shared vocabulary.
        vocab_file: a word list the shared vocabulary must also lie in.
        revision, device, dtype, batch_size: how models are loaded and run.
        seed: seeds random selection and order; recorded in the manifest.

    Example:
        >>> result = tacit.retrieve(["roberta-base"], max_props=3)  # doctest: +SKIP
        >>> result.summary[["n_props", "mrr"]]  # doctest: +SKIP
    """
    if not models:
        raise TacitError("no --model given")
    started = now()
    norm_set = _as_norms(norms)
    vocab, tokenizers = vocabulary_for(
        models, vocab_models=vocab_models, vocab_file=vocab_file, revision=revision
    )
    conditions = retrieval_conditions(selection, order, category, ablation)
    prompt_set = build_prompts(
        norm_set, vocab, conditions, max_props=max_props, concepts=concepts, seed=seed
    )
    if prompt_set.prompts.empty:
        raise TacitError(
            "no concept is left to probe: see the dropped concepts with `probe norms show`"
        )
    tables = []
    model_records = []
    device_used = None
    for name in dict.fromkeys(models):
        scorer = MaskedLMScorer(
            name,
            revision=revision,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            tokenizer=tokenizers[name],
        )
        device_used = str(scorer.device)
        model_records.append(model_record(scorer))
        tables.append(score_prompts(prompt_set.prompts, scorer, vocab, progress=progress))
        del scorer
        gc.collect()
    prompts = pd.concat(tables, ignore_index=True)
    summary = summarize_retrieval(prompts, seed=seed)
    dropped = prompt_set.dropped
    manifest = {
        "probe": "retrieve",
        "command": command_line(),
        "software": software(),
        "models": model_records,
        "vocab_models": list(dict.fromkeys(vocab_models)),
        "device": device_used,
        "dtype": dtype,
        "batch_size": batch_size,
        "seed": seed,
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
        "norms": {
            "path": str(norm_set.path),
            "sha256": norm_set.sha256,
            "rows": len(norm_set.table),
            "concepts": len(norm_set.concepts),
            "merged_duplicates": norm_set.merged.to_dict("records"),
        },
        "vocabulary": {
            "size": len(vocab),
            "sha256": vocab.sha256,
            "file": str(vocab_file) if vocab_file is not None else None,
            "coverage": vocab.coverage.to_dict("records"),
        },
        "counts": {
            "concepts": int(prompt_set.prompts["concept"].nunique()),
            "prompts_per_model": len(prompt_set.prompts),
            "unique_prompt_texts": int(prompt_set.prompts["prompt"].nunique()),
            "prompt_rows": len(prompts),
            "concepts_dropped": len(dropped),
            "concepts_dropped_by_reason": dropped["reason"].value_counts().to_dict(),
            "concepts_with_fewer_properties_than_max_props": prompt_set.short,
            "duplicate_property_phrases_merged": prompt_set.duplicate_phrases,
        },
        "started": started,
        "finished": now(),
    }
    return RetrievalResult(prompts, summary, dropped, vocab, manifest)
