"""The `probe` command line: one thin command per probe; the work happens in tacit.api."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from tacit.api import ProbeResult
from tacit.api import elicit as run_elicit
from tacit.api import prince as run_prince
from tacit.api import retrieve as run_retrieve
from tacit.api_pragmatics import nli as run_nli
from tacit.api_pragmatics import pragmeval as run_pragmeval
from tacit.errors import TacitError
from tacit.files import write_atomic
from tacit.norms.reader import FEATURE_TYPES, NormSet
from tacit.norms.store import install_norms, load_norms
from tacit.pragmatics import SUITES
from tacit.probes.elicit import PAPER_PROMPTS, RELATIONS
from tacit.probes.nli import DEFAULT_TEMPLATE, DEFAULT_VERBALIZER, ClozeSetup
from tacit.probes.retrieve import CATEGORIES, ORDERS, SELECTIONS, eligible_concepts
from tacit.results.checkpoint import PARTIAL
from tacit.results.nli_report import format_nli_summary
from tacit.results.pragmeval_report import format_pragmeval, plot_pragmeval
from tacit.results.rundir import default_run_dir, run_dir
from tacit.results.summary import format_elicitation_table, format_retrieval_summary
from tacit.vocab.shared import vocabulary_for

app = typer.Typer(
    help="Probe masked language models for the tacit assumptions people hold about concepts.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
norms_app = typer.Typer(
    help="Install and inspect the CSLB concept-property norms.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(norms_app, name="norms")

_debug = {"on": bool(os.environ.get("TACIT_DEBUG"))}


@app.callback()
def main(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full Python traceback on errors.")
    ] = False,
) -> None:
    """Probe masked language models for the tacit assumptions people hold about concepts."""
    _debug["on"] = debug or bool(os.environ.get("TACIT_DEBUG"))  # per invocation


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that a run stops the way Ctrl-C stops it."""


def _on_sigterm(signum, frame):
    raise Terminated()


def user_errors(command):
    """Turn a TacitError into one line on stderr and exit status 1 (traceback with --debug).

    Ctrl-C and SIGTERM stop the run at once; run files are written together at the very end
    (see write_files), so an interrupted run leaves none of them.
    """

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return command(*args, **kwargs)
        except TacitError as err:
            if _debug["on"]:
                raise
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt as stop:
            name = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"
            typer.echo(f"interrupted by {name}: no result files were written", err=True)
            raise typer.Exit(143 if isinstance(stop, Terminated) else 130) from None
        finally:
            signal.signal(signal.SIGTERM, previous)

    return wrapper


# Options shared by the commands (typer reads the metadata from Annotated).
Models = Annotated[
    list[str],
    typer.Option(
        "--model",
        "-m",
        help="Masked LM to probe: a Hugging Face hub name or a local directory. "
        "Repeat for several.",
    ),
]
NormsPath = Annotated[
    Path | None,
    typer.Option(
        "--norms",
        help="CSLB norms file. Default: the installed norms (`probe norms install`), "
        "else $TACIT_NORMS.",
    ),
]
VocabModels = Annotated[
    list[str] | None,
    typer.Option(
        "--vocab-model",
        help="Model whose tokenizer also constrains the shared vocabulary (only its tokenizer is "
        "loaded), so that separate runs stay comparable. Repeatable.",
    ),
]
VocabFile = Annotated[
    Path | None,
    typer.Option("--vocab-file", help="Word list (one a line) the shared vocabulary must lie in."),
]
Revision = Annotated[
    str | None,
    typer.Option("--revision", help="Model revision (branch, tag or commit) for every --model."),
]
Device = Annotated[str, typer.Option("--device", help="auto, cpu, cuda, cuda:N or mps.")]
Dtype = Annotated[
    str, typer.Option("--dtype", help="Weights' precision: float32, float16 or bfloat16.")
]
BatchSize = Annotated[int, typer.Option("--batch-size", help="Prompts per forward pass.")]
Compile = Annotated[
    bool,
    typer.Option(
        "--compile",
        help="torch.compile the encoder (a minute or so of compiling first). Results are the "
        "same; on a CPU it measured no faster (README), so try it on long GPU runs only.",
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed for random selections and orders.")]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Run directory. Default: `results/<probe>/<timestamp>`."),
]
Concepts = Annotated[
    str | None,
    typer.Option(
        "--concepts", help="Only these concepts: a comma-separated list, or @FILE with one a line."
    ),
]
Resume = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Continue an interrupted run in --out DIR: reuse what it scored, score the rest "
        "(the same command otherwise; the results equal those of an uninterrupted run).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


def parse_concepts(value: str | None) -> list[str] | None:
    """`bear,cat` or `@file` (one concept a line) -> list; None stays None."""
    if value is None:
        return None
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise TacitError(f"--concepts {value}: cannot read {path} ({err.strerror})") from None
        names = [line.strip() for line in lines if line.strip()]
    else:
        names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise TacitError(f"--concepts {value!r}: names no concept")
    return names


def _run_options(
    vocab_model: list[str] | None,
    vocab_file: Path | None,
    revision: str | None,
    device: str,
    dtype: str,
    batch_size: int,
    compile: bool,
    seed: int,
    quiet: bool,
) -> dict:
    """The options every probe takes, as tacit.api's keyword arguments."""
    return {
        "vocab_models": vocab_model or (),
        "vocab_file": vocab_file,
        "revision": revision,
        "device": device,
        "dtype": dtype,
        "batch_size": batch_size,
        "compile": compile,
        "seed": seed,
        "progress": not quiet,
    }


def _run_and_save(
    probe: str, out: Path | None, resume: bool, run: Callable[[dict], ProbeResult]
) -> tuple[ProbeResult, Path]:
    """Run a probe into its run directory (default results/<probe>/<timestamp>) and save it.

    Scored chunks are kept in RUN_DIR/.partial while the run goes: interrupted, the run can go
    on with --resume; failed otherwise, it leaves no directory behind. Vocabulary warnings go
    to stderr.
    """
    if resume and out is None:
        raise TacitError("--resume needs --out DIR: the run directory to continue")
    with run_dir(out or default_run_dir(probe)) as out_dir:
        try:
            result = run({"checkpoint": out_dir / PARTIAL, "resume": resume})
            result.save(out_dir)
        except KeyboardInterrupt:
            typer.echo(
                f"to continue where it stopped: the same command with --resume --out {out_dir}",
                err=True,
            )
            raise
        except BaseException:
            if not resume:
                shutil.rmtree(out_dir / PARTIAL, ignore_errors=True)
            raise
    for warning in result.manifest.get("vocabulary", {}).get("warnings", []):
        typer.echo(f"warning: {warning}", err=True)
    asked = result.manifest.get("batch_size")
    for record in result.manifest.get("models", []):
        used = record.get("batch_size_used")
        if used is not None and asked is not None and used < asked:
            typer.echo(
                f"note: {record.get('model') or record.get('name')}: ran out of device memory at "
                f"--batch-size {asked} and went on {used} at a time (scores do not depend on it)",
                err=True,
            )
    return result, out_dir


def _describe_drops(dropped: pd.DataFrame, kept: int) -> str:
    counts = dropped["reason"].value_counts()
    detail = ", ".join(f"{reason}: {n}" for reason, n in counts.items())
    return f"concepts: {kept} kept, {len(dropped)} dropped" + (f" ({detail})" if detail else "")


@app.command()
@user_errors
def retrieve(
    model: Models,
    max_props: Annotated[
        int, typer.Option("--max-props", help="Grow prompts from 1 to this many properties.")
    ] = 10,
    select: Annotated[
        str, typer.Option("--select", help=f"Which properties: {', '.join(SELECTIONS)} (by pf).")
    ] = "top",
    order: Annotated[
        str, typer.Option("--order", help=f"Their order by pf: {', '.join(ORDERS)}.")
    ] = "decreasing",
    category: Annotated[
        str, typer.Option("--category", help=f"Feature types used: {', '.join(CATEGORIES)}.")
    ] = "all",
    ablation: Annotated[
        str | None,
        typer.Option(
            "--ablation",
            help="Run a whole grid: `ordering` (top/bottom x decreasing/increasing plus the "
            "random baseline, 5 random orders of 5 random property sets per concept) or "
            "`category` (all, visual, functional, encyclopaedic).",
        ),
    ] = None,
    norms: NormsPath = None,
    vocab_model: VocabModels = None,
    vocab_file: VocabFile = None,
    concepts: Concepts = None,
    revision: Revision = None,
    device: Device = "auto",
    dtype: Dtype = "float32",
    batch_size: BatchSize = 32,
    compile: Compile = False,
    seed: Seed = 0,
    out: Out = None,
    resume: Resume = False,
    quiet: Quiet = False,
) -> None:
    """Name the concept from its properties: `A <mask> has fur, is big, and has claws.`

    For every concept that is one whole-word token in every model, prompts grow from 1 to
    --max-props of its CSLB properties (highest production frequency first); each model
    ranks the concept among the shared vocabulary at `<mask>`. Writes manifest.json, vocab.txt,
    prompts.csv, summary.csv and dropped.csv to the run directory and prints MRR and mean
    target probability by number of properties.
    """
    result, out_dir = _run_and_save(
        "retrieve",
        out,
        resume,
        lambda checkpointing: run_retrieve(
            model,
            norms=norms,
            max_props=max_props,
            selection=select,
            order=order,
            category=category,
            ablation=ablation,
            concepts=parse_concepts(concepts),
            **_run_options(
                vocab_model, vocab_file, revision, device, dtype, batch_size, compile, seed, quiet
            ),
            **checkpointing,
        ),
    )
    counts = result.manifest["counts"]
    typer.echo(format_retrieval_summary(result.summary))
    typer.echo("")
    typer.echo(_describe_drops(result.dropped, counts["concepts"]))
    typer.echo(
        f"prompts: {counts['prompts_per_model']} per model ({counts['unique_prompt_texts']} "
        f"distinct texts) x {len(result.manifest['models'])} model(s); "
        f"shared vocabulary: {len(result.vocab)} words"
    )
    naming = counts["prompts_naming_their_target"]
    if naming["prompts"]:
        typer.echo(
            f"note: {naming['prompts']} prompt(s) name their own target among the properties "
            f"(kept, as in the paper): {', '.join(naming['concepts'][:8])}"
            f"{' ...' if len(naming['concepts']) > 8 else ''}",
            err=True,
        )
    for category, short in counts["concepts_with_fewer_properties_than_max_props"].items():
        typer.echo(
            f"note: {len(short)} concept(s) have fewer than {max_props} {category} properties "
            f"and get prompts up to what they have (n_prompts in summary.csv): "
            f"{', '.join(short[:8])}{' ...' if len(short) > 8 else ''}",
            err=True,
        )
    typer.echo(f"written to {out_dir}")


@app.command()
@user_errors
def elicit(
    model: Models,
    relation: Annotated[
        list[str] | None,
        typer.Option(
            "--relation",
            "-r",
            help=f"Relation to ask about: {', '.join(RELATIONS)}. Repeatable; default all five.",
        ),
    ] = None,
    no_prefix: Annotated[
        bool, typer.Option("--no-prefix", help="Drop 'Everyone knows that' (Table 2's ablation).")
    ] = False,
    prefix_ablation: Annotated[
        bool,
        typer.Option(
            "--prefix-ablation", help="Run with and without the prefix and print the changes."
        ),
    ] = False,
    norms: NormsPath = None,
    vocab_model: VocabModels = None,
    vocab_file: VocabFile = None,
    concepts: Concepts = None,
    revision: Revision = None,
    device: Device = "auto",
    dtype: Dtype = "float32",
    batch_size: BatchSize = 32,
    compile: Compile = False,
    seed: Seed = 0,
    out: Out = None,
    resume: Resume = False,
    quiet: Quiet = False,
) -> None:
    """Ask for a concept's properties: `Everyone knows that a bear has <mask>.`

    Each concept with at least one one-word answer for a relation (`has fur_hair` answers
    `has` with fur and hair) gets a prompt; the model's distribution at `<mask>` is scored
    against those answers: average precision over the shared vocabulary (ap_vocab) and over
    every answer of that relation (ap_sens), and Spearman's rho between the answers'
    production frequencies and the model's probabilities. Prints the paper's Table 1 layout.
    """
    if no_prefix and prefix_ablation:
        raise TacitError("--no-prefix and --prefix-ablation contradict each other: pick one")
    result, out_dir = _run_and_save(
        "elicit",
        out,
        resume,
        lambda checkpointing: run_elicit(
            model,
            norms=norms,
            relations=relation or RELATIONS,
            prefix="both" if prefix_ablation else not no_prefix,
            concepts=parse_concepts(concepts),
            **_run_options(
                vocab_model, vocab_file, revision, device, dtype, batch_size, compile, seed, quiet
            ),
            **checkpointing,
        ),
    )
    typer.echo(format_elicitation_table(result.summary, PAPER_PROMPTS))
    typer.echo("")
    for row in result.extra["excluded"].itertuples():
        typer.echo(
            f"{row.relation}: {row.features} features answer it; kept {row.kept}, left out "
            f"{row.multi_word} of more than one word and {row.out_of_vocabulary} out of the "
            f"shared vocabulary ({row.alternatives_oov} alternative words out of it)"
        )
    undefined = result.manifest["counts"]["spearman_undefined"]
    typer.echo(f"Spearman's rho undefined (fewer than 2 answers, or no variance): {undefined} rows")
    typer.echo(f"written to {out_dir}")


@app.command()
@user_errors
def prince(
    model: Models,
    vocab_model: VocabModels = None,
    vocab_file: VocabFile = None,
    revision: Revision = None,
    device: Device = "auto",
    dtype: Dtype = "float32",
    batch_size: BatchSize = 32,
    compile: Compile = False,
    out: Out = None,
    quiet: Quiet = False,
) -> None:
    """Prince (1978)'s own examples, both directions (the paper's Figure 4). No norms needed.

    Concept direction: is `person` named by `A <mask> has parents, siblings, relatives, a home,
    a pet, a car, a spouse, and a job.`? Property direction: how well does `Everyone knows that
    a country has <mask>.` recover her list (leader, duke, borders, president, queen, citizens,
    land, language, history)?
    """
    result, out_dir = _run_and_save(
        "prince",
        out,
        False,
        lambda checkpointing: run_prince(
            model,
            **_run_options(
                vocab_model, vocab_file, revision, device, dtype, batch_size, compile, 0, quiet
            ),
            **checkpointing,
        ),
    )
    for row in result.prompts.itertuples():
        typer.echo(f"{row.model} | {row.prompt}")
        if row.direction == "concept":
            typer.echo(f"  '{row.target}': rank {row.rank}, probability {row.target_prob:.4g}")
        else:
            typer.echo(f"  Prince's properties: AP {row.ap_vocab:.3f}; ranks {row.gold_ranks}")
            if row.not_in_vocab:
                typer.echo(f"  not in the shared vocabulary: {row.not_in_vocab}")
        typer.echo(f"  top 10: {row.top10}")
    typer.echo(f"written to {out_dir}")


@app.command()
@user_errors
def nli(
    suite: Annotated[str, typer.Option("--suite", help=f"Which suite: {', '.join(SUITES)}.")],
    data: Annotated[
        Path,
        typer.Option(
            "--data", help="The suite's files as published: its folder, a part of it, or one file."
        ),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="A masked LM (cloze mode) or an NLI sequence classifier (classifier mode): hub "
            "name or local directory. Repeat for several.",
        ),
    ] = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            "--predictions",
            help="Released predictions instead of a model: a .jsonl file (uid + logits in E, N, "
            "C order, or predicted_label), a folder of them, or a folder of seed folders "
            "(averaged, with their spread).",
        ),
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode", help="auto (from the checkpoint's architecture), cloze or classifier."
        ),
    ] = "auto",
    template: Annotated[
        str,
        typer.Option("--template", help="Cloze mode: where premise, hypothesis and `<mask>` go."),
    ] = DEFAULT_TEMPLATE,
    verbalizer: Annotated[
        str,
        typer.Option("--verbalizer", help="Cloze mode: one single-token word per label."),
    ] = DEFAULT_VERBALIZER,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="Cloze mode: divide by the label distribution of content-free inputs "
            "(Zhao et al. 2021).",
        ),
    ] = False,
    label_names: Annotated[
        str | None,
        typer.Option(
            "--label-names",
            help="Classifier mode: what its outputs mean, in order (e.g. "
            "contradiction,neutral,entailment), when its config's id2label does not say.",
        ),
    ] = None,
    max_items: Annotated[
        int | None,
        typer.Option("--max-items", help="Score a seeded random sample of this many items."),
    ] = None,
    revision: Revision = None,
    device: Device = "auto",
    dtype: Dtype = "float32",
    batch_size: BatchSize = 32,
    compile: Compile = False,
    seed: Seed = 0,
    out: Out = None,
    quiet: Quiet = False,
) -> None:
    """Pragmatic inference suites (IMPPRES, NOPE, IMPLI) as NLI: `--suite nope --data DIR`.

    Cloze mode asks a masked LM `{premise}? <mask>, {hypothesis}` and reads Yes / Maybe / No at
    the mask; classifier mode runs an NLI classifier; `--predictions` reads released prediction
    files. Writes items.csv (one row per item x model x seed), summary.csv (each paper's
    breakdowns, mean and sd over seeds), summary_by_seed.csv and manifest.json, and prints the
    summary (beside the paper's numbers for NOPE predictions).
    """
    names = [n.strip() for n in label_names.split(",")] if label_names else None
    result, out_dir = _run_and_save(
        "nli",
        out,
        False,
        lambda _: run_nli(
            suite,
            data,
            model or (),
            predictions=predictions,
            mode=mode,
            cloze=ClozeSetup(template, verbalizer, calibrate),
            label_names=names,
            max_items=max_items,
            revision=revision,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            compile=compile,
            seed=seed,
            progress=not quiet,
        ),
    )
    manifest = result.manifest
    typer.echo(format_nli_summary(result.summary, manifest["paper_column"]))
    typer.echo("")
    n_files = len(manifest["data"]["files"])
    typer.echo(f"items: {manifest['data']['items_loaded']} read from {n_files} file(s)")
    if manifest["dropped"]["not_sampled"]:
        typer.echo(f"--max-items: {manifest['data']['items_sampled']} sampled, "
                   f"{manifest['dropped']['not_sampled']} not")  # fmt: skip
    for record in manifest["models"]:
        where = f"{record['model']}" + (f" (seed {record['seed']})" if record["seed"] else "")
        if record.get("prompts_cut_to_fit"):
            typer.echo(f"note: {where}: {record['prompts_cut_to_fit']} prompt(s) longer than "
                       f"{record['max_tokens']} tokens: cut around the mask (the premise loses "
                       "its start)", err=True)  # fmt: skip
        if record.get("truncated_pairs"):
            typer.echo(f"note: {where}: {record['truncated_pairs']} pair(s) longer than "
                       f"{record['max_tokens']} tokens: premise cut", err=True)  # fmt: skip
        if record.get("records_not_in_data"):
            typer.echo(f"note: {where}: {record['records_not_in_data']} prediction(s) name no "
                       "item in --data", err=True)  # fmt: skip
    for row in manifest["dropped"]["without_prediction"]:
        seed_text = f" (seed {row['seed']})" if row["seed"] else ""
        typer.echo(f"note: {row['model']}{seed_text}: {row['items']} item(s) without a "
                   "prediction, left out", err=True)  # fmt: skip
    typer.echo(f"written to {out_dir}")


@app.command()
@user_errors
def pragmeval(
    data: Annotated[
        Path, typer.Option("--data", help="The PragmEval folder: `<Task>/{train,dev,test}.tsv`.")
    ],
    model: Models,
    task: Annotated[
        list[str] | None,
        typer.Option(
            "--task",
            "-t",
            help="A task (Persuasiveness: all its configurations) or one configuration "
            "(EmoBank-Valence). Repeatable; default all.",
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", help="linear (probe frozen features) or cloze (zero-shot).")
    ] = "linear",
    pooling: Annotated[
        str,
        typer.Option("--pooling", help="Linear mode: the hidden state at `<mask>`, or mean."),
    ] = "mask",
    template: Annotated[
        str | None,
        typer.Option(
            "--template",
            help="Linear: the features template (default `{sentence1} <mask> {sentence2}` or "
            "`{sentence} <mask>`). Cloze: the template, instead of each task's default.",
        ),
    ] = None,
    verbalizer: Annotated[
        str | None,
        typer.Option("--verbalizer", help="Cloze: label=word,... instead of each task's default."),
    ] = None,
    max_train: Annotated[
        int | None,
        typer.Option("--max-train", help="Linear: use a seeded sample of this many train rows."),
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where features are cached (default $TACIT_CACHE_DIR, else ~/.cache/tacit).",
        ),
    ] = None,
    reference: Annotated[
        Path | None,
        typer.Option(
            "--reference",
            help="CSV `task,bert,human` (percent) printed beside ours, e.g. the paper's table.",
        ),
    ] = None,
    revision: Revision = None,
    device: Device = "auto",
    dtype: Dtype = "float32",
    batch_size: BatchSize = 32,
    compile: Compile = False,
    seed: Seed = 0,
    out: Out = None,
    quiet: Quiet = False,
) -> None:
    """PragmEval's 11 pragmatics tasks on a frozen model: linear probes or zero-shot cloze.

    Linear mode encodes every text once (cached per model and configuration), fits a logistic
    regression with its regularisation chosen on dev, and reports test accuracy (macro-F1 for
    SwitchBoard and MRDA), configurations averaged into tasks as the paper does. This is a
    probe of a frozen model, not the paper's fine-tuning. Writes configs.csv, summary.csv,
    predictions.csv, manifest.json and pragmeval.png.
    """
    result, out_dir = _run_and_save(
        "pragmeval",
        out,
        False,
        lambda _: run_pragmeval(
            data,
            model,
            tasks=task,
            mode=mode,
            pooling=pooling,
            template=template,
            verbalizer=verbalizer,
            max_train=max_train,
            cache_dir=cache_dir,
            reference=reference,
            revision=revision,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            compile=compile,
            seed=seed,
            progress=not quiet,
        ),
    )
    plot_pragmeval(result.summary, out_dir / "pragmeval.png")
    typer.echo(format_pragmeval(result.summary, mode))
    for name, reason in result.manifest["skipped_configs"].items():
        typer.echo(f"note: {name} skipped: {reason}", err=True)
    for record in result.manifest["models"]:
        if record["texts_cut_to_fit"]:
            typer.echo(f"note: {record['model']}: {record['texts_cut_to_fit']} text(s) longer "
                       "than the model allows, cut around the mask", err=True)  # fmt: skip
        cache = record["feature_cache"]
        if cache:
            typer.echo(f"features: {cache['hits']} split(s) from the cache, {cache['misses']} "
                       f"encoded ({cache['directory']})")  # fmt: skip
    typer.echo(f"written to {out_dir}")


@app.command()
@user_errors
def table(
    runs: Annotated[list[Path], typer.Argument(help="Elicitation run directories.")],
) -> None:
    """Print the paper's Table 1 (and Table 2's changes) from elicitation runs.

    Runs with and without the prefix, of the same models, give the changes when it is dropped.
    """
    from tacit.results.plots import read_summary

    frames = []
    for run in runs:
        frame = read_summary(run, required={"model", "relation", "prefix", "map_vocab"})
        frames.append(frame.drop(columns="run"))
    typer.echo(format_elicitation_table(pd.concat(frames, ignore_index=True), PAPER_PROMPTS))


@app.command()
@user_errors
def plot(
    runs: Annotated[list[Path], typer.Argument(help="Retrieval run directories.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Figure file: .png, .svg or .pdf.")
    ] = Path("retrieval.png"),
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="auto (from what the runs contain), models, category or ordering.",
        ),
    ] = "auto",
) -> None:
    """Plot MRR and mean target probability against the number of properties.

    One line per model (the paper's Figure 2), per property category (Figure 3a), or per
    selection x order with the random baseline (Figure 3b), chosen from what the runs
    contain; bands are 95% bootstrap intervals over concepts.
    """
    from tacit.results.plots import plot as plot_runs  # matplotlib only when plotting

    written = plot_runs(runs, out, kind=kind)
    typer.echo(f"written to {written}")


@app.command()
@user_errors
def vocab(
    model: Models,
    vocab_file: VocabFile = None,
    revision: Revision = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the words here.")] = None,
) -> None:
    """Build the shared vocabulary of the models' tokenizers and report its coverage.

    A word is in it when every tokenizer encodes it, after a space, as one whole-word token
    (RoBERTa's leading-space form; no WordPiece ## pieces, no special tokens), and, with
    --vocab-file, when the file lists it.
    """
    shared, _ = vocabulary_for(model, vocab_file=vocab_file, revision=revision)
    typer.echo(shared.coverage.to_string(index=False))
    for warning in shared.warnings():
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(f"shared vocabulary: {len(shared)} words (sha256 {shared.sha256[:12]})")
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(out, shared.text())
        except OSError as err:
            raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None
        typer.echo(f"written to {out}")


def _norms_report(norm_set: NormSet) -> str:
    table = norm_set.table
    lines = [
        f"{norm_set.path}: {len(table)} concept-feature rows, {len(norm_set.concepts)} concepts",
        f"sha256 {norm_set.sha256}",
        "feature types: "
        + ", ".join(f"{t} {int((table['feature_type'] == t).sum())}" for t in FEATURE_TYPES),
        "relations: " + ", ".join(f"{r} {n}" for r, n in table["relation"].value_counts().items()),
    ]
    for row in norm_set.merged.itertuples():
        lines.append(
            f"merged duplicate: {row.concept} / {row.feature} (pf {row.pfs} -> {row.pf}, "
            "distinct participants)"
        )
    return "\n".join(lines)


@norms_app.command("install")
@user_errors
def norms_install(
    path: Annotated[Path, typer.Argument(help="The CSLB norms file (norms.dat).")],
) -> None:
    """Validate a CSLB norms file once and remember it for later runs."""
    norm_set = install_norms(path)
    typer.echo(_norms_report(norm_set))
    typer.echo(f"installed: later runs use {path.resolve()} unless --norms is given")


@norms_app.command("show")
@user_errors
def norms_show(
    norms: NormsPath = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="Also check which concepts are single tokens for these models."
        ),
    ] = None,
    vocab_file: VocabFile = None,
) -> None:
    """Counts, feature types, relations, and which concepts retrieval keeps or drops and why."""
    norm_set = load_norms(norms)
    typer.echo(_norms_report(norm_set))
    if not model:
        typer.echo("eligible concepts: give --model to check single tokens (needs the tokenizers)")
        return
    shared, _ = vocabulary_for(model, vocab_file=vocab_file)
    eligible, dropped = eligible_concepts(norm_set, shared)
    typer.echo(_describe_drops(dropped, len(eligible)))
    for reason, rows in dropped.groupby("reason", sort=False):
        names = list(rows["concept"])
        typer.echo(f"  {reason}: {', '.join(names[:12])}{' ...' if len(names) > 12 else ''}")


def run() -> None:
    """Console-script entry point."""
    app(prog_name="probe")


if __name__ == "__main__":
    sys.exit(run())
