"""Generated answers as candidates: the third kind beside the shared vocabulary and spans.

A model's answers in words, read and matched to the norms (tacit.matching), are what the
target is ranked among: `list` (one completion of up to K guesses: the first match's
position) or `votes` (N completions, answers ranked by their draws, ties as tacit.ranking.ties
settles them). A target with no rank has reciprocal rank 0 and an empty rank, never K + 1.
The result is rows with retrieval's prompts.csv columns, not a `Ranking`: an open vocabulary
has no fixed candidates to index and no score (docs/probes/generation.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.matching.match import SEPARATOR
from tacit.matching.parse import OK
from tacit.matching.read import answers_by_prompt

LIST = "list"
VOTES = "votes"
WAYS = (LIST, VOTES)
# after the prompt's columns
GENERATED_COLUMNS = [
    "rank",
    "reciprocal_rank",
    "target_prob",
    "target_prob_shared",
    "n_candidates",
    "target_answer",
    "target_rule",
    "top5",
    "status",
    "n_draws",
    "n_answers",
    "n_refusal",
    "n_empty",
    "n_truncated",
]


def rank_generated(
    prompts: pd.DataFrame,
    answers: pd.DataFrame,
    keys: Sequence[str],
    *,
    way: str = LIST,
    k: int | None = None,
    target: str = "concept",
) -> pd.DataFrame:
    """Each prompt's target ranked among its generated answers (the module docstring's rules).

    prompts: a row per prompt, its `keys` and its `target` column (the norms' name of the
        concept it asks for, as the answers' `matched` names it).
    answers: the answers frame (tacit.matching.answers_frame) with the same `keys`.
    way: `list` (one completion a prompt) or `votes` (one guess a draw).
    k: a list's answers past the k-th are no rank (None: every answer counts).

    Returns `prompts` with GENERATED_COLUMNS after its own: the target's rank (NaN: none) and
    reciprocal rank (0 for none), the answer that matched it and by which rule, the first five
    answers (`list`: `answer | answer`; `votes`: `answer:draws | ...`), and per prompt its
    draws, answers read, and the draws that were refusals, empty or truncated. `status` is
    `ok` where an answer was read, else the first draw's status.
    """
    if way not in WAYS:
        raise ValueError(f"way: one of {', '.join(WAYS)}, not {way!r}")
    wanted = prompts[target].astype(str).tolist()
    records = [
        _rank_one(rows, wanted[i], way, k) for i, rows in answers_by_prompt(prompts, answers, keys)
    ]
    table = pd.DataFrame.from_records(records, columns=GENERATED_COLUMNS, index=prompts.index)
    return pd.concat([prompts, table], axis=1)


def _rank_one(rows: pd.DataFrame, target: str, way: str, k: int | None) -> dict[str, object]:
    """One prompt's rank and counts, from its rows of the answers frame."""
    draws = rows.drop_duplicates("draw")
    read = rows[rows["status"] == OK].sort_values(["draw", "position"], kind="stable")
    if way == LIST and draws["draw"].nunique() > 1:
        raise TacitError(
            f"{draws['draw'].nunique()} completions of one prompt (a recorded model's draws?): "
            f"a ranked list is read from one; {option('--samples')} N reads each draw's first "
            "answer as a vote"
        )
    if way == VOTES:
        read = read.drop_duplicates("draw")  # each draw's first answer: its guess
        said = read["matched"].where(read["matched"] != "", read["normal"])
        ranked = _by_votes(list(said), list(read["draw"]))
        listed = " | ".join(f"{a}:{n}" for a, n in ranked[:5])
        candidates = [a for a, _ in ranked]
        where = [target in a.split(SEPARATOR) for a in candidates]
        hit = read[said == candidates[where.index(True)]].iloc[0] if any(where) else None
        rank = where.index(True) + 1 if any(where) else np.nan
    else:
        listed = " | ".join(read["answer"].head(5))
        matching = read[read["matched"].map(lambda m: target in m.split(SEPARATOR))]
        hit = matching.iloc[0] if len(matching) else None
        rank = float(hit["position"]) if hit is not None else np.nan
    if k is not None and rank > k:
        rank, hit = np.nan, None
    counts = draws["status"].value_counts()
    return {
        "rank": rank,
        "reciprocal_rank": 0.0 if np.isnan(rank) else 1.0 / rank,
        "target_prob": np.nan,
        "target_prob_shared": np.nan,
        "n_candidates": np.nan,
        "target_answer": "" if hit is None else hit["answer"],
        "target_rule": "" if hit is None else hit["rule"],
        "top5": listed,
        "status": OK if len(read) else (draws["status"].iloc[0] if len(draws) else ""),
        "n_draws": len(draws),
        "n_answers": len(read),
        "n_refusal": int(counts.get("refusal", 0)),
        "n_empty": int(counts.get("empty", 0)),
        "n_truncated": int(rows["status"].eq("truncated").groupby(rows["draw"]).any().sum()),
    }


def _by_votes(said: Sequence[str], draws: Sequence[int]) -> list[tuple[str, int]]:
    """Answers with how many draws gave them, most first; ties by the first draw that gave
    them (tacit.ranking.ties: as high at an earlier position ranks first)."""
    votes: dict[str, int] = {}
    first: dict[str, int] = {}
    for answer, draw in zip(said, draws):
        votes[answer] = votes.get(answer, 0) + 1
        first.setdefault(answer, draw)
    return sorted(votes.items(), key=lambda item: (-item[1], first[item[0]]))
