"""Elicitation by generation (`probe elicit --by generation`): the norming task itself. Each
of elicitation's prompts (a concept and relation: "Everyone knows that a bear has <mask>.") is
asked as the norming studies' feature listing (tacit.probes.asking's `answers` question),
`--samples` N times as N participants; the answers are read and matched to the norms'
features of that concept and relation (tacit.matching.feature_matcher), and scored against
them (tacit.probes.elicit.generated: recall weighted by production frequency, precision,
Spearman's rho, the novel answers).

Every concept with a feature of the relation is asked, whatever its answer's length: a
model's words are open, so nothing is left out for want of a vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tacit.probes.base import Outcome, Plan, Scored, Work

if TYPE_CHECKING:
    import pandas as pd
    from tqdm.auto import tqdm

    from tacit.core.manifest import Manifest
    from tacit.core.options import RunOptions
    from tacit.matching.match import Matcher
    from tacit.models.answers import Sampling
    from tacit.models.base import Scorer
    from tacit.norms import NormSet
    from tacit.probes.elicit.options import ElicitOptions
    from tacit.probes.elicit.plans import State
    from tacit.probes.shots import Demonstrations
    from tacit.templates import TemplateSet
    from tacit.templates.questions import Questions

RAW = ["request", "completions"]  # kept in the checkpoint, written as messages and answers
KEYS = ["relation", "prefix", "concept", "template", "prompt"]  # what tells prompts apart


def prompt_keys(rows: pd.DataFrame) -> list[str]:
    """KEYS that the prompts have (`template` only where a relation has several)."""
    return [k for k in KEYS if k in rows]


def feature_matchers(norms: NormSet, prompts: pd.DataFrame) -> dict[tuple[str, str], Matcher]:
    """Per concept and relation asked, a matcher of its features of the relation (by the
    norms' names, each named by every reading of its answer)."""
    from tacit.matching import feature_matcher

    table = norms.table
    asked = set(zip(prompts["concept"], prompts["relation"]))
    chosen = table[[pair in asked for pair in zip(table["concept"], table["relation"])]]
    return {
        (concept, relation): feature_matcher(list(rows["feature"]), list(rows["answer"]), relation)
        for (concept, relation), rows in chosen.groupby(["concept", "relation"], sort=False)
    }


def _matchers_of(rows: pd.DataFrame, matchers: Mapping[tuple[str, str], Matcher]) -> list[Matcher]:
    return [matchers[pair] for pair in zip(rows["concept"], rows["relation"])]


def score_listings(
    rows: pd.DataFrame,
    scorer: Scorer,
    *,
    sampling: Sampling,
    matchers: Mapping[tuple[str, str], Matcher],
    features: pd.DataFrame,
    guesses: int,
    progress: bool | tqdm,
    shots: Demonstrations | None = None,
    asks: str = "answers",
    questions: Questions | None = None,
) -> Scored:
    """A chunk of prompts asked (`asks`: a relation's `answers`, or a free `listing`, in the
    words of `questions`), answered, read and scored against the norms; its rows keep what
    was sent and said, and the model's record counts what it cost."""
    from tacit.models.answers import generation_counts
    from tacit.probes.asking import answers_asked, ask, question, read_answers, with_completions
    from tacit.probes.elicit.generated import score_feature_lists
    from tacit.probes.shots import asked_shots

    texts = [question(prompt, asks, guesses, questions) for prompt in rows["prompt"]]
    shown = asked_shots(shots, rows, asks, guesses, questions)
    keys = prompt_keys(rows)
    about = rows[keys].to_dict("records")
    completions, requests = ask(scorer, sampling, texts, progress, shown, about)
    table = with_completions(rows, completions, requests)
    asked = answers_asked(rows["prompt"].iloc[0], asks, guesses, questions) if len(rows) else None
    answers = read_answers(table, keys, _matchers_of(table, matchers), asked)
    scored = score_feature_lists(table, answers, features, keys)
    scored.insert(0, "model", scorer.name)
    return Scored(scored, generation_counts(completions, requests))


def finish_listings(
    rows: pd.DataFrame,
    sampling: Sampling,
    matchers: Mapping[tuple[str, str], Matcher],
    guesses: int,
    asks: str = "answers",
    questions: Questions | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, str, dict[str, Any]]:
    """(the prompts' rows without the raw request and completions, answers.csv's table,
    messages.jsonl, the manifest's record of how the models were asked and what they said)."""
    from tacit.probes.asking import (
        answers_asked,
        generation_record,
        messages_file,
        read_answers,
    )

    keys = ["model", *prompt_keys(rows)]
    asked = answers_asked(rows["prompt"].iloc[0], asks, guesses, questions) if len(rows) else None
    answers = read_answers(rows, keys, _matchers_of(rows, matchers), asked)
    messages = messages_file(rows, keys, sampling)
    clozes = list(rows["prompt"].unique())
    record = generation_record(sampling, asks, guesses, clozes, questions)
    record["answers_by_status"] = {
        str(s): int(n) for s, n in answers["status"].value_counts().sort_index().items()
    }
    record["answers_unmatched"] = int(
        ((answers["status"] == "ok") & (answers["matched"] == "")).sum()
    )
    return rows.drop(columns=RAW), answers, messages, record


def plan_generation(
    norms: Any,
    values: ElicitOptions,
    relations: list[str],
    prefixes: list[bool],
    run: RunOptions,
    templates: TemplateSet,
) -> Plan:
    """The plan of a run by generation: a prompt per concept with a feature of the relation
    (every answer counts, of any length), asked in words,
    its answers matched to that concept's features of the relation."""
    import pandas as pd

    from tacit.models.base import Needs
    from tacit.probes.asking import sampling_of
    from tacit.probes.candidates import relation_answers
    from tacit.probes.elicit.plans import State, asked_prompts, with_shots
    from tacit.probes.elicit.prompts import NO_ANSWER, build_span_prompts
    from tacit.probes.shared_options import norms_record
    from tacit.templates.questions import load_questions

    gold = pd.concat(
        [relation_answers(norms, r).assign(relation=r) for r in relations], ignore_index=True
    )
    prompts = build_span_prompts(gold, relations, prefixes, values.concepts, templates)
    prompts, dropped = asked_prompts(prompts, norms, values, run, NO_ANSWER)
    prompts, _, shots = with_shots(prompts, norms, values, prefixes, run, templates, scoring=False)
    sampling = sampling_of(values, run.seed)
    matchers = feature_matchers(norms, prompts)
    features = norms.table
    questions = load_questions(values.questions)
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
            questions=questions,
        ),
        needs=Needs.of("generate"),
        sampling=sampling,
    )
    state = State(
        norms,
        prefixes,
        prompts,
        None,
        pd.DataFrame(),
        templates,
        relations,
        dropped=dropped,
        asked=(sampling, matchers),
        shots=values.shots,
        questions=questions,
    )
    known = {"norms": norms_record(norms)}
    return Plan(work, values, None, manifest=known, state=state)


def finish_generation(
    state: State,
    values: ElicitOptions,
    rows: pd.DataFrame,
    manifest: Manifest,
    run: RunOptions,
) -> Outcome:
    """A run by generation: the listings scored against the norms, what was sent and said
    (messages.jsonl, answers.csv), and the manifest's record of it. A prompt a model gave no
    completion for (a recorded model without one) is left out of its rows and counted; a free
    listing is scored per relation too (by_relation.csv)."""
    import pandas as pd

    from tacit.probes.elicit.generated import relation_scores, summarize_feature_lists
    from tacit.probes.elicit.plans import prompt_counts
    from tacit.probes.elicit.summary import ALL
    from tacit.probes.shots import shots_record

    assert state.asked is not None
    sampling, matchers = state.asked
    rows, answers, messages, record = finish_listings(
        rows, sampling, matchers, values.guesses, state.asks, state.questions
    )
    rows, unanswered = _answered(rows)
    dropped = pd.concat([state.dropped, unanswered], ignore_index=True)
    added: dict[str, Any] = {
        "options": {
            "relations": state.relations,
            "prefix": values.prefix,
            "concepts": values.concepts,
            "by": values.by,
            **({"shots": shots_record(values.shots)} if values.shots else {}),
        },
        "templates": state.templates.record(),
        "counts": prompt_counts(replace(state, dropped=dropped))
        | {"spearman_undefined": int(rows["spearman"].isna().sum())},
        "generation": record,
    }
    extra = {"answers": answers, "dropped": dropped}
    scored = rows
    if state.relations == [ALL]:  # a free listing
        keys = ["model", *prompt_keys(rows)]
        extra["by_relation"] = relation_scores(rows, answers, state.norms, matchers, keys)
        scored = pd.concat([rows, extra["by_relation"]], ignore_index=True)
    summary = summarize_feature_lists(scored, seed=run.seed)
    return Outcome(rows, summary, added, extra, {"messages.jsonl": messages}, vocab=None)


NO_COMPLETION = "no completion from the model (a recorded model: none recorded for it)"


def _answered(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of prompts a model gave a completion for, and the others as dropped rows
    (`concept, relation, reason`), the model named in the reason."""
    import pandas as pd

    none = rows["n_draws"] == 0
    left = rows[none]
    dropped = pd.DataFrame(
        {
            "concept": left["concept"],
            "relation": left["relation"],
            "reason": [f"{NO_COMPLETION}: {m}" for m in left["model"]],
        }
    ).drop_duplicates()
    return rows[~none].reset_index(drop=True), dropped
