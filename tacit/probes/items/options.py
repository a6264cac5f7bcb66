"""The items probe's options, declared once (tacit.core.params)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.ask.options import (
    BY,
    MAX_TOKENS,
    NORMALIZE,
    SAMPLES,
    SPAN_SCORING,
    TEMPERATURE,
    TOKEN_SCORES,
    By,
)
from tacit.core.params import Options, Param
from tacit.probes.base import Metric
from tacit.probes.manifest_keys import RankedManifest
from tacit.templates.questions import QUESTIONS

if TYPE_CHECKING:
    from tacit.core.choices import Normalize, SpanScoring

ITEMS = Param(
    "items",
    None,
    kind="path",
    positional=True,
    leading=True,
    help="The items file: JSON lines or CSV, one cloze item a line (text with one [Y], its "
    "candidates, the answer or answers, optional group and id); a Hub dataset's file is "
    "hf://datasets/OWNER/NAME[@REVISION]/PATH.",
)
K = Param(
    "k",
    5,
    kind="int",
    minimum=1,
    help="Report P@k: the share of items with an answer among the k best candidates.",
)


# what an items run reports: of each item, whether its first answer is ranked first, and the
# reciprocal of its best answer's rank
ACCURACY = Metric(
    "accuracy", "accuracy", True, "accuracy_ci_low", "accuracy_ci_high", "n_items", of="correct"
)
MRR = Metric("mrr", "MRR", True, "mrr_ci_low", "mrr_ci_high", "n_items", of="reciprocal_rank")


class ItemsManifest(RankedManifest, total=False):
    """What an items run records beyond every run's keys and its candidates': the file."""

    items: dict[str, Any]  # the items file: path, name, sha256 (and its Hub source)
    generation: dict[str, Any]  # by generation: how the items were asked (tacit.ask.words)
    choice: dict[str, Any]  # by generation: how the options were ordered, answers unreadable


@dataclass(frozen=True)
class ItemsOptions(Options):
    """The items probe's options."""

    items: str | Path | None = ITEMS.field()
    k: int = K.field()
    span_scoring: SpanScoring = SPAN_SCORING.field()
    normalize: Normalize = NORMALIZE.field()
    token_scores: bool = TOKEN_SCORES.field()
    by: By = BY.field()
    samples: int = SAMPLES.field()
    temperature: float = TEMPERATURE.field()
    max_tokens: int = MAX_TOKENS.field()
    questions: str | Path = QUESTIONS.field()
