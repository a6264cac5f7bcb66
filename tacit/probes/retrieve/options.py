"""Retrieval's options, declared once (tacit.core.params): the API, the command line and sweep
files read them from here, and so do the prompt builders for their choices."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from tacit.ask.options import (
    BY,
    GUESSES,
    MAX_TOKENS,
    NORMALIZE,
    SAMPLES,
    SHOTS,
    SPAN_SCORING,
    SUFFIX_TOP,
    TEMPERATURE,
    TOKEN_SCORES,
    By,
)
from tacit.core.params import Options, Param
from tacit.probes.shared_options import CONCEPTS, NORMS, NORMS_COLUMNS, NORMS_FORMAT
from tacit.templates import TEMPLATES

if TYPE_CHECKING:
    from tacit.core.choices import Normalize, SpanScoring
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet

Selection = Literal["top", "bottom", "random"]
Order = Literal["decreasing", "increasing", "random"]
Category = Literal["all", "visual", "functional", "encyclopaedic"]
Ablation = Literal["ordering", "category"]

SELECTIONS: tuple[Selection, ...] = get_args(Selection)
ORDERS: tuple[Order, ...] = get_args(Order)
CATEGORIES: tuple[Category, ...] = get_args(Category)
ABLATIONS: tuple[Ablation, ...] = get_args(Ablation)

MAX_PROPS = Param(
    "max_props",
    10,
    kind="int",
    minimum=1,
    help="Grow prompts from 1 to this many properties.",
)
SELECTION = Param(
    "selection",
    None,
    choices=SELECTIONS,
    flags=("--select",),
    shown_default="top",
    help="Which properties, by pf.",
)
ORDER = Param("order", None, choices=ORDERS, shown_default="decreasing", help="Their order by pf.")
CATEGORY = Param(
    "category", None, choices=CATEGORIES, shown_default="all", help="The feature types used."
)
ABLATION = Param(
    "ablation",
    None,
    choices=ABLATIONS,
    help="Run a whole grid: `ordering` (top/bottom x decreasing/increasing plus the random "
    "baseline, 5 random orders of 5 random property sets per concept) or `category` (all, "
    "visual, functional, encyclopaedic).",
)
CANDIDATE_SETS = ("vocab", "concepts")  # what --candidates names besides a FILE
CANDIDATES = Param(
    "candidates",
    "vocab",
    kind="path",
    help="What the concept is ranked among: `vocab` (the paper's: one-token concepts among the "
    "shared vocabulary), `concepts` (every concept of the norms as a span with its article, "
    "'A bear', 'An aardvark', 'Scissors') or a FILE of spans, one a line.",
)
ARTICLES = Param(
    "articles",
    None,
    kind="any",
    help="A concept,article CSV overriding the article tacit gives a concept's span (with "
    "templates in another language: the article of each concept, any one word).",
)


@dataclass(frozen=True)
class RetrieveOptions(Options):
    """The concept-retrieval probe's options."""

    max_props: int = MAX_PROPS.field()
    selection: Selection | None = SELECTION.field()
    order: Order | None = ORDER.field()
    category: Category | None = CATEGORY.field()
    ablation: Ablation | None = ABLATION.field()
    norms: NormSet | str | Path | None = NORMS.field()
    norms_format: str | None = NORMS_FORMAT.field()
    norms_columns: Mapping[str, str] | str | None = NORMS_COLUMNS.field()
    concepts: Sequence[str] | None = CONCEPTS.field()
    candidates: str | Path = CANDIDATES.field()
    span_scoring: SpanScoring = SPAN_SCORING.field()
    normalize: Normalize = NORMALIZE.field()
    token_scores: bool = TOKEN_SCORES.field()
    articles: str | Path | Mapping[str, str] | None = ARTICLES.field()
    templates: str | Path | TemplateSet = TEMPLATES.field()
    shots: int = SHOTS.field()
    suffix_top: int = SUFFIX_TOP.field()
    by: By = BY.field()
    guesses: int = GUESSES.field()
    samples: int = SAMPLES.field()
    temperature: float = TEMPERATURE.field()
    max_tokens: int = MAX_TOKENS.field()
