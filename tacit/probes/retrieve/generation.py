"""Retrieval by generation (`probe retrieve --by generation`): each prompt of the paper's
incrementally grown property lists, with the same selections, orders and ablations as
retrieval by scoring, asked as a question (tacit.probes.asking); the model's answers read and
matched to the norms' concepts (tacit.matching) and the target ranked among them
(tacit.ranking.generated): one completion a prompt with up to `--guesses` K guesses, its rank
the first matching guess's position; or `--samples N` completions of one guess each, ranked by
how many gave it. A target the model did not name has reciprocal rank 0 and no rank.

The prompts are retrieval's over candidate spans (the blank stands for the concept with its
article, "___ has fur, is big, and has claws."), so every concept of the norms can be asked,
not only those one token long in every model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tacit.probes.base import Scored
from tacit.probes.retrieve.prompts import PROMPT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd
    from tqdm.auto import tqdm

    from tacit.matching.match import Matcher
    from tacit.models.answers import Sampling
    from tacit.models.base import Scorer
    from tacit.probes.retrieve.options import RetrieveOptions
    from tacit.probes.shots import Demonstrations

RAW = ["request", "completions"]  # kept in the checkpoint, written as messages and answers


def prompt_keys(rows: pd.DataFrame) -> list[str]:
    """The columns that tell a model's prompts apart (the template too, where there are
    several)."""
    keys = [c for c in PROMPT_COLUMNS if c != "target"]
    return [*keys, "template"] if "template" in rows else keys


def way_of(values: RetrieveOptions) -> tuple[str, int]:
    """(`list`, K guesses) or, with several samples, (`votes`, one guess each)."""
    from tacit.ranking.generated import LIST, VOTES

    return (VOTES, 1) if values.samples > 1 else (LIST, values.guesses)


def score_generated(
    rows: pd.DataFrame,
    scorer: Scorer,
    *,
    sampling: Sampling,
    matcher: Matcher,
    values: RetrieveOptions,
    progress: bool | tqdm,
    shots: Demonstrations | None = None,
) -> Scored:
    """A chunk of prompts asked, answered, read and ranked; its rows keep what was sent and
    said, and the model's record counts what it cost."""
    from tacit.models.answers import generation_counts
    from tacit.probes.asking import ask, question, read_answers, with_completions
    from tacit.probes.shots import asked_shots
    from tacit.ranking.generated import rank_generated

    way, k = way_of(values)
    texts = [question(prompt, "concept", k) for prompt in rows["prompt"]]
    shown = asked_shots(shots, rows, "concept", k)
    keys = prompt_keys(rows)
    about = rows[keys].to_dict("records")
    completions, requests = ask(scorer, sampling, texts, progress, shown, about)
    table = with_completions(rows, completions, requests)
    answers = read_answers(table, keys, matcher, k)
    ranked = rank_generated(
        table, answers, keys, way=way, k=k if way == "list" else None, target="concept"
    )
    ranked.insert(0, "model", scorer.name)
    return Scored(ranked, generation_counts(completions, requests))


def finish_generated(
    rows: pd.DataFrame, sampling: Sampling, matcher: Matcher, values: RetrieveOptions
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, str], dict[str, Any]]:
    """(the prompts' rows without the raw request and completions, answers.csv's table,
    messages.jsonl, the manifest's record of how the models were asked and what they said)."""
    from tacit.probes.asking import generation_record, messages_file, read_answers

    keys = ["model", *prompt_keys(rows)]
    way, k = way_of(values)
    answers = read_answers(rows, keys, matcher, k)
    messages = messages_file(rows, keys, sampling)
    record = generation_record(sampling, "concept", k, list(rows["prompt"].unique()))
    record["way"] = way
    record["answers_by_status"] = {
        str(s): int(n) for s, n in answers["status"].value_counts().sort_index().items()
    }
    record["prompts_missed"] = int(rows["rank"].isna().sum())
    return rows.drop(columns=RAW), {"answers": answers}, {"messages.jsonl": messages}, record
