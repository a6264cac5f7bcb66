"""Elicitation's options, declared once (tacit.core.params)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tacit.ask.options import (
    BY,
    GUESSES,
    JUDGE,
    JUDGE_FEATURES,
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
from tacit.core.params import Options, Param, Switch
from tacit.probes.shared_options import CONCEPTS, NORMS, NORMS_COLUMNS, NORMS_FORMAT
from tacit.templates import TEMPLATES
from tacit.templates.questions import QUESTIONS

if TYPE_CHECKING:
    from tacit.core.choices import Normalize, SpanScoring
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet

ALL = "all"  # the relation of rows over every relation: pooled, or a free listing's
RELATIONS_PARAM = Param(
    "relations",
    None,
    kind="list",
    flags=("--relation", "-r"),
    shown_default="every relation of the templates",
    help="Relation to ask about: one of the templates' (the paper's: is, is a, has, has a, "
    "made of). Repeatable. With --by generation, `all` is a free listing of every property "
    "(the norming task), scored per relation and overall.",
)
PREFIX = Param(
    "prefix",
    True,
    kind="bool",
    choices=(True, False, "both"),
    help="'Everyone knows that' before each prompt (a template's optional prefix, `{...}`): "
    "True, False, or `both` (the paper's Table 2 ablation in one run).",
    switches=(
        Switch("--no-prefix", False, "Drop 'Everyone knows that' (Table 2's ablation)."),
        Switch(
            "--prefix-ablation", "both", "Run with and without the prefix and print the changes."
        ),
    ),
)
CANDIDATE_SETS = ("vocab", "answers")  # what --candidates names besides a FILE
CANDIDATES = Param(
    "candidates",
    "vocab",
    kind="path",
    help="What answers are ranked among: `vocab` (the paper's: one-word answers among the "
    "shared vocabulary), `answers` (every answer people gave to the relation, of any length: "
    "'fur', 'four legs') or a FILE of spans, one a line.",
)


@dataclass(frozen=True)
class ElicitOptions(Options):
    """The property-elicitation probe's options."""

    relations: Sequence[str] | None = RELATIONS_PARAM.field()
    prefix: bool | str = PREFIX.field()
    norms: NormSet | str | Path | None = NORMS.field()
    norms_format: str | None = NORMS_FORMAT.field()
    norms_columns: Mapping[str, str] | str | None = NORMS_COLUMNS.field()
    concepts: Sequence[str] | None = CONCEPTS.field()
    candidates: str | Path = CANDIDATES.field()
    span_scoring: SpanScoring = SPAN_SCORING.field()
    normalize: Normalize = NORMALIZE.field()
    token_scores: bool = TOKEN_SCORES.field()
    templates: str | Path | TemplateSet = TEMPLATES.field()
    shots: int = SHOTS.field()
    suffix_top: int = SUFFIX_TOP.field()
    by: By = BY.field()
    guesses: int = GUESSES.field()
    samples: int = SAMPLES.field()
    temperature: float = TEMPERATURE.field()
    max_tokens: int = MAX_TOKENS.field()
    questions: str | Path = QUESTIONS.field()
    judge: str | None = JUDGE.field()
    judge_features: int = JUDGE_FEATURES.field()
