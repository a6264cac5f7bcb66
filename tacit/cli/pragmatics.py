"""`probe nli` (IMPPRES, NOPE, IMPLI) and `probe pragmeval` (PragmEval on frozen models)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tacit.cli.common import Models, choice, probe_command
from tacit.core.options import (
    NLI_MODES,
    NLI_TEMPLATE,
    NLI_VERBALIZER,
    POOLINGS,
    PRAGMEVAL_MODES,
    SUITES,
    RunOptions,
    check_choice,
)
from tacit.results.result import ProbeResult

app = typer.Typer()

# Each command's own options (the shared ones come from probe_command).
NliSuite = Annotated[str, choice("--suite", choices=SUITES, help="Which suite.")]

NliData = Annotated[
    Path,
    typer.Option(
        "--data", help="The suite's files as published: its folder, a part of it, or one file."
    ),
]

NliPredictions = Annotated[
    Path | None,
    typer.Option(
        "--predictions",
        help="Released predictions instead of a model: a .jsonl file (uid + logits in E, N, "
        "C order, or predicted_label), a folder of them, or a folder of seed folders "
        "(averaged, with their spread).",
    ),
]

NliMode = Annotated[
    str,
    choice(
        "--mode",
        choices=NLI_MODES,
        help="auto (from the checkpoint's architecture), cloze or classifier.",
    ),
]

NliTemplate = Annotated[
    str,
    typer.Option("--template", help="Cloze mode: where premise, hypothesis and `<mask>` go."),
]

NliVerbalizer = Annotated[
    str,
    typer.Option("--verbalizer", help="Cloze mode: one single-token word per label."),
]

NliCalibrate = Annotated[
    bool,
    typer.Option(
        "--calibrate",
        help="Cloze mode: divide by the label distribution of content-free inputs "
        "(Zhao et al. 2021).",
    ),
]

NliLabelNames = Annotated[
    str | None,
    typer.Option(
        "--label-names",
        help="Classifier mode: what its outputs mean, in order (e.g. "
        "contradiction,neutral,entailment), when its config's id2label does not say.",
    ),
]

NliMaxItems = Annotated[
    int | None,
    typer.Option("--max-items", help="Score a seeded random sample of this many items."),
]

PragmevalData = Annotated[
    Path, typer.Option("--data", help="The PragmEval folder: `<Task>/{train,dev,test}.tsv`.")
]

PragmevalTask = Annotated[
    list[str] | None,
    typer.Option(
        "--task",
        "-t",
        help="A task (Persuasiveness: all its configurations) or one configuration "
        "(EmoBank-Valence). Repeatable; default all.",
    ),
]

PragmevalMode = Annotated[
    str,
    choice(
        "--mode",
        choices=PRAGMEVAL_MODES,
        help="linear (probe frozen features) or cloze (zero-shot).",
    ),
]

PragmevalPooling = Annotated[
    str,
    choice(
        "--pooling",
        choices=POOLINGS,
        help="Linear mode: the hidden state at `<mask>` (masked LMs), at the last token "
        "(causal LMs), or the mean.",
    ),
]

PragmevalTemplate = Annotated[
    str | None,
    typer.Option(
        "--template",
        help="Linear: the features template (default `{sentence1} <mask> {sentence2}` or "
        "`{sentence} <mask>`). Cloze: the template, instead of each task's default.",
    ),
]

PragmevalVerbalizer = Annotated[
    str | None,
    typer.Option("--verbalizer", help="Cloze: label=word,... instead of each task's default."),
]

PragmevalMaxTrain = Annotated[
    int | None,
    typer.Option("--max-train", help="Linear: use a seeded sample of this many train rows."),
]

PragmevalCacheDir = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Where features are cached (default $TACIT_CACHE_DIR, else ~/.cache/tacit).",
    ),
]

PragmevalReference = Annotated[
    Path | None,
    typer.Option(
        "--reference",
        help="CSV `task,bert,human` (percent) printed beside ours, e.g. the paper's table.",
    ),
]


@app.command()
@probe_command("nli", vocab=False)
def nli(
    suite: NliSuite,
    data: NliData,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="A masked or causal LM (cloze mode) or an NLI sequence classifier (classifier "
            "mode): hub name or local directory. Repeat for several.",
        ),
    ] = None,
    predictions: NliPredictions = None,
    mode: NliMode = "auto",
    template: NliTemplate = NLI_TEMPLATE,
    verbalizer: NliVerbalizer = NLI_VERBALIZER,
    calibrate: NliCalibrate = False,
    label_names: NliLabelNames = None,
    max_items: NliMaxItems = None,
    *,
    options: RunOptions,
) -> ProbeResult:
    """Pragmatic inference suites (IMPPRES, NOPE, IMPLI) as NLI: `--suite nope --data DIR`.

    Cloze mode asks a masked LM `{premise}? <mask>, {hypothesis}` and reads Yes / Maybe / No at
    the mask (a causal LM scores the sentence with each word in place); classifier mode runs
    an NLI classifier; `--predictions` reads released prediction files. Writes items.csv (one
    row per item x model x seed), summary.csv (each paper's breakdowns, mean and sd over
    seeds), summary_by_seed.csv and manifest.json, and prints the summary (beside the paper's
    numbers for NOPE predictions).
    """
    from tacit.api_nli import nli as run_nli
    from tacit.probes.nli import ClozeSetup

    names = [n.strip() for n in label_names.split(",")] if label_names else None
    return run_nli(
        check_choice("--suite", suite, SUITES),
        data,
        model or (),
        predictions=predictions,
        mode=check_choice("--mode", mode, NLI_MODES),
        cloze=ClozeSetup(template, verbalizer, calibrate),
        label_names=names,
        max_items=max_items,
        options=options,
    )


@app.command()
@probe_command("pragmeval", vocab=False, resume=False)
def pragmeval(
    data: PragmevalData,
    model: Models,
    task: PragmevalTask = None,
    mode: PragmevalMode = "linear",
    pooling: PragmevalPooling = "mask",
    template: PragmevalTemplate = None,
    verbalizer: PragmevalVerbalizer = None,
    max_train: PragmevalMaxTrain = None,
    cache_dir: PragmevalCacheDir = None,
    reference: PragmevalReference = None,
    *,
    options: RunOptions,
) -> ProbeResult:
    """PragmEval's 11 pragmatics tasks on a frozen model: linear probes or zero-shot cloze.

    Linear mode encodes every text once (cached per model and configuration), fits a logistic
    regression with its regularisation chosen on dev, and reports test accuracy (macro-F1 for
    SwitchBoard and MRDA), configurations averaged into tasks as the paper does. This is a
    probe of a frozen model, not the paper's fine-tuning. Writes configs.csv, summary.csv,
    predictions.csv, manifest.json and pragmeval.png.
    """
    from tacit.api_pragmeval import pragmeval as run_pragmeval

    return run_pragmeval(
        data,
        model,
        tasks=task,
        mode=check_choice("--mode", mode, PRAGMEVAL_MODES),
        pooling=check_choice("--pooling", pooling, POOLINGS),
        template=template,
        verbalizer=verbalizer,
        max_train=max_train,
        cache_dir=cache_dir,
        reference=reference,
        options=options,
    )
