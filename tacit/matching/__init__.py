"""Reading what a model says: completions parsed into answers (tacit.matching.parse), one
normaliser for the model's answers and the norms' names (tacit.matching.normal), answers
matched to the norms by recorded rules (tacit.matching.match), and the answers frame that
keeps every raw answer beside its match (tacit.matching.read). Plain Python and pandas, no
model: the metrics of probing by generation read the frame (tacit.ranking.generated,
tacit.probes.elicit.generated)."""

from __future__ import annotations

from tacit.matching.match import (
    EXACT,
    HEAD,
    Match,
    Matcher,
    Target,
    concept_matcher,
    concept_target,
    feature_matcher,
)
from tacit.matching.normal import Normaliser
from tacit.matching.parse import EMPTY, OK, REFUSAL, REFUSALS, TRUNCATED, Parsed, parse_completion
from tacit.matching.read import (
    ANSWER_COLUMNS,
    DUPLICATE,
    ROW_STATUSES,
    Completion,
    answers_by_prompt,
    answers_frame,
    read_completion,
)

__all__ = [
    "record",
    "ANSWER_COLUMNS",
    "DUPLICATE",
    "ROW_STATUSES",
    "Completion",
    "answers_by_prompt",
    "answers_frame",
    "read_completion",
    "EMPTY",
    "EXACT",
    "HEAD",
    "OK",
    "REFUSAL",
    "REFUSALS",
    "TRUNCATED",
    "Match",
    "Matcher",
    "Normaliser",
    "Parsed",
    "Target",
    "concept_matcher",
    "concept_target",
    "feature_matcher",
    "parse_completion",
]


def record(normaliser: Normaliser | None = None) -> dict[str, object]:
    """How answers were read, as the manifest records it: the normaliser (lemmatiser and its
    version, language, articles), the match rules in order, the negations that stop the
    `head` rule, the words that end a phrase's head, the hedges dropped around a stated
    relation, and the refusal phrases.

    Examples:
        >>> record()["rules"], record()["normaliser"]["lang"]
        (['exact', 'head'], 'en')
    """
    from tacit.matching.match import HEDGES, NEGATIONS, POST_MODIFIERS, RULES

    return {
        "normaliser": (normaliser or Normaliser()).record(),
        "rules": list(RULES),
        "negations": sorted(NEGATIONS),
        "head_ends_before": sorted(POST_MODIFIERS),
        "hedges": sorted(HEDGES),
        "refusals": list(REFUSALS),
    }
