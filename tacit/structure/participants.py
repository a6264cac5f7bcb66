"""Who listed what: CSLB's participant lists, read into one entry per (row, participant).

CSLB's `participant list` names, for each concept-feature pair, the participants who produced
it: `p 1 2 3 6 / 4 9 11`. Our reading, checked on all 22,667 rows of the released norms.dat:
a number is a participant's position among the 30 people who described that concept (1-30;
CSLB had 30 per concept), not a person across concepts; `/` separates the groups of those who
gave each wording in `feature alternatives` (`;`-separated), in that order; `p` opens the list.
A row's participants are the distinct numbers in it (docs/probes/structure.md has the counts).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from tacit.core.errors import TacitError
from tacit.norms import NormSet

# a subset of participants: the same numbers for every concept, or numbers per concept
Participants = Collection[int] | Mapping[str, Collection[int]]


def participant_numbers(cell: str) -> list[int]:
    """The distinct participant numbers of one list, in order (`p` and `/` are no numbers).

    Examples:
        >>> participant_numbers("p 6 7 9 26 / 1 9 19 / 24")
        [6, 7, 9, 26, 1, 19, 24]
    """
    return list(
        dict.fromkeys(int(token) for token in cell.replace("/", " ").split() if token.isdigit())
    )


@dataclass(frozen=True)
class Listings:
    """One entry per (norms row, participant) pair, distinct: `rows[i]` (a row of the NormSet's
    table) was listed by participant `participants[i]`; `concepts[i]` is that row's concept's
    position in `names` (the norms' concepts, in order)."""

    rows: np.ndarray
    participants: np.ndarray
    concepts: np.ndarray
    names: tuple[str, ...]

    @classmethod
    def of(cls, norms: NormSet) -> Listings:
        """The listings of norms that have participant lists; a one-line error for norms
        without (a McRae workbook, a generic table)."""
        if norms.participants is None:
            raise TacitError(
                f"{norms.path}: the {norms.format} norms have no participant lists; subsets of "
                "participants and split halves need CSLB's `participant list` column"
            )
        names = tuple(norms.concepts)
        position = {name: i for i, name in enumerate(names)}
        rows, people = [], []
        for row, cell in enumerate(norms.participants):
            found = participant_numbers(cell)
            rows += [row] * len(found)
            people += found
        row_array = np.asarray(rows, dtype=np.int64)
        row_concepts = np.array([position[c] for c in norms.table["concept"]], dtype=np.int64)
        return cls(
            row_array,
            np.asarray(people, dtype=np.int64),
            row_concepts[row_array] if len(row_array) else row_array,
            names,
        )

    def pool(self) -> dict[str, list[int]]:
        """Each concept's participants: the numbers its rows name, in increasing order (one who
        listed nothing that two or more people listed cannot be seen)."""
        found: dict[str, list[int]] = {name: [] for name in self.names}
        pairs = np.unique(np.column_stack([self.concepts, self.participants]), axis=0)
        for concept, person in pairs:
            found[self.names[concept]].append(int(person))
        return found

    def chosen(self, subset: Participants) -> np.ndarray:
        """Which entries are of a participant in `subset` (the same numbers for every concept,
        or concept -> numbers; a concept not named has none)."""
        if isinstance(subset, Mapping):
            wanted = {(c, int(p)) for c, people in subset.items() for p in people}
            return np.array(
                [
                    (self.names[c], int(p)) in wanted
                    for c, p in zip(self.concepts, self.participants)
                ],
                dtype=bool,
            )
        return np.isin(self.participants, np.asarray(sorted({int(p) for p in subset})))

    def counts(self, chosen: np.ndarray, n_rows: int) -> np.ndarray:
        """Per norms row, how many of the chosen entries' participants listed it."""
        return np.bincount(self.rows[chosen], minlength=n_rows).astype(float)
