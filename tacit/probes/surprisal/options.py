"""The surprisal probe's options, declared once (tacit.core.params)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tacit.core.choices import PLL_METRICS, PllMetric
from tacit.core.errors import TacitError, shorten
from tacit.core.manifest import Manifest, ModelRecord
from tacit.core.params import Options, Param
from tacit.probes.manifest_keys import ScoringCounts

Unit = Literal["token", "word"]
UNITS: tuple[Unit, ...] = ("token", "word")


def _texts(value: Any, label: str) -> Any:
    """A file (a path), or the texts themselves (a list or tuple of texts, none blank)."""
    if isinstance(value, str | Path):
        return value
    if not isinstance(value, list | tuple) or not value:
        raise TacitError(f"{label} {shorten(repr(value))}: expected a file or a list of texts")
    for n, text in enumerate(value):
        if not isinstance(text, str) or not text.strip():
            raise TacitError(f"{label}[{n}] {shorten(repr(text))}: expected a text, not blank")
    return tuple(value)


TEXTS = Param(
    "texts",
    None,
    kind="any",
    check=_texts,
    positional=True,
    leading=True,
    help="The texts: a text file (one text a line), a CSV or JSON lines file with a `text` "
    "column (and an optional `id`), or in Python a list of texts.",
)
BY = Param(
    "by",
    "token",
    choices=UNITS,
    help="One row per token, or per word: whitespace-separated, its tokens' log-probabilities "
    "summed (minicons' word_score_tokenized with str.split).",
)
PLL = Param(
    "pll",
    "original",
    choices=PLL_METRICS,
    help="Masked models' pseudo-log-likelihood, as minicons names it: original (each token "
    "masked alone) or within_word_l2r (with the later tokens of its word masked too).",
)


class SurprisalManifest(Manifest, total=False):
    """What a surprisal run records beyond every run's keys."""

    texts: dict[str, Any]  # the texts' file (or a list), sha256, counts
    by: str  # rows by token or word
    pll: str  # masked models' pseudo-log-likelihood


class SurprisalModelRecord(ModelRecord, ScoringCounts, total=False):
    """What a surprisal run records of each model beyond the engine's and its family's keys."""

    unknown_tokens: int  # tokens scored as the tokenizer's unknown token


@dataclass(frozen=True)
class SurprisalOptions(Options):
    """The surprisal probe's options."""

    texts: str | Path | Sequence[str] | None = TEXTS.field()
    by: Unit = BY.field()
    pll: PllMetric = PLL.field()
