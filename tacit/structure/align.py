"""Two matrices on the same concepts (and, where asked, the same features): McRae against CSLB,
a model's norms against people's. Names are matched by tacit.structure.names (concepts: given
pairs, the same name, the same normal form, the same without a sense label; features: the same
name, then the same normal form of their phrases: McRae `has_4_legs` and CSLB `has four legs`
are both `have four leg`); what did not align is counted, side by side, and why."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from tacit.matching import Normaliser
from tacit.structure.matrix import ConceptFeatureMatrix, Provenance
from tacit.structure.names import NameMatch, concept_keys, match_names


@dataclass(frozen=True)
class Alignment:
    """a, b: the two matrices on b's concepts (and features), in b's order, a's names turned
    into b's and b's domains and categories on both; report: side (`a`, `b`), kind
    (`concepts`, `features`), reason, count, and the rules pairs were made by (`paired: RULE`);
    concepts: b's concept -> a's, as a named it."""

    a: ConceptFeatureMatrix
    b: ConceptFeatureMatrix
    report: pd.DataFrame
    concepts: dict[str, str]


def _report(kind: str, found: NameMatch) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"side": "both", "kind": kind, "reason": f"paired: {rule}", "count": n}
        for rule, n in found.counts().items()
    ]
    for side, left in (("a", found.left_first), ("b", found.left_second)):
        rows += [
            {"side": side, "kind": kind, "reason": reason, "count": len(items)}
            for reason, items in left.items()
        ]
    return rows


def _left(
    matrix: ConceptFeatureMatrix, kind: str, left: dict[str, tuple[str, ...]]
) -> ConceptFeatureMatrix:
    for reason, items in left.items():
        matrix = matrix.leaving_out(f"{kind} not aligned: {reason}", items)
    return matrix


def align(
    a: ConceptFeatureMatrix,
    b: ConceptFeatureMatrix,
    *,
    features: bool = False,
    concept_map: Mapping[str, str] | None = None,
    normaliser: Normaliser | None = None,
) -> Alignment:
    """`a` and `b` on the concepts they share (each keeps its own features, as similarity
    structures need), or with `features` also on the features they share.

    Args:
        concept_map: a's concept -> b's, paired before any rule (CSLB's concepts.dat gives
            McRae's name of 416 of its concepts).
        normaliser: the normal form names are compared by (default tacit.matching's).
    """
    normal = normaliser or Normaliser()
    given: dict[str, str] = {}
    if concept_map:  # its names as the matrices write them (`coffee machine`: `coffee_machine`)
        in_a = match_names(list(concept_map), list(a.concepts), keys=concept_keys()).pairs
        in_b = match_names(
            list(dict.fromkeys(concept_map.values())), list(b.concepts), keys=concept_keys()
        ).pairs
        given = {in_b[v]: in_a[k] for k, v in concept_map.items() if k in in_a and v in in_b}
    concepts = match_names(list(b.concepts), list(a.concepts), keys=concept_keys(), given=given)
    pairs = concepts.pairs  # b's concept -> a's
    if not pairs:
        raise ValueError("the two matrices share no concept")
    a_left = _left(a, "concepts", concepts.left_second)
    b_left = _left(b, "concepts", concepts.left_first)
    new_a = a_left.select(concepts=list(pairs.values()))
    new_b = b_left.select(concepts=list(pairs))
    rows = _report("concepts", _swap(concepts))
    if features:
        phrase_a = dict(zip(a.features, a.phrases))
        phrase_b = dict(zip(b.features, b.phrases))
        found = match_names(
            list(b.features),
            list(a.features),
            keys=(("normal form of the phrase", lambda f: normal(phrase_b.get(f) or phrase_a[f])),),
        )
        if not found.pairs:
            raise ValueError("the two matrices share no feature")
        new_a = _left(new_a, "features", found.left_second).select(
            features=list(found.pairs.values())
        )
        new_b = _left(new_b, "features", found.left_first).select(features=list(found.pairs))
        rows += _report("features", _swap(found))
    new_a = replace(
        new_a,
        concepts=new_b.concepts,
        features=new_b.features if features else new_a.features,
        relations=new_b.relations if features else new_a.relations,
        feature_types=new_b.feature_types if features else new_a.feature_types,
        phrases=new_b.phrases if features else new_a.phrases,
        domains=new_b.domains,
        categories=new_b.categories,
        provenance=Provenance(
            "aligned",
            a.provenance.path,
            a.provenance.sha256,
            {"of": a.provenance.record(), "onto": b.provenance.record(), "features": features},
        ),
    )
    report = pd.DataFrame(rows, columns=["side", "kind", "reason", "count"])
    return Alignment(new_a, new_b, report, dict(pairs))


def _swap(found: NameMatch) -> NameMatch:
    """The match seen from a's side first (it was made from b's)."""
    return NameMatch(
        {v: k for k, v in found.pairs.items()},
        {found.pairs[k]: r for k, r in found.rules.items()},
        found.left_second,
        found.left_first,
    )
