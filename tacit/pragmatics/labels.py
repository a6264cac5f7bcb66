"""NLI labels: one spelling for the three classes, whatever a file or a model calls them."""

from __future__ import annotations

from tacit.core.errors import TacitError

ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"
LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION)  # the order of p_* columns and of logits
NON_ENTAILMENT = "non-entailment"  # IMPLI's binary gold: neutral and contradiction together
PROB_COLUMNS = tuple(f"p_{label}" for label in LABELS)

_SPELLINGS = {
    "e": ENTAILMENT,
    "entailment": ENTAILMENT,
    "entails": ENTAILMENT,
    "n": NEUTRAL,
    "neutral": NEUTRAL,
    "c": CONTRADICTION,
    "contradiction": CONTRADICTION,
    "contradicts": CONTRADICTION,
}


def normalize_label(value: object, where: str) -> str:
    """`E`, `e`, `entailment`, `ENTAILMENT` ... -> `entailment`; anything else is an error at
    `where` (file:line, or the model whose config names it)."""
    label = _SPELLINGS.get(str(value).strip().lower())
    if label is None:
        raise TacitError(
            f"{where}: unknown NLI label {value!r}; expected entailment, neutral or contradiction"
            " (or E, N, C)"
        )
    return label


def binary(label: str) -> str:
    """Collapse neutral and contradiction into non-entailment (IMPLI's binary task)."""
    return ENTAILMENT if label == ENTAILMENT else NON_ENTAILMENT
