"""Few-shot demonstrations (`--shots K`), for scoring and generation alike: before each probed
prompt, K prompts of the same kind about other concepts (never the probed one nor one of its
category: CATEGORY_RULE), each filled with its answer, drawn by a generator seeded from
`--seed`, the concept and the prompt's kind (zlib.crc32), so reruns, batch sizes and chunks
agree. By scoring they are joined before the prompt with a space (SEPARATOR); by generation
each is a question and its answer (tacit.ask.words.request_for). docs/probes/causal.md
("Few-shot demonstrations") has the rules and the reasons.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tacit.core.blank import MASK

if TYPE_CHECKING:
    import pandas as pd

    from tacit.norms import NormSet

SEPARATOR = " "  # between demonstrations, and before the prompt (see the module docstring)
SHOTS_COLUMN = "shots"  # prompts.csv: the demonstration concepts of each prompt
SHOTS_LISTED = " | "  # between them in that column
CATEGORY_RULE = (
    "a concept's category is its `is a` answer(s) of highest production frequency; no "
    "demonstration is the probed concept or shares a category with it (a concept with no "
    "`is a` feature excludes only itself)"
)


@dataclass(frozen=True)
class Shot:
    """One demonstration: its concept, its prompt with the blank (`cloze`), and its answers,
    best first (retrieval: the concept as the blank takes it; elicitation: the concept's
    answers to the relation by production frequency), with the name a question's answer
    gives (`named`: retrieval's concept name; elicitation's answers themselves)."""

    concept: str
    cloze: str
    answers: tuple[str, ...]
    named: tuple[str, ...]

    @property
    def filled(self) -> str:
        """The prompt with its blank filled by the first answer: 'A bear has fur.'"""
        return self.cloze.replace(MASK, self.answers[0])


def categories(norms: NormSet) -> dict[str, frozenset[str]]:
    """Each concept's category (CATEGORY_RULE): its `is a` answers of highest pf, several
    where they tie; concepts without an `is a` feature are absent."""
    table = norms.table[norms.table["relation"] == "is a"]
    found: dict[str, frozenset[str]] = {}
    for concept, rows in table.groupby("concept", sort=False):
        top = rows["pf"].max()
        found[str(concept)] = frozenset(rows.loc[rows["pf"] == top, "answer"])
    return found


def shot_rng(seed: int, concept: str, kind: Hashable) -> np.random.Generator:
    """The generator of one prompt's demonstrations: the run's seed, the probed concept and
    the prompt's kind, so that no other prompt, batch or chunk changes its draw."""
    return np.random.default_rng(
        [seed, zlib.crc32(concept.encode()), zlib.crc32(f"shots/{kind}".encode())]
    )


@dataclass(frozen=True)
class Demonstrations:
    """The run's pool of demonstrations (every concept of the norms that has a prompt of each
    kind) and how many each prompt gets; `kind_of` reads a prompt row's kind."""

    k: int
    seed: int
    pool: Mapping[Hashable, Sequence[Shot]]
    category: Mapping[str, frozenset[str]]
    kind_of: Callable[[Any], Hashable]

    def draw(self, concept: str, kind: Hashable) -> list[Shot]:
        """Up to K demonstrations of the kind, in the order drawn: a uniform draw without
        replacement among those of another concept and another category."""
        pool = self.pool.get(kind, ())
        if not pool or self.k == 0:
            return []
        none: frozenset[str] = frozenset()
        banned = self.category.get(concept, none)
        chosen: list[Shot] = []
        for i in shot_rng(self.seed, concept, kind).permutation(len(pool)):
            shot = pool[i]
            if shot.concept != concept and not banned & self.category.get(shot.concept, none):
                chosen.append(shot)
                if len(chosen) == self.k:
                    break
        return chosen

    def of_rows(self, rows: pd.DataFrame) -> list[list[Shot]]:
        """Each prompt row's demonstrations."""
        return [self.draw(row.concept, self.kind_of(row)) for row in rows.itertuples()]

    def apply(self, prompts: pd.DataFrame, *, scoring: bool) -> tuple[pd.DataFrame, dict[str, str]]:
        """The prompts with their demonstration concepts listed (`shots`, after `prompt`);
        by scoring, each prompt's text led by its filled demonstrations (the text scored),
        and each such text's demonstrations (its context: what `--normalize pmi`'s baseline
        is led by too)."""
        drawn = self.of_rows(prompts)
        prompts = prompts.copy()
        contexts: dict[str, str] = {}
        if scoring:
            texts = [with_context(p, s) for p, s in zip(prompts["prompt"], drawn)]
            contexts = {text: context(s) for text, s in zip(texts, drawn)}
            prompts["prompt"] = texts
        at = prompts.columns.get_loc("prompt") + 1
        listed = [SHOTS_LISTED.join(s.concept for s in shots) for shots in drawn]
        prompts.insert(int(at), SHOTS_COLUMN, listed)
        return prompts, contexts


def context(shots: Sequence[Shot]) -> str:
    """The filled demonstrations as one text ('' without any)."""
    return SEPARATOR.join(shot.filled for shot in shots)


def with_context(prompt: str, shots: Sequence[Shot]) -> str:
    """The prompt led by its filled demonstrations: 'A cat has fur. A <mask> has claws.'"""
    return SEPARATOR.join([context(shots), prompt]) if shots else prompt


def in_context(baseline: Callable[[str], str], contexts: Mapping[str, str]) -> Callable[[str], str]:
    """`--normalize pmi`'s baseline of a prompt (`baseline`: prompt text -> its property- or
    concept-free form) led by the same demonstrations as the prompt."""

    def baseline_of(prompt: str) -> str:
        base, shown = baseline(prompt), contexts.get(prompt, "")
        return SEPARATOR.join([shown, base]) if shown else base

    return baseline_of


def shots_record(k: int) -> dict[str, Any]:
    """The manifest's options record of the demonstrations: how many, how joined, which
    concepts are never shown."""
    return {"k": k, "separator": SEPARATOR, "category": CATEGORY_RULE}


def fewer_than_k(prompts: pd.DataFrame, k: int) -> int:
    """How many prompts got fewer than K demonstrations (from their `shots` column)."""
    listed = prompts[SHOTS_COLUMN].fillna("")
    counts = [len(cell.split(SHOTS_LISTED)) if cell else 0 for cell in listed]
    return sum(n < k for n in counts)


def shots_counts(prompts: pd.DataFrame, k: int) -> dict[str, int]:
    """The manifest's counts of a run with demonstrations (nothing without)."""
    if k == 0 or SHOTS_COLUMN not in prompts:
        return {}
    return {"prompts_with_fewer_shots_than_k": fewer_than_k(prompts, k)}
