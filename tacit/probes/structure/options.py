"""The structure probe's options and what it records, declared once (tacit.core.params)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.ask.options import (
    BY,
    GUESSES,
    MAX_TOKENS,
    NORMALIZE,
    SAMPLES,
    SPAN_SCORING,
    SUFFIX_TOP,
    TEMPERATURE,
    TOKEN_SCORES,
    By,
)
from tacit.core.params import Options, Param
from tacit.probes.base import Metric
from tacit.probes.elicit.options import CANDIDATES, RELATIONS_PARAM
from tacit.probes.manifest_keys import RankedOrAskedManifest
from tacit.probes.shared_options import CONCEPTS, NORMS, NORMS_COLUMNS, NORMS_FORMAT
from tacit.templates import TEMPLATES
from tacit.templates.questions import QUESTIONS

if TYPE_CHECKING:
    from tacit.core.choices import Normalize, SpanScoring
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet

SIMILARITIES = ("cosine", "correlation", "jaccard")
# no rank is read, only every feature word's score (always exact): a causal LM's text after
# the blank needs scoring for those words alone
STRUCTURE_SUFFIX_TOP = replace(
    SUFFIX_TOP,
    default=1,
    help="A causal LM over the shared vocabulary: the text after the blank is scored for every "
    "feature word (their scores are exact) and for the K words most likely before it besides; "
    "the probe reads no rank, so 1 is enough (0: every word's, as the ranking probes' exact "
    "ranks need).",
)

AGAINST = Param(
    "against",
    None,
    kind="any",
    check=NORMS.check,
    help="A second norm set to compare --norms against, with no model: the reference, whose "
    "people's ceiling is drawn (`--norms mcrae.xlsx --against norms.dat`: McRae against "
    "CSLB on their shared concepts). A file, a Hub dataset's file or an installed name.",
)
CATEGORIES = Param(
    "categories",
    None,
    kind="path",
    help="A concept table with `concept` and `category` columns (CSLB's concepts.dat): the "
    "reference's categories, for the analyses within categories and the clustering. Not "
    "given: the norms' domains where they have them.",
)
PARTICIPANTS = Param(
    "participants",
    None,
    kind="int",
    minimum=1,
    help="With --against: how many people described each concept of --norms where its file "
    "has no participant lists (McRae: 30), so its values are proportions as CSLB's are.",
)
WRITE_NORMS = Param(
    "write_norms",
    None,
    kind="path",
    help="With --by generation: also write the model's feature listing here in CSLB's columns "
    "(each draw a participant), which --norms reads back as any norm set.",
)
SIMILARITY = Param(
    "similarity",
    None,
    choices=SIMILARITIES,
    shown_default="cosine; by scoring, correlation (log-probabilities are negative)",
    help="Concept-by-concept similarity of the feature vectors: `cosine`, `correlation` "
    "(Pearson's r of the two rows) or `jaccard` (of the features present).",
)
VERIFICATIONS = ("scores", "yes-no")
VERIFICATION = Param(
    "verification",
    "scores",
    choices=VERIFICATIONS,
    help="How features are verified: `scores` (the matrix's own values: by scoring, the "
    "log-probabilities; by generation, the share of draws listing it) or `yes-no` (with --by "
    "generation: each verification item asked `Is it true that a bear has fur?`, --samples "
    "draws, P(yes) the share saying yes; calibrated: Brier, ECE, a reliability diagram; no "
    "matrix, so no RSA).",
)
RESAMPLES = Param(
    "resamples",
    1000,
    kind="int",
    minimum=1,
    help="Bootstrap resamples of the concepts for each interval.",
)
PERMUTATIONS = Param(
    "permutations",
    1000,
    kind="int",
    minimum=1,
    help="Permutations of the concepts for chance and the Mantel test.",
)
SPLITS = Param(
    "splits",
    100,
    kind="int",
    minimum=1,
    help="Random split halves of the participants for the people's ceiling.",
)


@dataclass(frozen=True)
class StructureOptions(Options):
    """The structure probe's options."""

    norms: NormSet | str | Path | None = NORMS.field()
    against: NormSet | str | Path | None = AGAINST.field()
    norms_format: str | None = NORMS_FORMAT.field()
    norms_columns: Mapping[str, str] | str | None = NORMS_COLUMNS.field()
    concepts: Sequence[str] | None = CONCEPTS.field()
    categories: str | Path | None = CATEGORIES.field()
    participants: int | None = PARTICIPANTS.field()
    relations: Sequence[str] | None = RELATIONS_PARAM.field()
    candidates: str | Path = CANDIDATES.field()
    span_scoring: SpanScoring = SPAN_SCORING.field()
    normalize: Normalize = NORMALIZE.field()
    token_scores: bool = TOKEN_SCORES.field()
    templates: str | Path | TemplateSet = TEMPLATES.field()
    suffix_top: int = STRUCTURE_SUFFIX_TOP.field()
    by: By = BY.field()
    guesses: int = GUESSES.field()
    samples: int = SAMPLES.field()
    temperature: float = TEMPERATURE.field()
    max_tokens: int = MAX_TOKENS.field()
    questions: str | Path = QUESTIONS.field()
    write_norms: str | Path | None = WRITE_NORMS.field()
    similarity: str | None = SIMILARITY.field()
    verification: str = VERIFICATION.field()
    resamples: int = RESAMPLES.field()
    permutations: int = PERMUTATIONS.field()
    splits: int = SPLITS.field()


# the primary metric: Spearman's rho of the two similarity structures over every concept
RSA = Metric(
    "rsa", "RSA (Spearman)", True, "rsa_ci_low", "rsa_ci_high", "n_concepts", aggregation="corpus"
)


# --verification yes-no's primary metric: the AUC against features of other categories
AUC_OTHER = Metric(
    "auc_other_categories",
    "AUC (other categories)",
    True,
    "auc_other_categories_ci_low",
    "auc_other_categories_ci_high",
    "n_concepts",
    chance="auc_other_categories_chance",
    aggregation="corpus",
)


class StructureManifest(RankedOrAskedManifest, total=False):
    """What a structure run records beyond every run's keys and its Ask's."""

    against: dict[str, Any]  # with --against: the reference norm set (a NormsRecord)
    structure: dict[str, Any]  # per matrix compared: the analyses' options, shapes, seconds
    model_norms: dict[str, Any]  # by generation: per model, its norms written, what was left out
    yes_no: dict[str, Any]  # --verification yes-no: the question, items, what was left out
