"""A model as the matcher's judge (`--judge MODEL`, elicitation by generation): each answer read
(status `ok`) is asked against the features of its prompt: those the lexical matcher matched
first, then the prompt's other features in the norms' order, at most `--judge-features` K in
all (so at most K requests per answer). A request is a generation request of the judge
(Scorer.generate: `--cache` and the run's kept answers hold it), greedy, up to 8 tokens; its
verdict is the reply's first word, `yes` or `no` (any case), and anything else `unreadable`
(counted, never guessed). judged.csv keeps each pair and reply; the manifest, how often the
judge and the lexical matcher agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.matching.match import SEPARATOR
from tacit.matching.parse import OK
from tacit.matching.read import answers_by_prompt
from tacit.matching.verdict import UNREADABLE, YES, verdict
from tacit.models.answers import GenerationRequest, Sampling, generation_counts

if TYPE_CHECKING:
    from tacit.matching.match import Matcher
    from tacit.models.base import Scorer

JUDGE_FEATURES = 5  # --judge-features' default
JUDGE_SAMPLING = Sampling(n=1, temperature=0.0, max_tokens=8)
JUDGE_QUESTION = (
    'Someone was asked for the properties of the concept "{concept}" and answered: '
    '"{answer}". Does this answer mean that the concept {feature}? Reply yes or no.'
)
JUDGED_COLUMNS = ["concept", "answer", "feature", "lexical", "verdict", "reply"]


def feature_text(feature: str) -> str:
    """A feature as the judge reads it: the norms' name, its alternatives (`_`) as `or`.

    Examples:
        >>> feature_text("has fur_hair")
        'has fur or hair'
    """
    return feature.replace("_", " or ")


def features_of(matcher: Matcher) -> list[str]:
    """A matcher's features by name, in the norms' order, each once."""
    return list(dict.fromkeys(t.name for t in matcher.targets))


def asked_pairs(matched: str, features: Sequence[str], k: int) -> list[str]:
    """The features an answer is asked against: those it matched, then the others, K at most.

    Examples:
        >>> asked_pairs("has b", ["has a", "has b", "has c"], 2)
        ['has b', 'has a']
    """
    lexical = [f for f in matched.split(SEPARATOR) if f] if matched else []
    return list(dict.fromkeys([*lexical, *features]))[:k]


def judge_answers(
    judge: Scorer,
    prompts: pd.DataFrame,
    answers: pd.DataFrame,
    keys: Sequence[str],
    matchers: Matcher | Sequence[Matcher],
    k: int,
) -> tuple[list[list[dict[str, Any]]], dict[str, int]]:
    """Each prompt's judged pairs (JUDGED_COLUMNS with `draw`), and what judging cost (the
    judge's generation_counts, each named `judge_...`).

    prompts: a row per prompt with its `keys` (with `concept`); answers: their answers frame.
    matchers: one per prompt (its features), or one for all.
    """
    chats = judge.chats()
    pairs: list[tuple[int, dict[str, Any]]] = []
    for i, rows in answers_by_prompt(prompts, answers, keys):
        matcher = matchers if not isinstance(matchers, Sequence) else matchers[i]
        features = features_of(matcher)
        concept = str(prompts["concept"].iloc[i])
        for row in rows[rows["status"] == OK].itertuples(index=False):
            lexical = set(row.matched.split(SEPARATOR)) if row.matched else set()
            for feature in asked_pairs(row.matched, features, k):
                pairs.append(
                    (
                        i,
                        {
                            "draw": int(row.draw),
                            "concept": concept,
                            "answer": row.answer,
                            "feature": feature,
                            "lexical": feature in lexical,
                        },
                    )
                )
    requests = [
        _request(pair["concept"], pair["answer"], pair["feature"], chats) for _, pair in pairs
    ]
    replies = judge.generate(requests, JUDGE_SAMPLING, progress=False) if requests else []
    found: list[list[dict[str, Any]]] = [[] for _ in range(len(prompts))]
    for (i, pair), said in zip(pairs, replies):
        reply = said[0].text if said else ""
        found[i].append({**pair, "verdict": verdict(reply), "reply": reply})
    counts = generation_counts(replies, requests)
    return found, {f"judge_{name}": n for name, n in counts.items()}


def _request(concept: str, answer: str, feature: str, chats: bool) -> GenerationRequest:
    """One question to the judge: a chat's user message, or a prompt ending `Answer:`."""
    text = JUDGE_QUESTION.format(concept=concept, answer=answer, feature=feature_text(feature))
    if chats:
        return GenerationRequest.chat([{"role": "user", "content": text}])
    return GenerationRequest.text(f"Question: {text}\nAnswer:")


def agreement(judged: pd.DataFrame) -> dict[str, Any]:
    """How often the judge and the lexical matcher agree, over the pairs the judge read (its
    unreadable replies counted apart): `agreement` (a share; None without a pair read), read
    beside `constant` (what a judge giving every pair the matcher's commoner verdict agrees:
    a judge that always says no agrees on every pair the matcher left unmatched) and
    `kappa` (Cohen's: agreement beyond what the two verdicts' rates give by chance; None
    where chance is all there is); `n`, `judge_only` (the judge's yes where the matcher
    matched nothing), `lexical_only` (the matcher's match where the judge said no),
    `unreadable`, `requests` (pairs asked)."""
    read = judged[judged["verdict"] != UNREADABLE]
    said_yes = read["verdict"] == YES
    lexical = read["lexical"].astype(bool)
    n = len(read)
    found: dict[str, Any] = {"agreement": None, "constant": None, "kappa": None}
    if n:
        observed = float((said_yes == lexical).mean())
        judge_rate, lexical_rate = float(said_yes.mean()), float(lexical.mean())
        chance = judge_rate * lexical_rate + (1 - judge_rate) * (1 - lexical_rate)
        found = {
            "agreement": round(observed, 4),
            "constant": round(max(lexical_rate, 1 - lexical_rate), 4),
            "kappa": round((observed - chance) / (1 - chance), 4) if chance < 1 else None,
        }
    return {
        **found,
        "n": n,
        "judge_only": int((said_yes & ~lexical).sum()),
        "lexical_only": int((~said_yes & lexical).sum()),
        "unreadable": int(len(judged) - n),
        "requests": len(judged),
    }
