"""Free listing (`probe elicit --by generation --relation all`), the norming studies' own task:
each concept asked once for its properties of every kind (the `listing` question, in the
words of `--questions`), each answer matched against all of the concept's features with the
relation read from the answer (tacit.matching.feature_matcher), scored over all of them
(relation `all`) and, per relation of the features, over that relation's
(tacit.probes.elicit.generated.relation_scores).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.probes.base import Plan, Work
from tacit.probes.elicit.summary import ALL

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.matching.match import Matcher
    from tacit.norms import NormSet
    from tacit.probes.elicit.options import ElicitOptions
    from tacit.probes.shots import Demonstrations

FREE_LISTING = ALL  # the relation a free listing is asked and scored as
ASKS = "listing"
NO_FEATURE = "no feature in the norms"


def check_free_listing(values: ElicitOptions) -> None:
    """A free listing is its own run, by generation, without a cloze's options."""
    from tacit.templates import DEFAULT

    relations = list(values.relations or [])
    if values.by != "generation":
        raise TacitError(
            f"{option('--relation')} {FREE_LISTING}: a free listing of every property is "
            f"asked in words: add {option('--by')} generation"
        )
    if relations != [FREE_LISTING]:
        raise TacitError(
            f"{option('--relation')} {FREE_LISTING}: a free listing is its own run; give it "
            "alone, without other relations"
        )
    if values.prefix is not True or values.templates != DEFAULT:
        prefix = f"{option('--prefix')} {values.prefix}"
        flag = f"{option('--templates')} {values.templates}" if values.prefix is True else prefix
        raise TacitError(
            f"{option('--relation')} {FREE_LISTING}: {flag} sets a cloze prompt; a free "
            f"listing asks the `{ASKS}` question ({option('--questions')} sets its words)"
        )


def plan_free_listing(norms: NormSet, values: ElicitOptions, run: RunOptions) -> Plan:
    """A prompt per concept with a feature in the norms (its text: the concept with its
    article, `a bear`), asked for its properties and matched against all of them."""
    import pandas as pd

    from tacit.models.base import Needs
    from tacit.probes.asking import sampling_of
    from tacit.probes.elicit.generation import score_listings
    from tacit.probes.elicit.plans import State
    from tacit.probes.shared_options import (
        limit_concepts,
        limit_reason,
        norms_record,
        nothing_left,
        requested_concepts,
    )
    from tacit.templates import load_templates
    from tacit.templates.questions import load_questions

    check_free_listing(values)
    concepts = requested_concepts(norms, values.concepts)
    having = set(norms.table["concept"])
    asked = [c for c in concepts if c in having]
    dropped = pd.DataFrame(
        [(c, FREE_LISTING, NO_FEATURE) for c in concepts if c not in having],
        columns=["concept", "relation", "reason"],
    )
    prompts = pd.DataFrame(
        {
            "relation": FREE_LISTING,
            "prefix": True,
            "concept": asked,
            "prompt": [listed(c) for c in asked],
        }
    )
    if prompts.empty:
        raise nothing_left(dropped, "list the properties of", given=values.concepts is not None)
    prompts, left_out = limit_concepts(prompts, run)
    if left_out:
        limited = pd.DataFrame({"concept": left_out, "relation": FREE_LISTING})
        dropped = pd.concat([dropped, limited.assign(reason=limit_reason(run))], ignore_index=True)
    shots = listing_shots(norms, values.shots, run.seed) if values.shots else None
    if shots is not None:
        prompts, _ = shots.apply(prompts, scoring=False)
    sampling = sampling_of(values, run.seed)
    matchers = listing_matchers(norms, list(prompts["concept"]))
    questions = load_questions(values.questions)
    features = norms.table
    work = Work(
        prompts,
        "prompt",
        lambda scorer, rows, bar: score_listings(
            rows,
            scorer,
            sampling=sampling,
            matchers=matchers,
            features=features,
            guesses=values.guesses,
            progress=bar,
            shots=shots,
            asks=ASKS,
            questions=questions,
        ),
        needs=Needs.of("generate"),
        sampling=sampling,
    )
    state = State(
        norms,
        [True],
        prompts,
        None,
        pd.DataFrame(),
        load_templates(values.templates),
        [FREE_LISTING],
        dropped=dropped,
        asked=(sampling, matchers),
        shots=values.shots,
        asks=ASKS,
        questions=questions,
    )
    return Plan(work, values, None, manifest={"norms": norms_record(norms)}, state=state)


def listed(concept: str) -> str:
    """How a free listing names its concept: with its article, and its sense label where it
    has one, as Hansen & Hebart asked (`a bat (animal)`), so that two senses are two
    questions.

    Examples:
        >>> listed("bear"), listed("bat_(animal)"), listed("coffee_machine")
        ('a bear', 'a bat (animal)', 'a coffee machine')
    """
    from tacit.lexicon import noun_phrase
    from tacit.matching.match import concept_target

    sense = concept_target(concept).sense
    return noun_phrase(concept) + (f" ({sense})" if sense else "")


def listing_matchers(norms: NormSet, concepts: Sequence[str]) -> dict[tuple[str, str], Matcher]:
    """Per concept, a matcher of all of its features, each with its relation, its phrase and
    the norms' other wordings of it, the concept's echo cut (Matcher.about)."""
    from tacit.matching import feature_matcher

    matchers = {}
    for concept in concepts:
        rows = norms.features_of(concept)
        matchers[(concept, FREE_LISTING)] = feature_matcher(
            list(rows["feature"]),
            list(rows["answer"]),
            list(rows["relation"]),
            phrases=list(rows["phrase"]),
            alternatives=norms.alternatives_of(rows),
            about=concept,
        )
    return matchers


def listing_shots(norms: NormSet, k: int, seed: int) -> Demonstrations:
    """Free listing's demonstrations (`--shots K`): other concepts asked the same question,
    each answered with its features' phrases by production frequency (the Hansen & Hebart
    priming: other CSLB concepts' norms)."""
    from tacit.probes.shots import Demonstrations, Shot, categories

    table = norms.table.assign(negative=-norms.table["pf"])
    ordered = table.sort_values(["concept", "negative", "phrase"], kind="stable")
    pool = [
        Shot(str(c), listed(str(c)), tuple(rows["phrase"]), tuple(rows["phrase"]))
        for c, rows in ordered.groupby("concept", sort=True)
    ]
    return Demonstrations(k, seed, {FREE_LISTING: pool}, categories(norms), lambda _: FREE_LISTING)
