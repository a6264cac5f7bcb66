# Written by `python -m tacit.api_stub` from the probes' declarations: do not edit.
# tacit.api makes these functions at import (tacit.probe_api.probe_function).

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from tacit.ask.options import By
from tacit.core.choices import (
    Control,
    LimitBy,
    LoadDtype,
    Normalize,
    PllMetric,
    Pooling,
    SpanScoring,
    Suite,
    VocabWords,
)
from tacit.core.options import RunOptions
from tacit.norms.normset import NormSet
from tacit.probe_api import MODELS_HELP as MODELS_HELP
from tacit.probe_api import Models as Models
from tacit.probe_api import probe_function as probe_function
from tacit.probe_api import run_probe as run_probe
from tacit.probes.nli.options import ClozeSetup, NLIMode
from tacit.probes.pragmeval.options import PragmevalMode
from tacit.probes.retrieve.options import Ablation, Category, Order, Selection
from tacit.probes.surprisal.options import Unit
from tacit.results.result import ProbeResult
from tacit.templates.template import TemplateSet

__all__ = [
    "MODELS_HELP",
    "Models",
    "probe_function",
    "run_probe",
    "retrieve",
    "elicit",
    "prince",
    "nli",
    "pragmeval",
    "items",
    "surprisal",
]

def retrieve(
    models: Models,
    *,
    max_props: int = 10,
    selection: Selection | None = None,
    order: Order | None = None,
    category: Category | None = None,
    ablation: Ablation | None = None,
    norms: NormSet | str | Path | None = None,
    norms_format: str | None = None,
    norms_columns: Mapping[str, str] | str | None = None,
    concepts: Sequence[str] | None = None,
    candidates: str | Path = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    token_scores: bool = False,
    articles: str | Path | Mapping[str, str] | None = None,
    templates: str | Path | TemplateSet = "paper",
    shots: int = 0,
    suffix_top: int = 0,
    by: By = "scoring",
    guesses: int = 5,
    samples: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 64,
    options: RunOptions | None = None,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    vocab_words: VocabWords = "all",
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    limit: int | None = None,
    limit_by: LimitBy = "random",
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    resume: bool = False,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Name the concept from its properties: `A <mask> has fur, is big, and has claws.`

    For every concept that is one whole-word token in every model, prompts grow from 1
    to --max-props of its properties (highest production frequency first); each model ranks the
    concept among the shared vocabulary at `<mask>` (or, with --candidates, among spans of any
    length). Writes manifest.json, vocab.txt (or candidates.txt), prompts.csv, summary.csv and
    dropped.csv to the run directory and prints MRR and mean target probability by number of
    properties.

    Args:
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        max_props: Grow prompts from 1 to this many properties.
        selection: Which properties, by pf. One of: top, bottom, random. Not given: top.
        order: Their order by pf. One of: decreasing, increasing, random. Not given: decreasing.
        category: The feature types used. One of: all, visual, functional, encyclopaedic. Not given:
            all.
        ablation: Run a whole grid: `ordering` (top/bottom x decreasing/increasing plus the random
            baseline, 5 random orders of 5 random property sets per concept) or `category` (all,
            visual, functional, encyclopaedic). One of: ordering, category.
        norms: Norms: a file (CSLB norms.dat, McRae's .xlsx or a CSV/TSV export, or your own CSV/TSV
            table), a Hub dataset's file (hf://datasets/OWNER/NAME[@REVISION]/PATH) or the name of
            installed norms. Default: $TACIT_NORMS (a file or a name), else the installed default
            (`probe norms install`).
        norms_format: Say the norms file's format when tacit cannot tell it from the file: cslb,
            mcrae, generic, or one registered by name.
        norms_columns: A generic table's column names, e.g. `concept=Word,feature=Property,pf=Count`
            (feature_type optional).
        concepts: Only these concepts: a comma-separated list, or @FILE with one a line.
        candidates: What the concept is ranked among: `vocab` (the paper's: one-token concepts among
            the shared vocabulary), `concepts` (every concept of the norms as a span with its
            article, 'A bear', 'An aardvark', 'Scissors') or a FILE of spans, one a line.
        span_scoring: How a candidate span of several tokens is scored by a masked LM: `l2r`, the
            exact chain rule left to right (one mask per token still to come), or `independent` (all
            masked at once, mLAMA's). One of: l2r, independent.
        normalize: What candidate spans are ranked by: their log-probability (`sum`), per token
            (`mean`), or against the prompt without its properties (`pmi`). One of: sum, mean, pmi.
        token_scores: Keep the per-token log-probabilities of the candidates each row lists (an
            item's every candidate; a prompt's target or gold answers and its top 5) in tokens.csv:
            one row per token, in nats and bits, as `probe surprisal` writes them. Scored in the
            same pass.
        articles: A concept,article CSV overriding the article tacit gives a concept's span (with
            templates in another language: the article of each concept, any one word).
        templates: The prompts' templates: a JSON lines file (one template a line, several per
            relation for paraphrases; LAMA's relation files load as they are) or a shipped set:
            `paper` (the paper's prompts) or `paraphrases`; a Hub dataset's file is
            hf://datasets/OWNER/NAME[@REVISION]/PATH. See docs/probes/templates.md.
        shots: Few-shot demonstrations: before each prompt, this many prompts of the same kind about
            other concepts (never the concept or one of its category), filled with their answers,
            drawn with --seed; by scoring as text before the prompt, by generation as questions
            answered (docs/probes/causal.md).
        suffix_top: A causal LM's vocabulary mode on a CPU: score the text after the blank only for
            the golds and the K words most likely before it, not for every word a gold's rank could
            meet. A rank (or top 5) that a word left unscored could change is an upper bound (the
            best of those scored), counted (ranks_bounded) and flagged approximate. 0: exact
            (docs/probes/causal.md).
        by: How each model is probed: `scoring` reads its probabilities of the candidates at the
            blank (the paper's); `generation` asks it the same prompt in words and reads what it
            answers (docs/probes/generation.md). One of: scoring, generation.
        guesses: With --by generation: how many answers each prompt asks for, most likely first.
        samples: With --by generation: completions per prompt (retrieval: above 1, one guess each,
            ranked by how many gave it; elicitation: N participants, each listing up to --guesses
            answers). Above 1 needs --temperature above 0.
        temperature: With --by generation: sampling temperature; 0, the default, is greedy
            (reproducible).
        max_tokens: With --by generation: the longest completion, in tokens; one cut there is
            counted as truncated and its last answer left out.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        vocab_models: Model whose tokenizer also constrains the shared vocabulary (only its
            tokenizer is loaded), so that separate runs stay comparable. Repeatable.
        vocab_file: Word list (one a line) the shared vocabulary must lie in.
        vocab_words: Which single-token words the shared vocabulary keeps: all (the paper's), alpha
            (letters only: no punctuation, digits or symbols) or lower (lower-case letters only:
            also no names or capitalised word pieces). One of: all, alpha, lower.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        limit: Only N concepts (or items, configurations), as --limit-by picks them: a quick first
            look, said in the summary and recorded, what it leaves out counted.
        limit_by: How --limit picks its N: a sample drawn with --seed (random), or the first N
            (first; CSLB's first concepts are all 'an ...'). One of: random, first.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        seed: Seeds every random choice of the run (selections, orders, --limit's sample).
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        resume: Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command
            line: --out DIR), score the rest (the same command otherwise; the results equal those of
            an uninterrupted run).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def elicit(
    models: Models,
    *,
    relations: Sequence[str] | None = None,
    prefix: bool | str = True,
    norms: NormSet | str | Path | None = None,
    norms_format: str | None = None,
    norms_columns: Mapping[str, str] | str | None = None,
    concepts: Sequence[str] | None = None,
    candidates: str | Path = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    token_scores: bool = False,
    templates: str | Path | TemplateSet = "paper",
    shots: int = 0,
    suffix_top: int = 0,
    by: By = "scoring",
    guesses: int = 5,
    samples: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 64,
    questions: str | Path = "tacit",
    judge: str | None = None,
    judge_features: int = 5,
    options: RunOptions | None = None,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    vocab_words: VocabWords = "all",
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    limit: int | None = None,
    limit_by: LimitBy = "random",
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    resume: bool = False,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Ask for a concept's properties: `Everyone knows that a bear has <mask>.`

    Each concept with at least one one-word answer for a relation (`has fur_hair`
    answers `has` with fur and hair) gets a prompt; the model's distribution at `<mask>` is
    scored against those answers: average precision over the shared vocabulary (ap_vocab) and
    over every answer of that relation (ap_sens), and Spearman's rho between the answers'
    production frequencies and the model's probabilities. Prints the paper's Table 1 layout.

    Args:
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        relations: Relation to ask about: one of the templates' (the paper's: is, is a, has, has a,
            made of). Repeatable. With --by generation, `all` is a free listing of every property
            (the norming task), scored per relation and overall. Not given: every relation of the
            templates.
        prefix: 'Everyone knows that' before each prompt (a template's optional prefix, `{...}`):
            True, False, or `both` (the paper's Table 2 ablation in one run).
        norms: Norms: a file (CSLB norms.dat, McRae's .xlsx or a CSV/TSV export, or your own CSV/TSV
            table), a Hub dataset's file (hf://datasets/OWNER/NAME[@REVISION]/PATH) or the name of
            installed norms. Default: $TACIT_NORMS (a file or a name), else the installed default
            (`probe norms install`).
        norms_format: Say the norms file's format when tacit cannot tell it from the file: cslb,
            mcrae, generic, or one registered by name.
        norms_columns: A generic table's column names, e.g. `concept=Word,feature=Property,pf=Count`
            (feature_type optional).
        concepts: Only these concepts: a comma-separated list, or @FILE with one a line.
        candidates: What answers are ranked among: `vocab` (the paper's: one-word answers among the
            shared vocabulary), `answers` (every answer people gave to the relation, of any length:
            'fur', 'four legs') or a FILE of spans, one a line.
        span_scoring: How a candidate span of several tokens is scored by a masked LM: `l2r`, the
            exact chain rule left to right (one mask per token still to come), or `independent` (all
            masked at once, mLAMA's). One of: l2r, independent.
        normalize: What candidate spans are ranked by: their log-probability (`sum`), per token
            (`mean`), or against the prompt without its properties (`pmi`). One of: sum, mean, pmi.
        token_scores: Keep the per-token log-probabilities of the candidates each row lists (an
            item's every candidate; a prompt's target or gold answers and its top 5) in tokens.csv:
            one row per token, in nats and bits, as `probe surprisal` writes them. Scored in the
            same pass.
        templates: The prompts' templates: a JSON lines file (one template a line, several per
            relation for paraphrases; LAMA's relation files load as they are) or a shipped set:
            `paper` (the paper's prompts) or `paraphrases`; a Hub dataset's file is
            hf://datasets/OWNER/NAME[@REVISION]/PATH. See docs/probes/templates.md.
        shots: Few-shot demonstrations: before each prompt, this many prompts of the same kind about
            other concepts (never the concept or one of its category), filled with their answers,
            drawn with --seed; by scoring as text before the prompt, by generation as questions
            answered (docs/probes/causal.md).
        suffix_top: A causal LM's vocabulary mode on a CPU: score the text after the blank only for
            the golds and the K words most likely before it, not for every word a gold's rank could
            meet. A rank (or top 5) that a word left unscored could change is an upper bound (the
            best of those scored), counted (ranks_bounded) and flagged approximate. 0: exact
            (docs/probes/causal.md).
        by: How each model is probed: `scoring` reads its probabilities of the candidates at the
            blank (the paper's); `generation` asks it the same prompt in words and reads what it
            answers (docs/probes/generation.md). One of: scoring, generation.
        guesses: With --by generation: how many answers each prompt asks for, most likely first.
        samples: With --by generation: completions per prompt (retrieval: above 1, one guess each,
            ranked by how many gave it; elicitation: N participants, each listing up to --guesses
            answers). Above 1 needs --temperature above 0.
        temperature: With --by generation: sampling temperature; 0, the default, is greedy
            (reproducible).
        max_tokens: With --by generation: the longest completion, in tokens; one cut there is
            counted as truncated and its last answer left out.
        questions: With --by generation: the questions' wording, a JSON lines file (one question a
            line: other wordings, other languages) or a shipped set: `tacit` or `hansen-hebart` (the
            free listing as 'What are the properties of a bear?'). See docs/probes/generation.md.
        judge: With --by generation (elicitation): a MODEL (any that generates, as --model names
            one) asked whether each answer means each of up to --judge-features of its concept's
            features, beside the lexical matcher (the default, still the one scored): its verdicts
            go to judged.csv, its requests to the cost, and how often the two agree to the manifest
            (docs/probes/generation.md).
        judge_features: With --judge: the features each answer is asked against, at most (the ones
            the lexical matcher matched first, then the others in the norms' order): requests per
            answer.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        vocab_models: Model whose tokenizer also constrains the shared vocabulary (only its
            tokenizer is loaded), so that separate runs stay comparable. Repeatable.
        vocab_file: Word list (one a line) the shared vocabulary must lie in.
        vocab_words: Which single-token words the shared vocabulary keeps: all (the paper's), alpha
            (letters only: no punctuation, digits or symbols) or lower (lower-case letters only:
            also no names or capitalised word pieces). One of: all, alpha, lower.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        limit: Only N concepts (or items, configurations), as --limit-by picks them: a quick first
            look, said in the summary and recorded, what it leaves out counted.
        limit_by: How --limit picks its N: a sample drawn with --seed (random), or the first N
            (first; CSLB's first concepts are all 'an ...'). One of: random, first.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        seed: Seeds every random choice of the run (selections, orders, --limit's sample).
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        resume: Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command
            line: --out DIR), score the rest (the same command otherwise; the results equal those of
            an uninterrupted run).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def prince(
    models: Models,
    *,
    templates: str | Path | TemplateSet = "paper",
    options: RunOptions | None = None,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    vocab_words: VocabWords = "all",
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    checkpoint: Path | None = None,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Prince (1978)'s own examples, both directions (the paper's Figure 4).

    No norms needed. Concept direction: is `person` named by `A <mask> has parents,
    siblings, relatives, a home, a pet, a car, a spouse, and a job.`? Property direction: how
    well does `Everyone knows that a country has <mask>.` recover her list (leader, duke,
    borders, president, queen, citizens, land, language, history)?

    Args:
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        templates: The prompts' templates: a JSON lines file (one template a line, several per
            relation for paraphrases; LAMA's relation files load as they are) or a shipped set:
            `paper` (the paper's prompts) or `paraphrases`; a Hub dataset's file is
            hf://datasets/OWNER/NAME[@REVISION]/PATH. See docs/probes/templates.md.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        vocab_models: Model whose tokenizer also constrains the shared vocabulary (only its
            tokenizer is loaded), so that separate runs stay comparable. Repeatable.
        vocab_file: Word list (one a line) the shared vocabulary must lie in.
        vocab_words: Which single-token words the shared vocabulary keeps: all (the paper's), alpha
            (letters only: no punctuation, digits or symbols) or lower (lower-case letters only:
            also no names or capitalised word pieces). One of: all, alpha, lower.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def nli(
    suite: Suite | None,
    data: str | Path | None,
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
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    limit: int | None = None,
    limit_by: LimitBy = "random",
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    resume: bool = False,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Pragmatic inference suites (IMPPRES, NOPE, IMPLI) as NLI: `--suite nope --data DIR`.

    Cloze mode asks a masked LM `{premise}? <mask>, {hypothesis}` and reads Yes / Maybe
    / No at the mask (a causal LM scores the sentence with each word in place); classifier mode
    runs an NLI classifier; `--predictions` reads released prediction files. Writes items.csv
    (one row per item x model x seed), summary.csv (each paper's breakdowns, mean and sd over
    seeds), summary_by_seed.csv and manifest.json, and prints the summary (beside the paper's
    numbers for NOPE predictions).

    Args:
        suite: Which suite. One of: imppres, nope, impli.
        data: The suite's files as published: its folder, a part of it, or one file.
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        predictions: Released predictions instead of a model: a .jsonl file (uid + logits in E, N, C
            order, or predicted_label), a folder of them, or a folder of seed folders (averaged,
            with their spread).
        mode: auto (from the checkpoint's architecture), cloze or classifier. One of: auto, cloze,
            classifier.
        template: Cloze mode: where premise, hypothesis and `<mask>` go. Not given: {premise}?
            <mask>, {hypothesis}.
        verbalizer: Cloze mode: one single-token word per label. Not given:
            entailment=Yes,neutral=Maybe,contradiction=No.
        calibrate: Cloze mode: divide by the label distribution of content-free inputs (Zhao et al.
            2021).
        cloze: Template, verbalizer and calibrate in one ClozeSetup (the API's, instead of the
            three).
        label_names: Classifier mode: what its outputs mean, in order (e.g.
            contradiction,neutral,entailment), when its config's id2label does not say.
        max_items: Score a seeded random sample of this many items.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        limit: Only N concepts (or items, configurations), as --limit-by picks them: a quick first
            look, said in the summary and recorded, what it leaves out counted.
        limit_by: How --limit picks its N: a sample drawn with --seed (random), or the first N
            (first; CSLB's first concepts are all 'an ...'). One of: random, first.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        seed: Seeds every random choice of the run (selections, orders, --limit's sample).
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        resume: Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command
            line: --out DIR), score the rest (the same command otherwise; the results equal those of
            an uninterrupted run).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def pragmeval(
    data: str | Path | None,
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
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    limit: int | None = None,
    limit_by: LimitBy = "random",
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """PragmEval's 11 pragmatics tasks on a frozen model: linear probes or zero-shot cloze.

    Linear mode encodes every text once (cached per model and configuration), fits a
    logistic regression with its regularisation chosen on dev, and reports test accuracy
    (macro-F1 for SwitchBoard and MRDA), configurations averaged into tasks as the paper does.
    This is a probe of a frozen model, not the paper's fine-tuning. Writes configs.csv,
    summary.csv, predictions.csv, manifest.json and pragmeval.png.

    Args:
        data: The PragmEval folder: `<Task>/{train,dev,test}.tsv`.
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        tasks: A task (Persuasiveness: all its configurations) or one configuration
            (EmoBank-Valence). Repeatable; default all.
        mode: linear (probe frozen features) or cloze (zero-shot). One of: linear, cloze.
        pooling: Linear mode: the hidden state at `<mask>` (masked LMs), at the last token (causal
            LMs), or the mean. One of: mask, mean, last.
        template: Linear: the features template (default `{sentence1} <mask> {sentence2}` or
            `{sentence} <mask>`). Cloze: the template, instead of each task's default.
        verbalizer: Cloze: label=word,... instead of each task's default.
        max_train: Linear: use a seeded sample of this many train rows.
        cache_dir: Where features are cached (default $TACIT_CACHE_DIR, else ~/.cache/tacit).
        reference: CSV `task,bert,human` (percent) printed beside ours, e.g. the paper's table.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        limit: Only N concepts (or items, configurations), as --limit-by picks them: a quick first
            look, said in the summary and recorded, what it leaves out counted.
        limit_by: How --limit picks its N: a sample drawn with --seed (random), or the first N
            (first; CSLB's first concepts are all 'an ...'). One of: random, first.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        seed: Seeds every random choice of the run (selections, orders, --limit's sample).
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def items(
    items: str | Path | None,
    models: Models,
    *,
    k: int = 5,
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    token_scores: bool = False,
    by: By = "scoring",
    samples: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 64,
    questions: str | Path = "tacit",
    options: RunOptions | None = None,
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    resume: bool = False,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Your own cloze items: `probe items ITEMS`, each candidate scored in the blank.

    ITEMS, a file, holds one item a line, JSON lines or CSV: a `text` with one blank
    `[Y]`, its `candidates` (spans of any length), the `answer` or answers, an optional `group`
    and `id`.
    Every candidate is scored as a span in the blank (masked or causal models; --span-scoring,
    --normalize as for --candidates) and each item's answers are ranked among its candidates.
    Writes prompts.csv (every candidate's score and rank), summary.csv (accuracy, MRR and P@k per
    group and overall, with bootstrap intervals over items) and manifest.json; with
    --token-scores, tokens.csv (every candidate's tokens and their log-probabilities).
    With --by generation, each item is asked as a multiple-choice question instead: its
    candidates lettered A., B., ... in an order shuffled per item from --seed (prompts.csv's
    `options` and `answer_letter`), the letter or the option's text read from the answer;
    summary.csv holds accuracy with its chance level and the unreadable answers (no option,
    or two: wrong, counted), letters.csv the letters answered against the right ones, and
    answers.csv and messages.jsonl what was asked and said (docs/probes/items.md).

    Args:
        items: The items file: JSON lines or CSV, one cloze item a line (text with one [Y], its
            candidates, the answer or answers, optional group and id); a Hub dataset's file is
            hf://datasets/OWNER/NAME[@REVISION]/PATH.
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        k: Report P@k: the share of items with an answer among the k best candidates.
        span_scoring: How a candidate span of several tokens is scored by a masked LM: `l2r`, the
            exact chain rule left to right (one mask per token still to come), or `independent` (all
            masked at once, mLAMA's). One of: l2r, independent.
        normalize: What candidate spans are ranked by: their log-probability (`sum`), per token
            (`mean`), or against the prompt without its properties (`pmi`). One of: sum, mean, pmi.
        token_scores: Keep the per-token log-probabilities of the candidates each row lists (an
            item's every candidate; a prompt's target or gold answers and its top 5) in tokens.csv:
            one row per token, in nats and bits, as `probe surprisal` writes them. Scored in the
            same pass.
        by: How each model is probed: `scoring` reads its probabilities of the candidates at the
            blank (the paper's); `generation` asks it the same prompt in words and reads what it
            answers (docs/probes/generation.md). One of: scoring, generation.
        samples: With --by generation: completions per prompt (retrieval: above 1, one guess each,
            ranked by how many gave it; elicitation: N participants, each listing up to --guesses
            answers). Above 1 needs --temperature above 0.
        temperature: With --by generation: sampling temperature; 0, the default, is greedy
            (reproducible).
        max_tokens: With --by generation: the longest completion, in tokens; one cut there is
            counted as truncated and its last answer left out.
        questions: With --by generation: the questions' wording, a JSON lines file (one question a
            line: other wordings, other languages) or a shipped set: `tacit` or `hansen-hebart` (the
            free listing as 'What are the properties of a bear?'). See docs/probes/generation.md.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        seed: Seeds every random choice of the run (selections, orders, --limit's sample).
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        resume: Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command
            line: --out DIR), score the rest (the same command otherwise; the results equal those of
            an uninterrupted run).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def surprisal(
    texts: str | Path | Sequence[str] | None,
    models: Models,
    *,
    by: Unit = "token",
    pll: PllMetric = "original",
    options: RunOptions | None = None,
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    checkpoint: Path | None = None,
    resume: bool = False,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Every token's (or word's) log-probability and surprisal in your texts.

    TEXTS, a file, holds one text a line (or CSV / JSON lines with a `text` column
    and an optional `id`).
    Causal models score each token given the start token and the tokens before it; masked
    models give each token's pseudo-log-likelihood (--pll original: the token masked alone;
    within_word_l2r: with the later tokens of its word masked too), as minicons does.
    --by word sums the tokens of each whitespace-separated word.
    Writes surprisal.csv (one row per model, text and token or word: log-probability,
    surprisal in nats and bits), summary.csv (per text and over every text: tokens, total
    log-probability, mean surprisal in bits per token, perplexity) and manifest.json.

    Args:
        texts: The texts: a text file (one text a line), a CSV or JSON lines file with a `text`
            column (and an optional `id`), or in Python a list of texts.
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        by: One row per token, or per word: whitespace-separated, its tokens' log-probabilities
            summed (minicons' word_score_tokenized with str.split). One of: token, word.
        pll: Masked models' pseudo-log-likelihood, as minicons names it: original (each token masked
            alone) or within_word_l2r (with the later tokens of its word masked too). One of:
            original, within_word_l2r.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        resume: Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command
            line: --out DIR), score the rest (the same command otherwise; the results equal those of
            an uninterrupted run).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """

def structure(
    models: Models = (),
    *,
    norms: NormSet | str | Path | None = None,
    against: NormSet | str | Path | None = None,
    norms_format: str | None = None,
    norms_columns: Mapping[str, str] | str | None = None,
    concepts: Sequence[str] | None = None,
    categories: str | Path | None = None,
    participants: int | None = None,
    relations: Sequence[str] | None = None,
    candidates: str | Path = "vocab",
    span_scoring: SpanScoring = "l2r",
    normalize: Normalize = "sum",
    token_scores: bool = False,
    templates: str | Path | TemplateSet = "paper",
    suffix_top: int = 1,
    by: By = "scoring",
    guesses: int = 5,
    samples: int = 1,
    temperature: float = 0.0,
    max_tokens: int = 64,
    questions: str | Path = "tacit",
    write_norms: str | Path | None = None,
    similarity: str | None = None,
    verification: str = "scores",
    resamples: int = 1000,
    permutations: int = 1000,
    splits: int = 100,
    options: RunOptions | None = None,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    vocab_words: VocabWords = "all",
    revision: str | None = None,
    model_args: Mapping[str, Any] = {},
    device: str = "auto",
    dtype: LoadDtype = "float32",
    batch_size: int | Literal["auto"] = 32,
    limit: int | None = None,
    limit_by: LimitBy = "random",
    threads: int | None = None,
    dry_run: bool = False,
    dry_run_seconds: float = 10.0,
    cache: str | Path | None = None,
    compile: bool = False,
    device_map: str | None = None,
    max_memory: str | None = None,
    offload_folder: str | Path | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    resume: bool = False,
    log_to: str | None = None,
    control: Control | None = None,
    quiet: bool = False,
) -> ProbeResult:
    """Concept structure: a model's concept x feature matrix against people's

    Makes a concept x feature matrix of each model (by scoring: every one-word
    feature's log-probability at elicitation's blank, one pass per prompt, or with
    --candidates answers every feature's as exact spans; by generation: how many draws of
    the norming task named it) or of a second norm set (--against, no model),
    and compares it with the norms': representational similarity with a Mantel test, the
    people's split-half ceiling, feature verification, category structure and MDS maps, the
    answer-space prior; intervals over concepts, chance by permuting them.

    Args:
        models: hub names, local directories or GGUF files, each with its own loading options if
            any: NAME,KEY=VALUE,... (KEY: revision, dtype, trust_remote_code, attn_implementation,
            peft, load_in_8bit, load_in_4bit, gguf_file, start_token, chat_template, system,
            base_url, tokenizer, label, random_weights, recorded, concurrency, timeout, retries,
            max_answer_bytes, check_tolerance; any other `from_pretrained` keyword is passed on:
            docs/models.md), ModelSpecs, or Scorers already in memory; scored in turn.
        norms: Norms: a file (CSLB norms.dat, McRae's .xlsx or a CSV/TSV export, or your own CSV/TSV
            table), a Hub dataset's file (hf://datasets/OWNER/NAME[@REVISION]/PATH) or the name of
            installed norms. Default: $TACIT_NORMS (a file or a name), else the installed default
            (`probe norms install`).
        against: A second norm set to compare --norms against, with no model: the reference, whose
            people's ceiling is drawn (`--norms mcrae.xlsx --against norms.dat`: McRae against CSLB
            on their shared concepts). A file, a Hub dataset's file or an installed name.
        norms_format: Say the norms file's format when tacit cannot tell it from the file: cslb,
            mcrae, generic, or one registered by name.
        norms_columns: A generic table's column names, e.g. `concept=Word,feature=Property,pf=Count`
            (feature_type optional).
        concepts: Only these concepts: a comma-separated list, or @FILE with one a line.
        categories: A concept table with `concept` and `category` columns (CSLB's concepts.dat): the
            reference's categories, for the analyses within categories and the clustering. Not
            given: the norms' domains where they have them.
        participants: With --against: how many people described each concept of --norms where its
            file has no participant lists (McRae: 30), so its values are proportions as CSLB's are.
        relations: Relation to ask about: one of the templates' (the paper's: is, is a, has, has a,
            made of). Repeatable. With --by generation, `all` is a free listing of every property
            (the norming task), scored per relation and overall. Not given: every relation of the
            templates.
        candidates: What answers are ranked among: `vocab` (the paper's: one-word answers among the
            shared vocabulary), `answers` (every answer people gave to the relation, of any length:
            'fur', 'four legs') or a FILE of spans, one a line.
        span_scoring: How a candidate span of several tokens is scored by a masked LM: `l2r`, the
            exact chain rule left to right (one mask per token still to come), or `independent` (all
            masked at once, mLAMA's). One of: l2r, independent.
        normalize: What candidate spans are ranked by: their log-probability (`sum`), per token
            (`mean`), or against the prompt without its properties (`pmi`). One of: sum, mean, pmi.
        token_scores: Keep the per-token log-probabilities of the candidates each row lists (an
            item's every candidate; a prompt's target or gold answers and its top 5) in tokens.csv:
            one row per token, in nats and bits, as `probe surprisal` writes them. Scored in the
            same pass.
        templates: The prompts' templates: a JSON lines file (one template a line, several per
            relation for paraphrases; LAMA's relation files load as they are) or a shipped set:
            `paper` (the paper's prompts) or `paraphrases`; a Hub dataset's file is
            hf://datasets/OWNER/NAME[@REVISION]/PATH. See docs/probes/templates.md.
        suffix_top: A causal LM over the shared vocabulary: the text after the blank is scored for
            every feature word (their scores are exact) and for the K words most likely before it
            besides; the probe reads no rank, so 1 is enough (0: every word's, as the ranking
            probes' exact ranks need).
        by: How each model is probed: `scoring` reads its probabilities of the candidates at the
            blank (the paper's); `generation` asks it the same prompt in words and reads what it
            answers (docs/probes/generation.md). One of: scoring, generation.
        guesses: With --by generation: how many answers each prompt asks for, most likely first.
        samples: With --by generation: completions per prompt (retrieval: above 1, one guess each,
            ranked by how many gave it; elicitation: N participants, each listing up to --guesses
            answers). Above 1 needs --temperature above 0.
        temperature: With --by generation: sampling temperature; 0, the default, is greedy
            (reproducible).
        max_tokens: With --by generation: the longest completion, in tokens; one cut there is
            counted as truncated and its last answer left out.
        questions: With --by generation: the questions' wording, a JSON lines file (one question a
            line: other wordings, other languages) or a shipped set: `tacit` or `hansen-hebart` (the
            free listing as 'What are the properties of a bear?'). See docs/probes/generation.md.
        write_norms: With --by generation: also write the model's feature listing here in CSLB's
            columns (each draw a participant), which --norms reads back as any norm set.
        similarity: Concept-by-concept similarity of the feature vectors: `cosine`, `correlation`
            (Pearson's r of the two rows) or `jaccard` (of the features present). One of: cosine,
            correlation, jaccard. Not given: cosine; by scoring, correlation (log-probabilities are
            negative).
        verification: How features are verified: `scores` (the matrix's own values: by scoring, the
            log-probabilities; by generation, the share of draws listing it) or `yes-no` (with --by
            generation: each verification item asked `Is it true that a bear has fur?`, --samples
            draws, P(yes) the share saying yes; calibrated: Brier, ECE, a reliability diagram; no
            matrix, so no RSA). One of: scores, yes-no.
        resamples: Bootstrap resamples of the concepts for each interval.
        permutations: Permutations of the concepts for chance and the Mantel test.
        splits: Random split halves of the participants for the people's ceiling.
        options: how models are loaded and run (tacit.core.options.RunOptions), as an object; the
            keywords below set its fields.
        vocab_models: Model whose tokenizer also constrains the shared vocabulary (only its
            tokenizer is loaded), so that separate runs stay comparable. Repeatable.
        vocab_file: Word list (one a line) the shared vocabulary must lie in.
        vocab_words: Which single-token words the shared vocabulary keeps: all (the paper's), alpha
            (letters only: no punctuation, digits or symbols) or lower (lower-case letters only:
            also no names or capitalised word pieces). One of: all, alpha, lower.
        revision: Model revision (branch, tag or commit) for every --model (hub models only).
        model_args: Loading options for every --model, as lm-evaluation-harness's --model_args:
            KEY=VALUE,... (the keys --model takes); a model's own win.
        device: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.
        dtype: The weights' precision (auto: the checkpoint's own); scores are always normalised in
            float32. One of: float32, float16, bfloat16, auto.
        batch_size: Texts per forward pass, or `auto`: the largest that fits in the device's memory
            (found on the longest batch; recorded). Results do not depend on it. Not given: 32.
        limit: Only N concepts (or items, configurations), as --limit-by picks them: a quick first
            look, said in the summary and recorded, what it leaves out counted.
        limit_by: How --limit picks its N: a sample drawn with --seed (random), or the first N
            (first; CSLB's first concepts are all 'an ...'). One of: random, first.
        threads: CPU threads torch may use (default: torch's own choice; on a loaded machine one can
            be several times faster). Recorded either way.
        dry_run: Plan the run and time a short calibration on each model: prompts, candidates,
            sentences, tokens and the time it would take. Scores nothing else, writes nothing.
        dry_run_seconds: With --dry-run: how long each model's calibration may take past loading (it
            also stops at 2,048 sentences); 0: the counts alone, no model loaded.
        cache: Keep models' answers in this directory across runs: a sentence an earlier run scored
            with the same model is read, not scored again (sweeps, ablations, reruns). The manifest
            counts what was found. Default: nothing kept.
        compile: torch.compile the encoder (a minute or so of compiling first). Results are the
            same; on a CPU it measured no faster, so try it on long GPU runs only.
        device_map: `auto`: spread a model too large for one device over the GPUs, the CPU and disk
            (needs accelerate; see docs/scaling.md).
        max_memory: With --device-map: each device's share, e.g. 0=20GiB,1=20GiB,cpu=60GiB.
        offload_folder: With --device-map: where layers that fit on no device are kept.
        seed: Seeds every random choice of the run (selections, orders, --limit's sample).
        checkpoint: Where scored chunks are kept while a run goes (the command line:
            RUN_DIR/.partial).
        resume: Continue an interrupted run: reuse what it scored (kept in `checkpoint`; the command
            line: --out DIR), score the rest (the same command otherwise; the results equal those of
            an uninterrupted run).
        log_to: Log the run's summary, manifest and files to an experiment tracker once it is saved
            (its extra: pip install 'tacit-probe[wandb]'; offline modes work). One of: wandb,
            mlflow.
        control: Run each model's control beside it: random-weights, the same architecture and
            tokenizer with weights drawn at random (torch seeded with --seed), named 'MODEL (random
            weights, seed S)' in every table: what length and tokens alone give. One of:
            random-weights.
        quiet: No progress bar.

    Returns:
        The run's ProbeResult (what the command line prints and saves); with dry_run=True,
        what the run would cost (a RunEstimate), nothing scored but a short calibration.
    """
