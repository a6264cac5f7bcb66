"""How `probe compare` pairs two models of structure runs: each model's matrix and the people's
(read from the run's `matrix/SLUG/` and `reference/`), their RSA differences by a paired
bootstrap over concepts (tacit.structure.rsa_difference), and what makes two runs stand
together (the same reference norms and similarity)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tacit.core.errors import TacitError
from tacit.probes.base import PAIRED_BOOTSTRAP, Whole

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.structure import ConceptFeatureMatrix


@dataclass(frozen=True)
class Matrices:
    """A model's matrix, the run's reference and the similarity its RSA used."""

    matrix: ConceptFeatureMatrix
    reference: ConceptFeatureMatrix
    similarity: str
    model: str


def comparable(manifest: Manifest) -> dict[str, str]:
    """The reference norms (`--against`, else `--norms`) and their sha256, the similarity and
    the concepts asked: runs that differ in any compare other RSAs."""
    reference = cast("dict[str, Any]", manifest.get("against") or manifest.get("norms") or {})
    options = manifest.get("options") or {}
    return {
        "norms": f"{Path(str(reference.get('path'))).name} ({str(reference.get('sha256'))[:8]})"
        if reference
        else "",
        "similarity": str(options.get("similarity") or ""),
        "concepts": ",".join(options.get("concepts") or []) or "all",
    }


def whole(directory: Path, manifest: Manifest, model: str) -> Whole | None:
    """A model's matrix and the reference as the run saved them, its RSA over all of its
    concepts; None for a model with no matrix (by generation, one that matched nothing)."""
    from tacit.probes.structure.outcome import slug
    from tacit.structure import read_matrix
    from tacit.structure.paired import rsa_value

    where = directory / "matrix" / slug(model)
    if not where.is_dir():
        return None
    similarity = str((manifest.get("options") or {}).get("similarity") or "cosine")
    matrix, reference = read_matrix(where), read_matrix(directory / "reference")
    held = Matrices(matrix, reference, similarity, model)
    return Whole(rsa_value(matrix, reference, similarity=similarity), held)  # type: ignore[arg-type]


def compare_wholes(
    a: Whole, b: Whole, *, seed: int, n_resamples: int, confidence: float
) -> dict[str, Any]:
    """The two models' RSA on their shared concepts, and its paired bootstrap."""
    from tacit.structure import rsa_difference

    first, second = a.data, b.data
    if first.similarity != second.similarity:
        raise TacitError(
            f"{first.model} and {second.model}: RSA by {first.similarity} and by "
            f"{second.similarity} similarity: not comparable"
        )
    _same_reference(first, second)
    try:
        found = rsa_difference(
            first.matrix,
            second.matrix,
            first.reference,
            similarity=first.similarity,
            seed=seed,
            n_resamples=n_resamples,
            confidence=confidence,
        )
    except ValueError as err:
        raise TacitError(f"{first.model} and {second.model}: {err}") from None
    return comparison(found.rsa_a, found.rsa_b, found)


def _same_reference(a: Matrices, b: Matrices) -> None:
    """Two runs' people's matrices hold the same values on the concepts they share."""
    ra, rb = a.reference, b.reference
    shared = [c for c in ra.concepts if c in set(rb.concepts)]
    same = ra.features == rb.features and np.array_equal(
        ra.select(concepts=shared).values, rb.select(concepts=shared).values
    )
    if not same:
        raise TacitError(
            f"{a.model} and {b.model}: their runs' reference matrices differ: not comparable"
        )


def comparison(value_a: float, value_b: float, found: Any) -> dict[str, Any]:
    """compare_wholes' row of a paired bootstrap's result (tacit.structure's RsaDifference or
    AucDifference) and the two values it compared."""
    return {
        "value_a": value_a,
        "value_b": value_b,
        "difference": found.difference,
        "ci_low": found.ci_low,
        "ci_high": found.ci_high,
        "p_value": found.p_value,
        "n_units": len(found.concepts),
        "units_left_out": found.left_out,
        "test": PAIRED_BOOTSTRAP,
        "patterns": found.n_resamples,
    }
