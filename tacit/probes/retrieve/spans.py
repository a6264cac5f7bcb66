"""Retrieval's candidate spans: every concept of the norms as a span in the form each template's
blank takes it (`[A Y]`: "A bear", "An aardvark", "Scissors"; `[a Y]`: "a bear"; `[Y]`:
"bear"), or a FILE of spans (every target must be one of them). A span some model's tokenizer
does not read whole is refused in a FILE, and left out among the concepts (its concept dropped,
with the reason)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.ask.candidates import (
    Candidates,
    read_candidates,
    refuse_unreadable,
    unreadable_spans,
)
from tacit.ask.shots import in_context
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.probes.retrieve.options import CANDIDATE_SETS
from tacit.ranking import CandidateSet, SpanCandidates, span_alone

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.models.base import RunModel
    from tacit.norms import NormSet
    from tacit.probes.retrieve.options import RetrieveOptions
    from tacit.probes.retrieve.scoring import Targets
    from tacit.templates import TemplateSet

# a candidate set's name per form of the blank, where a run's templates take several forms
SET_NAMES = {"A Y": "A_Y", "a Y": "a_Y", "Y": "Y"}


def articles_table(value: Any, templates: TemplateSet) -> Mapping[str, str] | None:
    """`--articles`: a concept,article CSV (any one-word article outside English) or a mapping."""
    from tacit.lexicon import read_articles

    if isinstance(value, str | os.PathLike):
        return read_articles(Path(value), any_article=not templates.settings.english)
    return value


def span_sets(
    models: Sequence[RunModel],
    norms: NormSet,
    templates: TemplateSet,
    values: RetrieveOptions,
    targets: Sequence[str],
    run: RunOptions,
    contexts: Mapping[str, str] | None = None,
) -> tuple[Candidates, Targets, dict[str, str]]:
    """The run's candidates, per form of the blank the spans ranked and each concept's, and
    the concepts left out because some model's tokenizer does not read their span whole (why).

    The concepts' sets list the same concepts in the same order in every form (concepts that
    read the same in every form share one candidate: "bat (animal)" and "bat (baseball)"), so
    that an ensemble of templates is taken candidate by candidate. With `--shots`, `contexts`
    gives each prompt text's demonstrations, which `--normalize pmi`'s baseline is led by too."""
    from tacit.probes.retrieve.scoring import Targets

    articles = articles_table(values.articles, templates)
    forms = {t.id: t.blank for t in templates.retrieval}
    distinct = list(dict.fromkeys(forms.values()))
    phrase = {
        form: {c: templates.blank_phrase(c, form, articles) for c in norms.concepts}
        for form in distinct
    }
    groups = list(dict.fromkeys(tuple(phrase[f][c] for f in distinct) for c in norms.concepts))
    given = values.candidates
    names = {form: "all" if len(distinct) == 1 else SET_NAMES[form] for form in distinct}
    if given == "concepts":
        sets = {
            names[f]: CandidateSet("concepts", [g[i] for g in groups])
            for i, f in enumerate(distinct)
        }
    elif len(distinct) > 1:
        raise TacitError(
            f"{option('--candidates')} {given}: the templates put the concept in the blank in "
            f"{len(distinct)} forms ({', '.join(f'[{f}]' for f in distinct)}), and one file of "
            "spans holds one of them: use --candidates concepts, or templates of one form"
        )
    else:
        sets = {"all": read_candidates(given, CANDIDATE_SETS)}
    every = list(dict.fromkeys(span for chosen in sets.values() for span in chosen.spans))
    problems = unreadable_spans(every, models)
    unread: dict[str, str] = {}
    if given != "concepts":
        refuse_unreadable(sets["all"], problems)
    elif problems:  # a concept is left out in every form if any of its forms is unreadable
        unread = {
            c: problems[phrase[f][c]] for c in targets for f in distinct if phrase[f][c] in problems
        }
        readable = [g for g in groups if not any(span in problems for span in g)]
        sets = {
            names[f]: CandidateSet("concepts", [g[i] for g in readable])
            for i, f in enumerate(distinct)
        }
        targets = [c for c in targets if c not in unread]
        if not targets:
            raise TacitError("no concept is left to probe: no model reads any whole")
    for form in distinct:
        wanted = {phrase[form][c] for c in targets}
        missing = sorted(wanted - set(sets[names[form]].spans))
        if missing:
            raise TacitError(
                f"{option('--candidates')} {given}: every target must be a candidate; "
                f"{len(missing)} are not (e.g. {', '.join(repr(m) for m in missing[:3])})"
            )
    spans = SpanCandidates(
        sets,
        values.span_scoring,
        values.normalize,
        in_context(span_alone, contexts or {}),
        tokens=values.token_scores,
    )
    candidates = Candidates(spans=spans)
    span_of = {names[form]: phrase[form] for form in distinct}
    first = next(iter(sets.values())).index()
    position = {c: first[span_of[next(iter(sets))][c]] for c in targets}
    several = {t: names[f] for t, f in forms.items()} if len(distinct) > 1 else None
    return candidates, Targets(spans, position, several, span_of), unread
