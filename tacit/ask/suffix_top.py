"""`--suffix-top K`: a causal LM's vocabulary mode on a budget (tacit.models.causal_words),
and what a run of it records and says, so that no number read from it passes for exact:
each prompt's count of gold ranks that are upper bounds (`ranks_bounded` in prompts.csv and
the summary), the rule in the manifest's options, the count in each model's record, and a
note beside the tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.option_names import option

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.ranking import Ranking

COLUMN = "ranks_bounded"
BOUNDED_HEADER = {COLUMN: "ranks bounded"}  # a printed table's header of the column
RULE = (
    "the text after the blank scored for the golds and the K words most likely before it "
    "(at least the top k); a gold's rank is exact where its score lies above every bound left, "
    "else an upper bound (its average precision and reciprocal rank then lower bounds); a top "
    "k is the best k of the words scored, exact where its k-th score lies above every bound"
)


def bounded_counts(ranking: Ranking) -> np.ndarray:
    """Per row, how many of its anchors' ranks are upper bounds (0 where none can be)."""
    if ranking.bounded is None:
        return np.zeros(len(ranking.rank), dtype=np.int64)
    return ranking.bounded.sum(axis=1).astype(np.int64)


def bounded_sum(group: pd.DataFrame) -> dict[str, int]:
    """A summary row's count of the bounded ranks among its prompts', where the run counted
    them (nothing else)."""
    return {COLUMN: int(group[COLUMN].sum())} if COLUMN in group else {}


def bounded_columns(prompts: pd.DataFrame) -> list[str]:
    """The summary's columns for the bounded ranks, where the run counted them."""
    return [COLUMN] if COLUMN in prompts else []


def refuse_over_spans(suffix_top: int, candidates: object) -> None:
    """A budget over candidate spans: refused in one line (each span is scored whole), so that
    no option is silently ignored."""
    if suffix_top and candidates != "vocab":
        raise TacitError(
            f"{option('--suffix-top')}: over the shared vocabulary only (a causal LM's "
            f"vocabulary mode); {option('--candidates')} {candidates} scores each span whole"
        )


def suffix_top_record(k: int) -> dict[str, Any]:
    """The manifest's options record of the budget."""
    return {"k": k, "rule": RULE}


def suffix_top_notes(manifest: Manifest) -> list[str]:
    """A note per model whose ranks the budget bounded, and one where it bounded none."""
    asked = (manifest.get("options") or {}).get("suffix_top")
    if not asked:
        return []
    k = asked["k"]
    notes = []
    for record in manifest.get("models", []):
        if record.get("kind") != "causal":
            continue
        ranks, tops = record.get("ranks_bounded", 0), record.get("tops_bounded", 0)
        if ranks or tops:
            notes.append(
                f"note: {record['name']}: approximate ({option('--suffix-top')} {k}): {ranks} "
                f"gold rank(s) are upper bounds ({COLUMN} in prompts.csv), so their AP and "
                f"reciprocal rank lower bounds, and {tops} top-5 list(s) the best of the words "
                "scored; every other rank and list is exact"
            )
        else:
            notes.append(
                f"note: {record['name']}: {option('--suffix-top')} {k} bounded no rank: every "
                "rank and top-5 list is exact"
            )
    return notes
