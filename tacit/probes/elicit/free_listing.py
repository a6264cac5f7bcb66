"""Free listing (`probe elicit --by generation --relation all`), the norming studies' own task:
each concept asked once for its properties of every kind (the `listing` question, in the
words of `--questions`), each answer matched against all of the concept's features with the
relation read from the answer (tacit.matching.feature_matcher), scored over all of them
(relation `all`) and, per relation of the features, over that relation's
(tacit.probes.elicit.generated.relation_scores).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tacit.ask.base import Asking, choose
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.probes.base import Plan, Probe
from tacit.probes.elicit.options import ALL

if TYPE_CHECKING:
    from tacit.ask.shots import Demonstrations
    from tacit.core.options import Planning
    from tacit.matching.match import Matcher
    from tacit.models.base import RunModel
    from tacit.norms import NormSet
    from tacit.probes.elicit.options import ElicitOptions

FREE_LISTING = ALL  # the relation a free listing is asked and scored as
ASKS = "listing"
NO_FEATURE = "no feature in the norms"


def check_free_listing(values: ElicitOptions) -> None:
    """A free listing is its own run, without a cloze's options."""
    from tacit.templates import DEFAULT

    relations = list(values.relations or [])
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


def plan_free_listing(
    probe: Probe, models: Sequence[RunModel], values: ElicitOptions, run: Planning
) -> Plan:
    """A prompt per concept with a feature in the norms (its text: the concept with its
    article, `a bear`), asked in words for its properties and matched against all of them,
    scored over all of them and per relation of its features."""
    import pandas as pd

    from tacit.probes.elicit.generated import relation_scores
    from tacit.probes.elicit.plans import Golds, State, elicitation_columns
    from tacit.probes.elicit.prompts import parse_span_gold, prompt_keys
    from tacit.probes.shared_options import (
        chosen_norms,
        limit_concepts,
        limit_reason,
        norms_record,
        nothing_left,
        requested_concepts,
    )
    from tacit.templates import load_templates

    listing = f"{option('--relation')} {FREE_LISTING}: a free listing of every property"
    ask = choose(values, probe.asks, probe.name, only="words", because=listing)
    check_free_listing(values)
    norms = chosen_norms(values)
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
    ask.prepare(models, ask.needs([], ""), run)
    shots = listing_shots(norms, values.shots, run.seed) if values.shots else None
    prompts, _ = ask.shown(prompts, shots)
    matchers = listing_matchers(norms, list(prompts["concept"]))
    asking = Asking(
        answers=lambda rows: [[c] for c in rows["concept"]],
        asks=ASKS,
        matchers=lambda rows: [matchers[(c, FREE_LISTING)] for c in rows["concept"]],
        keys=prompt_keys,
    )

    def further(rows: pd.DataFrame, tables: Mapping[str, pd.DataFrame]) -> dict[str, Any]:
        keys = ["model", *prompt_keys(rows)]
        return {"by_relation": relation_scores(rows, tables["answers"], norms, matchers, keys)}

    work = ask.work(prompts, asking, elicitation_columns(parse_span_gold, norms.table))
    golds = Golds(prompts, parse_span_gold, NO_FEATURE, further=further)
    templates = load_templates(values.templates)
    state = State(norms, [True], prompts, golds, templates, [FREE_LISTING], dropped, values.shots)
    return Plan(work, values, ask=ask, manifest={"norms": norms_record(norms)}, state=state)


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
    from tacit.ask.shots import Demonstrations, Shot, categories

    table = norms.table.assign(negative=-norms.table["pf"])
    ordered = table.sort_values(["concept", "negative", "phrase"], kind="stable")
    pool = [
        Shot(str(c), listed(str(c)), tuple(rows["phrase"]), tuple(rows["phrase"]))
        for c, rows in ordered.groupby("concept", sort=True)
    ]
    return Demonstrations(k, seed, {FREE_LISTING: pool}, categories(norms), lambda _: FREE_LISTING)
