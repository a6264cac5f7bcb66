"""What an elicitation run plans: its state between plan and finish, its gold answers in the
form its Ask's blank holds them, the prompts asked and the concepts left out, and what the
manifest counts of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.ask.base import Column
from tacit.probes.elicit.prompts import (
    NO_CANDIDATE,
    NO_WORD_IN_VOCABULARY,
    PAPER_PROMPTS,
    asking_about,
    build_elicitation_prompts,
    build_span_prompts,
    dropped_by_reason,
    gold_answers,
    parse_gold,
    parse_span_gold,
    span_golds,
    unasked,
)
from tacit.probes.shared_options import (
    limit_concepts,
    limit_reason,
    nothing_left,
    requested_concepts,
)

if TYPE_CHECKING:
    from tacit.ask.base import Ask
    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.probes.elicit.options import ElicitOptions
    from tacit.templates import TemplateSet


@dataclass
class Golds:
    """A run's gold answers as its Ask's blank holds them, and what was left out of them.

    prompts: the prompts built (one per relation, prefix, concept and template).
    parse: a prompt's `gold` -> its answers with their production frequencies.
    sensible: relation -> every gold answer of that relation across concepts (ap_sens).
    extra: further tables of what was left out (excluded.csv, answers_left_out.csv).
    counts: the manifest's counts of them.
    further: (the rows, the Ask's tables) -> further rows scored, by table, summarised too.
    """

    prompts: pd.DataFrame
    parse: Callable[[str], list[tuple[str, Any]]]
    why: str  # why a concept with answers to a relation gets no prompt for it
    sensible: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    counts: Callable[[Manifest], dict[str, Any]] = lambda manifest: {}
    # (the rows, the Ask's tables) -> further rows scored, by table (a free listing's per
    # relation: by_relation.csv), summarised with the rows
    further: Callable[[pd.DataFrame, Mapping[str, pd.DataFrame]], dict[str, pd.DataFrame]] = (
        lambda rows, tables: {}
    )


def word_golds(
    norms: Any,
    ask: Ask,
    relations: list[str],
    prefixes: list[bool],
    values: ElicitOptions,
    templates: TemplateSet,
) -> Golds:
    """Each relation's one-word answers the Ask can rank (the shared vocabulary's)."""
    golds = gold_answers(norms, ask, relations)
    prompts = build_elicitation_prompts(
        golds.answers, relations, prefixes, values.concepts, templates=templates
    )
    answers = golds.answers
    sensible = {
        r: sorted(set(words))
        for r in relations
        if len(words := answers.loc[answers.relation == r, "word"])
    }

    def counts(manifest: Manifest) -> dict[str, Any]:
        from tacit.probes.elicit.report import paper_norms

        paper = (
            {
                "paper_prompts_by_relation": {
                    r: PAPER_PROMPTS[r] for r in relations if r in PAPER_PROMPTS
                }
            }
            if paper_norms(manifest)
            else {}
        )
        return {
            **paper,
            "sensible_vocabulary_by_relation": {r: len(v) for r, v in sensible.items()},
            "features_excluded": golds.excluded.to_dict("records"),
        }

    return Golds(
        prompts, parse_gold, NO_WORD_IN_VOCABULARY, sensible, {"excluded": golds.excluded}, counts
    )


def phrase_golds(
    norms: Any,
    ask: Ask,
    relations: list[str],
    prefixes: list[bool],
    values: ElicitOptions,
    templates: TemplateSet,
) -> Golds:
    """Each relation's answers of any length the Ask can rank: where it ranks candidate sets,
    every answer people gave to the relation (`answers`) or a FILE's, less what no model reads
    whole (counted); asked in words, every answer."""
    gold, left_out, unread = span_golds(norms, relations, ask)
    prompts = build_span_prompts(gold, relations, prefixes, values.concepts, templates)
    sensible = {r: sorted(set(gold.loc[gold["relation"] == r, "span"])) for r in relations}
    extra = {"answers_left_out": left_out} if left_out is not None else {}

    def counts(manifest: Manifest) -> dict[str, Any]:
        if left_out is None:
            return {}
        return {
            "answers_not_candidates": left_out.to_dict("records"),
            "answers_not_read_whole": unread,
        }

    return Golds(prompts, parse_span_gold, NO_CANDIDATE, sensible, extra, counts)


# the gold answers of a run, by the form its Ask's blank holds them in (Ask.form)
GOLDS = {"word": word_golds, "phrase": phrase_golds}


@dataclass
class State:
    norms: Any
    prefixes: list[bool]
    prompts: pd.DataFrame
    golds: Golds
    templates: TemplateSet
    relations: list[str]
    dropped: pd.DataFrame  # concept, relation, reason: asked for, not asked
    shots: int = 0  # demonstrations before each prompt (--shots)


def asked_prompts(
    prompts: pd.DataFrame, norms: Any, values: ElicitOptions, run: Planning, why: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The prompts `--limit` keeps, and each concept asked for (every concept of the norms
    without `--concepts`) that gets no prompt for a relation and why (`why`: none of its
    answers kept); a run left with nothing to ask fails here, naming the relations."""
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


NO_COMPLETION = "no completion from the model (a recorded model: none recorded for it)"


def answered(rows: pd.DataFrame, dropped: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of prompts a model gave a completion for (asked in words, where the rows
    count the draws: a recorded model may have none), and `dropped` with the others
    (`concept, relation, reason`), the model named in the reason."""
    if "n_draws" not in rows:  # ranked, not drawn: every prompt has its answer
        return rows, dropped
    none = rows["n_draws"] == 0
    left = rows[none]
    unanswered = pd.DataFrame(
        {
            "concept": left["concept"],
            "relation": left["relation"],
            "reason": [f"{NO_COMPLETION}: {m}" for m in left["model"]],
        }
    ).drop_duplicates()
    return rows[~none].reset_index(drop=True), pd.concat([dropped, unanswered], ignore_index=True)


def prompt_counts(state: State) -> dict[str, Any]:
    """The prompts per model and per relation, and the concepts left out of a relation
    by reason."""
    from tacit.ask.shots import shots_counts

    per_model = state.prompts
    questions = per_model.drop_duplicates(["relation", "prefix", "concept"])
    counts = questions[questions.prefix == state.prefixes[0]].groupby("relation").size()
    return {
        "prompts_per_model": len(per_model),
        "prompts_by_relation": {r: int(counts.get(r, 0)) for r in state.relations},
        "concepts_dropped_by_reason": dropped_by_reason(state.dropped),
        **shots_counts(per_model, state.shots),
    }


def spearman(parse: Callable[[str], Sequence[tuple[str, Any]]]) -> Callable[[Any], list[float]]:
    """Each row's Spearman's rho between its gold answers' production frequencies and the
    scores they are ranked by (`parse`: a row's `gold` -> its answers and their pf)."""
    from tacit.core.metrics import rank_correlation

    def of(answered: Any) -> list[float]:
        scores = answered["scores"]
        return [
            rank_correlation([pf for _, pf in gold], scores[row, : len(gold)])
            for row, gold in enumerate(parse(g) for g in answered.rows["gold"])
        ]

    return of


def elicitation_columns(
    parse: Callable[[str], Sequence[tuple[str, Any]]], features: pd.DataFrame
) -> tuple[Column, ...]:
    """prompts.csv after the prompt's columns, each written where the run's Ask answers it:
    by scoring, the candidates' count, AP over them and over the relation's answers,
    Spearman's rho and the top 5; asked in words, the norming task's columns
    (tacit.probes.elicit.generated); each row's bounded ranks, top answer and tokens."""
    from tacit.ask.paraphrase import TOP1, paraphrased
    from tacit.ask.tokens import TOKENS_COLUMN
    from tacit.ask.vocabulary import BOUNDED
    from tacit.probes.elicit.generated import LISTING_COLUMNS, score_feature_lists
    from tacit.probes.elicit.prompts import prompt_keys

    def listing(answered: Any) -> pd.DataFrame:
        rows = answered.rows
        return score_feature_lists(rows, answered["answers"], features, prompt_keys(rows))

    return (
        Column.field("n_candidates", "n_candidates"),
        Column.field("ap_vocab", "ap"),
        Column.field("ap_sens", "ap_among"),
        Column("spearman", ("scores",), spearman(parse)),
        Column.field("top5", "listed"),
        Column(tuple(LISTING_COLUMNS), ("answers",), listing),
        Column.field(BOUNDED, BOUNDED),
        Column.field(TOP1, "best", when=paraphrased),
        Column.field(TOKENS_COLUMN, "tokens"),
    )
