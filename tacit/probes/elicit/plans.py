"""What an elicitation run plans, by scoring or by generation: its state between plan and
finish, the prompts asked and the concepts left out, and what the manifest counts of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.options import RunOptions
    from tacit.matching.match import Matcher
    from tacit.models.answers import Sampling
    from tacit.probes.elicit.options import ElicitOptions
    from tacit.probes.shots import Demonstrations
    from tacit.ranking.candidates import Candidates
    from tacit.templates import TemplateSet
    from tacit.templates.questions import Questions


@dataclass
class State:
    norms: Any
    prefixes: list[bool]
    prompts: pd.DataFrame
    candidates: Candidates | None  # None: by generation
    left_out: pd.DataFrame  # features (vocabulary) or answers (spans) left out, per relation
    templates: TemplateSet
    relations: list[str]
    sensible: dict[str, Any] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)  # answers no model reads whole, why
    dropped: pd.DataFrame | None = None  # concept, relation, reason: asked for, not asked
    # by generation: how the models were asked, and a matcher of each concept's features
    asked: tuple[Sampling, dict[tuple[str, str], Matcher]] | None = None
    shots: int = 0  # demonstrations before each prompt (--shots)
    # by generation: what is asked (`answers`: a relation's; `listing`: a free listing) and
    # in which words (--questions)
    asks: str = "answers"
    questions: Questions | None = None


def asked_prompts(
    prompts: pd.DataFrame, norms: Any, values: ElicitOptions, run: RunOptions, why: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The prompts `--limit` keeps, and each concept asked for (every concept of the norms
    without `--concepts`) that gets no prompt for a relation and why (`why`: none of its
    answers kept); a run left with nothing to ask fails here, naming the relations."""
    import pandas as pd

    from tacit.probes.elicit.prompts import asking_about, unasked
    from tacit.probes.shared_options import (
        limit_concepts,
        limit_reason,
        nothing_left,
        requested_concepts,
    )

    relations = values.relations or []
    concepts = requested_concepts(norms, values.concepts)
    dropped = unasked(norms, relations, concepts, prompts, why)
    if prompts.empty:
        given = values.concepts is not None
        raise nothing_left(dropped, asking_about(relations), given=given)
    kept, left_out = limit_concepts(prompts, run)
    if left_out:
        limited = prompts[prompts["concept"].isin(left_out)][["concept", "relation"]]
        limited = limited.drop_duplicates().assign(reason=limit_reason(run))
        dropped = pd.concat([dropped, limited], ignore_index=True)
    return kept, dropped


def with_shots(
    prompts: pd.DataFrame,
    norms: Any,
    values: ElicitOptions,
    prefixes: list[bool],
    run: RunOptions,
    templates: TemplateSet,
    *,
    scoring: bool = True,
) -> tuple[pd.DataFrame, dict[str, str], Demonstrations | None]:
    """The prompts with their demonstrations (`--shots`: tacit.probes.shots; by scoring, in
    the text scored), each prompt text's context, and the demonstrations (None without)."""
    if values.shots == 0:
        return prompts, {}, None
    from tacit.probes.elicit.prompts import demonstrations

    shots = demonstrations(
        norms, values.relations or [], prefixes, templates, k=values.shots, seed=run.seed
    )
    prompts, contexts = shots.apply(prompts, scoring=scoring)
    return prompts, contexts, shots


def prompt_counts(state: State) -> dict[str, Any]:
    """The prompts per model and per relation, and the concepts left out of a relation
    by reason."""
    from tacit.probes.elicit.prompts import dropped_by_reason
    from tacit.probes.shots import shots_counts

    per_model = state.prompts
    questions = per_model.drop_duplicates(["relation", "prefix", "concept"])
    counts = questions[questions.prefix == state.prefixes[0]].groupby("relation").size()
    return {
        "prompts_per_model": len(per_model),
        "prompts_by_relation": {r: int(counts.get(r, 0)) for r in state.relations},
        "concepts_dropped_by_reason": dropped_by_reason(state.dropped),
        **shots_counts(per_model, state.shots),
    }
