"""The Python API: one function per probe, each a thin call of `run_probe`, which runs any
registered probe (tacit.probes.registry) the same way:

check its options (as the probe declares them) and the run options -> the probe's plan, before
any model loads -> the engine scores the plan's work with each model in turn -> the probe's
summary, report and figures -> a ProbeResult (what the command line prints and saves).

A model is a hub name or a local directory, with its own loading options if any
(`"EleutherAI/pythia-160m,revision=step1000"`, or a tacit.ModelSpec: tacit.core.modelspec), or a
Scorer already in memory (`tacit.MaskedLMScorer.from_model(model, tokenizer)`, a model being
trained).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.core.interface import option
from tacit.core.modelspec import ModelSpec, model_text
from tacit.core.options import RunOptions

if TYPE_CHECKING:
    from tacit.core.choices import Normalize, NormsFormat, Pooling, Relation, SpanScoring, Suite
    from tacit.models.base import Scorer
    from tacit.norms import NormSet
    from tacit.probes.nli.options import NLIMode
    from tacit.probes.nli.predict import ClozeSetup
    from tacit.probes.pragmeval.options import PragmevalMode
    from tacit.probes.retrieve.options import Ablation, Category, Order, Selection
    from tacit.probes.templates import TemplateSet
    from tacit.results.result import ProbeResult

Models = Sequence["str | ModelSpec | Mapping[str, Any] | Scorer"]
RUN_GROUPS = {  # the run options a probe may do without, by group (Probe.run_options)
    "vocab": ("vocab_models", "vocab_file", "vocab_words"),
    "seed": ("seed",),
    "resume": ("resume",),
}
REASONS = {
    "vocab": "it scores no shared vocabulary",
    "seed": "it draws nothing at random",
    "resume": "a rerun of the same command reuses what it computed",
}


def run_probe(
    name: str,
    models: Models,
    given: Mapping[str, Any],
    options: RunOptions | None = None,
    run_options: Mapping[str, Any] | None = None,
    *,
    context: str = "api",
) -> ProbeResult:
    """Run the probe `name` with its options `given` (checked as it declares them; errors name
    them as `context` writes them: `api` keywords, `cli` flags) on `models`."""
    from tacit.core.manifest import now
    from tacit.engine.runner import run_manifest, run_models
    from tacit.probes import registry
    from tacit.results.result import ProbeResult

    probe = registry.get(name)
    run = RunOptions.build(options, run_options or {})
    values = probe.validate(given, context=context)
    _check_run_options(probe.name, probe.run_options, run)
    if run.limit is not None and probe.limit is None:
        raise TacitError(
            f"{name}: {option('--limit')} is not available: it has no list of "
            "concepts or items to take the first few of"
        )
    models = _model_texts(models)
    if probe.models_required and not models:
        raise TacitError(f"no {option('--model')} given")
    _check_device(run, [m for m in models if isinstance(m, str)])
    started = now()
    plan = probe.plan(list(models), values, run)
    if plan.work is not None:
        rows, records = run_models(
            models, run, plan.work, probe=name, plan=plan.resume_key, tokenizers=plan.tokenizers
        )
    else:
        assert plan.given is not None, "a plan without work gives its rows"
        rows, records = plan.given
    limit = {"limit": {"first": run.limit, "of": probe.limit}} if run.limit is not None else {}
    manifest = run_manifest(name, run, records, started, **plan.manifest, **limit)
    outcome = probe.finish(plan, rows, manifest, run)
    manifest.update(outcome.manifest)  # type: ignore[typeddict-item]
    text = outcome.text
    if run.limit is not None:  # said first, so that no one takes it for a full run
        text = (
            f"limited to the first {run.limit} {probe.limit} ({option('--limit')} "
            f"{run.limit}): a first look, not comparable with a full run\n{text}"
        )
    return ProbeResult(
        outcome.rows,
        outcome.summary,
        outcome.vocab,
        manifest,
        outcome.extra,
        rows_file=probe.rows_file,
        text=text,
        notes=outcome.notes,
        figures=outcome.figures,
        files=outcome.files,
    )


def _model_texts(models: Models) -> list[str | Scorer]:
    """Every model as the runner takes it: its text (a ModelSpec or a mapping written out), or
    a Scorer already in memory."""
    return [model_text(m) if isinstance(m, str | ModelSpec | Mapping) else m for m in models]


def _check_run_options(probe: str, takes: frozenset[str], run: RunOptions) -> None:
    """Refuse shared run options a probe cannot honour, each with the reason."""
    for group, fields in RUN_GROUPS.items():
        if group not in takes:
            run.refuse(probe, **{f: REASONS[group] for f in fields})


def _check_device(run: RunOptions, models: Sequence[str]) -> None:
    """Is the device asked for on this machine, and does every model's text read (its loading
    options known, 8- or 4-bit weights only on a GPU)? Before anything slow."""
    specs = [run.model_spec(model) for model in models]
    if run.device not in ("auto", "cpu") or any(s.quantization for s in specs):
        from tacit.models.loading import check_quantization
        from tacit.models.runtime import resolve_device

        device = resolve_device(run.device)
        for spec in specs:
            check_quantization(spec, device)


def _given(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A probe function's own keyword arguments (not its models or run options)."""
    return {k: v for k, v in arguments.items() if k not in ("models", "options", "run_options")}


def retrieve(
    models: Models,
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
    candidates: str | Path = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    articles: str | Path | Mapping[str, str] | None = None,
    templates: str | Path | TemplateSet = "paper",
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run the concept-retrieval probe: "A <mask> has fur, is big, and has claws."

    Args:
        models: hub names or local directories of masked LMs (causal LMs too, with candidate
            spans), or Scorers already in memory, scored in turn.
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
        articles: a concept,article CSV (or a mapping) overriding tacit.lexicon's articles
            (with templates in another language: every concept's article, any one word).
        templates: the templates' file (JSON lines), a shipped set (`paper`, the paper's
            prompts; `paraphrases`) or a TemplateSet; several retrieval templates are
            paraphrases: each is scored, with their ensemble and consistency
            (docs/probes/templates.md).
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object.
        **run_options: the same, as RunOptions' fields by keyword (`device="cuda"`,
            `batch_size=64`, ...).

    Examples:
        >>> result = tacit.retrieve(["roberta-base"], max_props=3)  # doctest: +SKIP
        >>> result.summary[["n_props", "mrr"]]  # doctest: +SKIP
    """
    return run_probe("retrieve", models, _given(locals()), options, run_options)


def elicit(
    models: Models,
    *,
    norms: NormSet | str | Path | None = None,
    relations: Sequence[Relation | str] | None = None,
    prefix: bool | str = True,
    concepts: Sequence[str] | None = None,
    norms_format: NormsFormat | None = None,
    norms_columns: Mapping[str, str] | str | None = None,
    candidates: str | Path = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    templates: str | Path | TemplateSet = "paper",
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run the property-elicitation probe: "Everyone knows that a bear has <mask>."

    Args:
        models: hub names or local directories of masked or causal LMs, or Scorers already
            in memory, scored in turn.
        norms: a NormSet, a norms file or an installed norm set's name, as for `retrieve`.
        relations: relations of the templates: the paper's `is`, `is a`, `has`, `has a`,
            `made of` (None: every relation of the templates).
        prefix: True for "Everyone knows that ..." (a template's optional prefix), False
            without it, "both" for both (the paper's Table 2 ablation in one run).
        concepts: restrict to these concepts.
        norms_format: as for `retrieve`.
        norms_columns: as for `retrieve`.
        candidates: `vocab` (the paper's: one-word answers among the shared vocabulary),
            `answers` (every answer to the relation, of any length, "four legs") or a file of
            spans, one a line.
        span_scoring: as for `retrieve`.
        normalize: as for `retrieve` (`pmi` against the prompt with "it" for the concept).
        templates: as for `retrieve`: each relation's templates (LAMA's relation files load
            as they are).
        options: as for `retrieve`.
        **run_options: as for `retrieve`.
    """
    return run_probe("elicit", models, _given(locals()), options, run_options)


def prince(
    models: Models,
    *,
    templates: str | Path | TemplateSet = "paper",
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Prince (1978)'s own examples, both directions (the paper's Figure 4); no norms needed.

    Args:
        models: as for `retrieve`.
        templates: as for `retrieve`: the retrieval templates ask for "person" from Prince's
            properties, the `has` templates for a country's properties.
        options: as for `retrieve`.
        **run_options: as for `retrieve`.
    """
    return run_probe("prince", models, _given(locals()), options, run_options)


def nli(
    suite: Suite,
    data: str | Path,
    models: Models = (),
    *,
    predictions: str | Path | None = None,
    mode: NLIMode = "auto",
    template: str | None = None,
    verbalizer: str | None = None,
    calibrate: bool = False,
    cloze: ClozeSetup | None = None,
    label_names: Sequence[str] | None = None,
    max_items: int | None = None,
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Run a pragmatics suite (imppres, nope, impli) on models or on released predictions.

    Each model is asked in cloze mode (a masked LM: template + verbalizer; a causal LM puts
    each word in the blank) or classifier mode (a sequence classifier trained on NLI);
    `mode="auto"` tells them apart by the checkpoint's architecture. With `predictions`, a
    file or a folder of seed folders is read instead. Items are reported in the suite paper's
    breakdowns, per model, averaged over seeds.

    Args:
        suite: `imppres`, `nope` or `impli`.
        data: the suite's files as published: its folder, a part of it, or one file.
        models: masked or causal LMs, or NLI classifiers (names, directories or Scorers).
        predictions: released predictions instead of models: a .jsonl file, a folder of
            them, or a folder of seed folders.
        mode: `auto`, `cloze` or `classifier`.
        template: cloze mode: where `{premise}`, `{hypothesis}` and `<mask>` go (None: the
            default, `{premise}? <mask>, {hypothesis}`).
        verbalizer: cloze mode: one word per label (None: Yes / Maybe / No).
        calibrate: cloze mode: divide by the label distribution of content-free inputs.
        cloze: template, verbalizer and calibrate in one ClozeSetup (instead of the three).
        label_names: classifier mode: what its outputs mean, in order, when its config's
            id2label does not say.
        max_items: score a seeded random sample of this many items.
        options: as for `retrieve`.
        **run_options: as for `retrieve`.
    """
    return run_probe("nli", models, _given(locals()), options, run_options)


def pragmeval(
    data: str | Path,
    models: Models,
    *,
    tasks: Sequence[str] | None = None,
    mode: PragmevalMode = "linear",
    pooling: Pooling = "mask",
    template: str | None = None,
    verbalizer: str | None = None,
    max_train: int | None = None,
    cache_dir: str | Path | None = None,
    reference: str | Path | None = None,
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """PragmEval on frozen models: a linear probe per configuration, or zero-shot cloze.

    Args:
        data: the PragmEval folder: `<Task>/{train,dev,test}.tsv`.
        models: masked or causal LMs (names, directories or Scorers).
        tasks: tasks (Persuasiveness: all its configurations) or configurations
            (EmoBank-Valence); None: all.
        mode: `linear` (a logistic regression on frozen features, C chosen on dev) or `cloze`
            (zero-shot, for configurations with 2 or 3 labels).
        pooling: linear mode: the hidden state at `<mask>` (masked LMs), at the last token
            (causal LMs), or the mean over the text's tokens.
        template: linear mode: the features template (default `{sentence1} <mask>
            {sentence2}` or `{sentence} <mask>`); cloze mode: the template instead of each
            configuration's default.
        verbalizer: cloze mode: label=word,... instead of each configuration's default.
        max_train: linear mode: a seeded sample of this many training rows.
        cache_dir: where features are cached (default $TACIT_CACHE_DIR, else ~/.cache/tacit).
        reference: a CSV `task,bert,human` (percent) shown beside ours.
        options: as for `retrieve`.
        **run_options: as for `retrieve`.
    """
    return run_probe("pragmeval", models, _given(locals()), options, run_options)


def items(
    items: str | Path,
    models: Models,
    *,
    k: int = 5,
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    options: RunOptions | None = None,
    **run_options: Any,
) -> ProbeResult:
    """Your own cloze items: every candidate scored as a span in the item's blank, each item's
    answers ranked among its candidates; accuracy (P@1), MRR and P@k per group and overall.

    Args:
        items: a JSON lines or CSV file, one item a line: `text` with one blank `[Y]`,
            `candidates`, `answer` (one or a list), optional `group` and `id`
            (docs/probes/items.md).
        models: masked or causal LMs (names, directories or Scorers).
        k: report P@k, the share of items with an answer among the k best candidates.
        span_scoring: as for `retrieve`.
        normalize: `sum`, `mean` (per token) or `pmi` (against the span alone, "<span>.").
        options: as for `retrieve`.
        **run_options: as for `retrieve`.

    Examples:
        >>> result = tacit.items("comps.jsonl", ["gpt2"])  # doctest: +SKIP
        >>> result.summary[["group", "accuracy", "mrr"]]  # doctest: +SKIP
    """
    return run_probe("items", models, _given(locals()), options, run_options)
