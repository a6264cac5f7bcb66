"""The manifest: its shape (Manifest, a TypedDict: the contract between the layers that write
a run and those that read it), reading one back, and what every manifest records about the
software, the time and the command line of a run."""

from __future__ import annotations

import json
import platform
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypedDict, cast

from tacit.core.errors import TacitError, first_line

# tacit's name on the package index (`pip install tacit-probe`; `tacit` there is another
# project): where its installed version is read
DISTRIBUTION = "tacit-probe"


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def software() -> dict[str, str | None]:
    """Versions of tacit and of the libraries whose behaviour shapes the scores."""
    return {
        "tacit": _version(DISTRIBUTION),
        "python": platform.python_version(),
        **{
            name: _version(name)
            for name in ("torch", "transformers", "tokenizers", "numpy", "pandas")
        },
    }


def now() -> str:
    """An ISO 8601 timestamp with the time zone."""
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def command_line() -> str:
    """The command line as typed (as far as Python can tell)."""
    return " ".join(sys.argv)


# The manifest's shape: the contract between the layers that write a run and those that read
# it (runs, tables, plots, reports, leaderboards). JSON as written; every key optional, as
# manifests of older runs and of other probes lack some.
ModelRecord = TypedDict(
    "ModelRecord",
    {
        "name": str,  # as given to --model: a name or path, with its loading options if any
        "source": str,  # the name or path alone, where the options make `name` longer
        "kind": str,  # masked, causal, seq2seq, classifier
        # how the weights were loaded: dtype (and dtype_asked), attn_implementation,
        # trust_remote_code, quantization (8bit, 4bit), peft (the adapter)
        "load": "dict[str, Any]",
        "local_path": "str | None",
        "class": str,
        "revision": "str | None",
        "resolved_revision": "str | None",
        "mask_token": "str | None",
        # seq2seq: the encoder's input, the decoder's target, the decoder's start token
        "infilling": "dict[str, str]",
        # an instruct model's chat template: source, sha256, the user turn, the prefix's text
        "chat_template": "dict[str, Any]",
        # a causal model's: the token its sentences start from, its id, the rule that chose it
        "start_token": "dict[str, Any]",
        "device": "str | None",
        "device_map": "dict[str, int]",
        # a GGUF file: file, path, sha256, quantization, architecture, how it was dequantised
        "gguf": "dict[str, Any]",
        # a model a server scores: base URL (no secrets), the served model as /v1/models
        # lists it, the engine and version it reports, the start token and who adds it, the
        # consistency check's result, prompts per request, concurrency, retries made
        "server": "dict[str, Any]",
        # --control random-weights: the model it controls (`of`), its seed, how it was drawn
        "control": "dict[str, Any]",
        # --cache: the directory, the model's fingerprint, entries found and scored
        "cache": "dict[str, Any]",
        # seconds: load_seconds, scoring_seconds (this run's chunks), the sentences they
        # held, and estimate_seconds, what the first chunk's pace said the scoring would take
        # (from estimated_from_sentences in estimated_from_seconds): compare the two; and
        # tie_seconds, what the tie rule's settling took (tacit.ranking.ties)
        "timing": "dict[str, Any]",
        "batch_size_used": "int | None",
        "batch_size_auto": bool,  # --batch-size auto: batch_size_used is what it found
        "seed": str,  # NLI released predictions: the seed folder
        "mode": str,
        # what the probe counted while this model scored (summed over chunks), and its own
        "prompts_cut_to_fit": int,
        "texts_cut_to_fit": int,
        "truncated_pairs": int,
        "records_not_in_data": int,
        "max_tokens": int,
        "span_rows": int,
        "span_rows_naive": int,
        "span_tokens": int,
        "span_tokens_naive": int,
        # near ties settled on the prompt scored alone (tacit.ranking.ties): rows, scores
        # computed again, those that had moved by more than a third of the tolerance, the
        # distinct prompts (spans: templates) scored alone, and the milliseconds it took
        "tie_rows": int,
        "tie_scores": int,
        "tie_noisy": int,
        "tie_prompts": int,
        # texts scored in batch-invariant batches (tacit.models.invariant), whose near ties
        # needed no settling: their scores were those of the prompt alone already
        "tie_invariant_texts": int,
        "unknown_tokens": int,  # surprisal: tokens scored as the tokenizer's unknown token
        # a causal model's vocabulary mode: words whose text after the blank was scored
        "vocab_suffixes": int,
        "vocab_suffixes_naive": int,
        # with --suffix-top: gold ranks counted against bounds (upper bounds of the ranks),
        # and top-k lists a bound could pass (the best of the words scored)
        "ranks_bounded": int,
        "tops_bounded": int,
        # generation (tacit.models.answers.generation_counts): requests the model ran, their
        # prompt and completion tokens, and requests read from --cache instead
        "generation_requests": int,
        "generation_prompt_tokens": int,
        "generation_completion_tokens": int,
        "generation_cached": int,
        "feature_cache": "dict[str, Any] | None",
        "configs": "dict[str, Any]",
        "labels": "dict[str, str]",
    },
    total=False,
)


class VocabularyRecord(TypedDict, total=False):
    size: int
    sha256: str
    warnings: list[str]


class NormsRecord(TypedDict, total=False):
    name: str | None  # the installed name it was read by; None for a file given by path
    path: str
    format: str
    columns: dict[str, str] | None
    feature_types: bool
    sha256: str
    source: str  # a file read from a Hub dataset: its hf:// URL (tacit.hub.dataset_files)
    commit: str | None  # ... and the dataset's commit it was read at
    rows: int
    concepts: int
    merged_duplicates: list[dict[str, Any]]


class CandidatesRecord(TypedDict, total=False):
    source: str
    size: int
    sha256: str


class SweepRecord(TypedDict, total=False):
    """A sweep cell's record (tacit.sweep): where it comes from and its values in full."""

    file: str
    index: int
    cell: str  # the run directory's name
    label: str  # the model as the leaderboard shows it (a checkpoint's: `pythia-70m@step1000`)
    settings: str  # the name's part after the probe and model (a leaderboard column)
    model: str
    norms: str | None
    options: dict[str, Any]
    series: str | None  # for a training checkpoint: the model it is a checkpoint of
    step: int | None  # and its training step
    revision: str | None


class Manifest(TypedDict, total=False):
    """manifest.json (see docs/run-directory.md). The shared keys come from the engine
    (tacit.engine.runner.run_manifest); a probe adds its own (`options`, `counts`, `norms`,
    the candidates or vocabulary, its data files)."""

    probe: str
    command: str
    software: dict[str, str | None]
    models: list[ModelRecord]
    vocab_models: list[str]
    device: str | None
    dtype: str
    batch_size: int | str  # or "auto"
    compile: bool
    seed: int
    resumed: list[dict[str, Any]]  # each resume: its started and command
    model_args: dict[str, Any]  # --model-args: loading options of every model
    vocab_words: str  # --vocab-words, where not `all`
    control: str  # --control: `random-weights` (each model's control is among `models`)
    limit: dict[str, Any]  # --limit: {"first": N, "of": "concepts"}
    training: dict[str, Any]  # a run during training (ProbeCallback): global_step, epoch
    processes: int
    launch_warning: str
    started: str
    finished: str
    options: dict[str, Any]
    counts: dict[str, Any]
    norms: NormsRecord
    vocabulary: VocabularyRecord
    candidates: dict[str, CandidatesRecord]
    generation: dict[str, Any]  # --by generation: how models were asked (tacit.probes.asking)
    span_scoring: str
    normalize: str
    span_work: dict[str, int]
    ties: dict[str, Any]  # the tie rule and its tolerance (tacit.ranking.ties.record)
    suite: str
    data: dict[str, Any]
    mode: str | None
    cloze: dict[str, Any]
    dropped: dict[str, Any]
    paper_column: str | None
    pooling: str | None
    template: str | None
    templates: dict[str, Any]
    items: dict[str, Any]
    texts: dict[str, Any]  # surprisal: the texts' file (or a list), sha256, counts
    by: str  # surprisal: rows by token or word
    pll: str  # surprisal: masked models' pseudo-log-likelihood
    max_train: int | None
    c_grid: list[float] | None
    skipped_configs: dict[str, str]
    reference: str | None
    paper_bert_average: float
    sweep: SweepRecord


def read_manifest(path: str | Path) -> Manifest:
    """A run directory's manifest.json (or the file itself); an unreadable one is a one-line
    error naming it."""
    path = Path(path)
    if path.is_dir():
        path = path / "manifest.json"
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TacitError(
            f"{path.parent}: not a finished run directory (no manifest.json)"
        ) from None
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise TacitError(f"{path}: not readable JSON ({first_line(err)})") from None
    if not isinstance(loaded, dict):
        raise TacitError(f"{path}: not a run's manifest (a JSON object)")
    return cast(Manifest, loaded)


def with_keys(manifest: Manifest, added: dict[str, Any]) -> Manifest:
    """The manifest with a probe's own keys added (a new dict; the original is left as is)."""
    return cast(Manifest, {**manifest, **added})
