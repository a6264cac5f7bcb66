"""Prince's prompts and their scoring: the examples of Prince (1978), as quoted by Weir et al.
(2020), Fig. 4.

The data are written here from the paper's text: the properties Prince lists for a person
(concept direction: is "person" named?) and for a country (property direction: are her
properties what the model says a country has?).

A causal model answers the country prompt (its blank ends the sentence) by its next-token
distribution; the person prompt's blank comes first, so every shared-vocabulary word is put in
it and its sentence scored: ranks as P(word | the rest), probabilities among the shared
vocabulary (Scorer.score_words).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from tacit.ask.paraphrase import (
    ITEM,
    TEMPLATE,
    TOP1,
    ensemble_frame,
    item_numbers,
    paraphrased,
    with_items,
)
from tacit.core.errors import TacitError
from tacit.models.base import VOCAB_ANYWHERE, Needs
from tacit.probes.base import Scored
from tacit.ranking import Question, SharedVocabulary, rank
from tacit.templates import TemplateSet, load_templates

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer
    from tacit.ranking import Ranking
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
# the shared vocabulary at either prompt's blank: read where it is, or (a causal model, for the
# person prompt) by putting each word in it
WORD_NEEDS = Needs(
    (frozenset({VOCAB_ANYWHERE}), frozenset({"vocab", "words"})),
    asks="the shared vocabulary at a blank anywhere in a sentence",
)
COLUMNS = [
    "model",
    "direction",
    "prompt",
    "target",
    "not_in_vocab",
    "rank",
    "target_prob",
    "ap_vocab",
    "gold_ranks",
    "top10",
]


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


def score_prince(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    *,
    progress: bool | tqdm = True,
    offset: int = 0,
) -> Scored:
    """Rank and probability of each answer, AP of the answer set, and the top 10 words (a
    causal model reads the person prompt's blank, which starts the sentence, by putting each
    word in it: see the module docstring), by the ranking layer in one call; with several
    templates, the ensemble of each direction's too (indexed from `offset`); and the work
    counted while scoring, near ties settled as at batch size 1 (tacit.ranking.ties)."""
    answers = [[vocab.index(w) for w in target.split()] for target in prompts["target"]]
    question = Question(list(prompts["prompt"]), answers, TOP_K, item_numbers(prompts))
    ranking = rank(scorer, question, SharedVocabulary(vocab, in_place=True), progress=progress)
    tables = [_table(prompts, scorer, ranking)]
    if ranking.ensemble is not None:
        tables.append(_table(ensemble_frame(prompts, offset), scorer, ranking.ensemble))
    return Scored(pd.concat(tables), ranking.counts)


def _table(prompts: pd.DataFrame, scorer: Scorer, ranking: Ranking) -> pd.DataFrame:
    answers = [target.split() for target in prompts["target"]]
    table = prompts.copy()
    table.insert(0, "model", scorer.name)
    ranks = [ranking.rank[i, : len(a)].tolist() for i, a in enumerate(answers)]
    table["rank"] = [min(r) for r in ranks]
    table["target_prob"] = [float(ranking.prob[i, : len(a)].sum()) for i, a in enumerate(answers)]
    table["ap_vocab"] = ranking.ap.astype(float)
    table["gold_ranks"] = [
        " ".join(f"{w}:{r}" for w, r in zip(a, rank)) for a, rank in zip(answers, ranks)
    ]
    table["top10"] = ranking.listed
    if paraphrased(prompts):
        table[TOP1] = ranking.best
        return table[[*COLUMNS[:2], ITEM, TEMPLATE, *COLUMNS[2:], TOP1]]
    return table[COLUMNS]
