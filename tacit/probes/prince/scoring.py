"""Prince's prompts and their scoring: the examples of Prince (1978), as quoted by Weir et al.
(2020), Fig. 4, written here from the paper's text: a person's properties (is "person"
named?) and a country's (are they what the model says a country has?).

A causal model answers the country prompt (its blank ends the sentence) by its next-token
distribution; the person prompt's blank comes first, so each shared-vocabulary word is put in
it and its sentence scored (Scorer.score_words): ranks as P(word | the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from tacit.ask.base import Answered, Column
from tacit.ask.paraphrase import TOP1, paraphrased, with_items
from tacit.core.errors import TacitError
from tacit.templates import TemplateSet, load_templates

if TYPE_CHECKING:
    from tacit.vocab.shared import Vocabulary

# What Prince lists of a person, as one property of retrieval's templates ("A <mask> has
# parents, ..., and a job."), and the concept whose properties the `has` templates ask for
# ("Everyone knows that a country has <mask>.").
PERSON_PROPERTIES = "has parents, siblings, relatives, a home, a pet, a car, a spouse, and a job"
PERSON = "person"
COUNTRY = "country"
COUNTRY_PROPERTIES = (
    "leader",
    "duke",
    "borders",
    "president",
    "queen",
    "citizens",
    "land",
    "language",
    "history",
)
TOP_K = 10


def _ranks(answered: Answered) -> list[list[int]]:
    """Each prompt's answers' ranks."""
    ranks = answered["ranks"]
    return [ranks[i, : len(t.split())].tolist() for i, t in enumerate(answered.rows["target"])]


def _probability(answered: Answered) -> list[float]:
    """Each prompt's answers' probability, summed."""
    probs = answered["probs"]
    return [float(probs[i, : len(t.split())].sum()) for i, t in enumerate(answered.rows["target"])]


def _gold_ranks(answered: Answered) -> list[str]:
    """`word:rank ...` of each prompt's answers."""
    return [
        " ".join(f"{w}:{r}" for w, r in zip(t.split(), ranks))
        for t, ranks in zip(answered.rows["target"], _ranks(answered))
    ]


# prompts.csv after the prompt's columns: the best answer's rank, the answers' probability, AP
# of the answer set, each answer's rank, the top 10 (and each template's top word)
COLUMNS = (
    Column("rank", ("ranks",), lambda a: [min(r) for r in _ranks(a)]),
    Column("target_prob", ("probs",), _probability),
    Column("ap_vocab", ("ap",), lambda a: a["ap"].astype(float)),
    Column("gold_ranks", ("ranks",), _gold_ranks),
    Column.field("top10", "listed"),
    Column.field(TOP1, "best", when=paraphrased),
)


def prince_prompts(vocab: Vocabulary, templates: TemplateSet | None = None) -> pd.DataFrame:
    """Both directions, through every retrieval template (concept direction) and every `has`
    template (property direction; the paper's by default), with their answers restricted to
    the shared vocabulary."""
    templates = templates or load_templates()
    if PERSON not in vocab:
        raise TacitError(f"{PERSON!r} is not in the shared vocabulary: Prince's probe needs it")
    kept = [w for w in COUNTRY_PROPERTIES if w in vocab]
    missing = [w for w in COUNTRY_PROPERTIES if w not in vocab]
    if not kept:
        raise TacitError("none of Prince's country properties is in the shared vocabulary")
    rows = [
        (
            "concept",
            t.id,
            t.fill(properties=PERSON_PROPERTIES, blank=t.blank_text(False)),
            PERSON,
            "",
        )
        for t in templates.retrieval
    ]
    country = [
        (t, templates.concept_text(COUNTRY, t.concept)) for t in templates.for_relation("has")
    ]
    rows += [
        ("property", t.id, t.fill(concept=text), " ".join(kept), " ".join(missing))
        for t, text in country
    ]
    prompts = pd.DataFrame(
        rows, columns=["direction", "template", "prompt", "target", "not_in_vocab"]
    )
    return with_items(prompts, ["direction"])
