"""`probe retrieve`, `probe elicit` and `probe prince`: the norms-based probes of the paper.

Each command takes its own options here; `probe_command` adds the options every probe shares
(models' loading, the vocabulary, seed, run directory) and runs it into its run directory.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tacit.cli.common import (
    Concepts,
    Models,
    NormalizeOption,
    NormsColumns,
    NormsFormat,
    NormsPath,
    SpanScoringOption,
    choice,
    norms_format_choice,
    parse_concepts,
    probe_command,
)
from tacit.core.errors import TacitError
from tacit.core.options import (
    ABLATIONS,
    CATEGORIES,
    NORMALIZATIONS,
    ORDERS,
    RELATIONS,
    SELECTIONS,
    SPAN_SCORINGS,
    RunOptions,
    check_choice,
    check_choices,
)
from tacit.results.result import ProbeResult

app = typer.Typer()


@app.command()
@probe_command("retrieve")
def retrieve(
    model: Models,
    max_props: Annotated[
        int, typer.Option("--max-props", help="Grow prompts from 1 to this many properties.")
    ] = 10,
    select: Annotated[
        str | None,
        choice("--select", choices=SELECTIONS, help="Which properties, by pf.", default="top"),
    ] = None,
    order: Annotated[
        str | None,
        choice("--order", choices=ORDERS, help="Their order by pf.", default="decreasing"),
    ] = None,
    category: Annotated[
        str | None,
        choice("--category", choices=CATEGORIES, help="The feature types used.", default="all"),
    ] = None,
    ablation: Annotated[
        str | None,
        choice(
            "--ablation",
            choices=ABLATIONS,
            help="Run a whole grid: `ordering` (top/bottom x decreasing/increasing plus the "
            "random baseline, 5 random orders of 5 random property sets per concept) or "
            "`category` (all, visual, functional, encyclopaedic).",
        ),
    ] = None,
    norms: NormsPath = None,
    norms_format: NormsFormat = None,
    norms_columns: NormsColumns = None,
    concepts: Concepts = None,
    candidates: Annotated[
        str,
        typer.Option(
            "--candidates",
            help="What the concept is ranked among: `vocab` (the paper's: one-token concepts "
            "among the shared vocabulary), `concepts` (every concept of the norms as a span "
            "with its article, 'A bear', 'An aardvark', 'Scissors') or a FILE of spans, one a "
            "line.",
        ),
    ] = "vocab",
    span_scoring: SpanScoringOption = "l2r",
    normalize: NormalizeOption = "sum",
    articles: Annotated[
        str | None,
        typer.Option(
            "--articles",
            help="A concept,article CSV overriding the article tacit gives a concept's span.",
        ),
    ] = None,
    *,
    options: RunOptions,
) -> ProbeResult:
    """Name the concept from its properties: `A <mask> has fur, is big, and has claws.`

    For every concept that is one whole-word token in every model, prompts grow from 1 to
    --max-props of its properties (highest production frequency first); each model ranks the
    concept among the shared vocabulary at `<mask>`. Writes manifest.json, vocab.txt,
    prompts.csv, summary.csv and dropped.csv to the run directory and prints MRR and mean
    target probability by number of properties.
    """
    from tacit.api import retrieve as run_retrieve

    return run_retrieve(
        model,
        norms=norms,
        max_props=max_props,
        selection=None if select is None else check_choice("--select", select, SELECTIONS),
        order=None if order is None else check_choice("--order", order, ORDERS),
        category=None if category is None else check_choice("--category", category, CATEGORIES),
        ablation=None if ablation is None else check_choice("--ablation", ablation, ABLATIONS),
        concepts=parse_concepts(concepts),
        norms_format=norms_format_choice(norms_format),
        norms_columns=norms_columns,
        candidates=candidates,
        span_scoring=check_choice("--span-scoring", span_scoring, SPAN_SCORINGS),
        normalize=check_choice("--normalize", normalize, NORMALIZATIONS),
        articles=articles,
        options=options,
    )


@app.command()
@probe_command("elicit")
def elicit(
    model: Models,
    relation: Annotated[
        list[str] | None,
        choice(
            "--relation",
            "-r",
            choices=RELATIONS,
            help="Relation to ask about. Repeatable; default all five.",
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
    norms_format: NormsFormat = None,
    norms_columns: NormsColumns = None,
    concepts: Concepts = None,
    candidates: Annotated[
        str,
        typer.Option(
            "--candidates",
            help="What answers are ranked among: `vocab` (the paper's: one-word answers among "
            "the shared vocabulary), `answers` (every answer people gave to the relation, of "
            "any length: 'fur', 'four legs') or a FILE of spans, one a line.",
        ),
    ] = "vocab",
    span_scoring: SpanScoringOption = "l2r",
    normalize: NormalizeOption = "sum",
    *,
    options: RunOptions,
) -> ProbeResult:
    """Ask for a concept's properties: `Everyone knows that a bear has <mask>.`

    Each concept with at least one one-word answer for a relation (`has fur_hair` answers
    `has` with fur and hair) gets a prompt; the model's distribution at `<mask>` is scored
    against those answers: average precision over the shared vocabulary (ap_vocab) and over
    every answer of that relation (ap_sens), and Spearman's rho between the answers'
    production frequencies and the model's probabilities. Prints the paper's Table 1 layout.
    """
    from tacit.api import elicit as run_elicit

    if no_prefix and prefix_ablation:
        raise TacitError("--no-prefix and --prefix-ablation contradict each other: pick one")
    return run_elicit(
        model,
        norms=norms,
        relations=check_choices("--relation", relation, RELATIONS) if relation else RELATIONS,
        prefix="both" if prefix_ablation else not no_prefix,
        concepts=parse_concepts(concepts),
        norms_format=norms_format_choice(norms_format),
        norms_columns=norms_columns,
        candidates=candidates,
        span_scoring=check_choice("--span-scoring", span_scoring, SPAN_SCORINGS),
        normalize=check_choice("--normalize", normalize, NORMALIZATIONS),
        options=options,
    )


@app.command()
@probe_command("prince", seed=False, resume=False)
def prince(model: Models, *, options: RunOptions) -> ProbeResult:
    """Prince (1978)'s own examples, both directions (the paper's Figure 4). No norms needed.

    Concept direction: is `person` named by `A <mask> has parents, siblings, relatives, a home,
    a pet, a car, a spouse, and a job.`? Property direction: how well does `Everyone knows that
    a country has <mask>.` recover her list (leader, duke, borders, president, queen, citizens,
    land, language, history)?
    """
    from tacit.api import prince as run_prince

    return run_prince(model, options=options)
