"""Every analysis of one matrix against a reference, in one call: compare_matrices for any two
matrices (a model's against people's, later), compare_norms for two norm sets with no model
(McRae against CSLB, a model's written norms against people's). The result holds the tables,
draws the figures and writes them all to a directory."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.files import json_text, table_text, write_files
from tacit.norms import NormSet, load_norms
from tacit.structure.align import align
from tacit.structure.build import from_norms
from tacit.structure.ceiling import COLUMNS as CEILING_COLUMNS
from tacit.structure.ceiling import ceiling_fraction, noise_ceiling
from tacit.structure.clusters import category_structure, mds_map, procrustes_onto
from tacit.structure.matrix import ConceptFeatureMatrix, Grouping
from tacit.structure.prior import Space, answer_prior, without_prior
from tacit.structure.similarity import Similarity, rsa
from tacit.structure.verification import calibration_bins, feature_verification

if TYPE_CHECKING:
    from matplotlib.figure import Figure

T = TypeVar("T")


@dataclass(frozen=True)
class Structure:
    """The analyses of `a` against the reference `b`, both on the concepts they share.

    Attributes:
        a, b: the two matrices on their shared concepts (b's names and order).
        tables: name -> table: alignment, rsa, ceiling, ceiling_fraction, verification,
            calibration (where a's values are probabilities), categories, map, prior,
            prior_concepts, and rsa, verification and categories again with a's prior
            divided out (`..._without_prior`).
        names: what the figures call a and b.
        record: the options, the matrices' provenance, what was left out, seconds taken.
    """

    a: ConceptFeatureMatrix
    b: ConceptFeatureMatrix
    tables: dict[str, pd.DataFrame]
    names: tuple[str, str] = ("a", "b")
    record: dict[str, Any] = field(default_factory=dict)

    def figures(self) -> dict[str, Figure]:
        """name -> figure, one per analysis."""
        from tacit.structure import figures as draw

        a, b = self.names
        t = self.tables
        found = {
            "rsa": draw.rsa_figure(t["rsa"], t["ceiling"].iloc[[0]], f"{a} against {b}"),
            "categories": draw.category_figure(
                {name: rows for name, rows in t["categories"].groupby("matrix", sort=False)}
            ),
            "map": draw.map_figure(
                {name: rows for name, rows in t["map"].groupby("matrix", sort=False)}
            ),
            "prior": draw.prior_figure(
                t["prior_concepts"], t["prior"], f"{a}'s answer-space prior"
            ),
        }
        if not t["verification"].empty:
            found["verification"] = draw.verification_figure(
                t["verification"], f"{a}'s values verifying {b}'s features"
            )
        if "calibration" in t:
            found["reliability"] = draw.reliability_figure(t["calibration"])
        return found

    def write(self, directory: str | Path) -> Path:
        """The tables (`NAME.csv`), figures (`NAME.png`), both matrices (`a/`, `b/`) and
        `structure.json` into `directory`, each file whole or not at all."""
        from tacit.structure.figures import figure_png

        directory = Path(directory)
        files: dict[str, str | bytes] = {f"{n}.csv": table_text(t) for n, t in self.tables.items()}
        files.update({f"{n}.png": figure_png(f) for n, f in self.figures().items()})
        files["structure.json"] = json_text(self.record)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self.a.write(directory / "a")
            self.b.write(directory / "b")
            write_files(directory, files, point="structure")
        except OSError as err:
            raise TacitError(f"{directory}: cannot write the analyses ({err.strerror})") from None
        return directory


def compare_matrices(
    a: ConceptFeatureMatrix,
    b: ConceptFeatureMatrix,
    *,
    reference_norms: NormSet | None = None,
    a_norms: NormSet | None = None,
    names: tuple[str, str] = ("a", "b"),
    concept_map: Mapping[str, str] | None = None,
    similarity: Similarity = "cosine",
    space: Space = "probability",
    k: int = 5,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    n_splits: int = 100,
    confidence: float = 0.95,
) -> Structure:
    """Every analysis of `a` (a model's values, or a second norm set's) against the reference
    `b` (people's): RSA, the ceiling of b's people (from `reference_norms`' participant lists;
    of a's too, from `a_norms`, where a is a model's written norms), feature verification of
    b's listed features by a's values, category structure of both, the MDS maps, and a's
    answer-space prior, with the analyses again with it divided out. Concepts (and, for
    verification and the prior, features) are aligned first (tacit.structure.align); b's
    categories (else domains) group the concepts.

    Raises:
        TacitError: matrices that share no concept.
    """
    seconds: dict[str, float] = {}

    def timed(name: str, work: Callable[[], T]) -> T:
        start = time.perf_counter()
        done = work()
        seconds[name] = round(time.perf_counter() - start, 3)
        return done

    try:
        on_concepts = align(a, b, concept_map=concept_map)
        on_features = align(a, b, features=True, concept_map=concept_map)
    except ValueError as err:
        raise TacitError(f"{names[0]} against {names[1]}: {err}") from None
    ac, bc, af, bf = on_concepts.a, on_concepts.b, on_features.a, on_features.b
    by: Grouping = "category" if any(g is not None for g in bc.categories) else "domain"
    draws: dict[str, Any] = {
        "seed": seed,
        "n_resamples": n_resamples,
        "n_permutations": n_permutations,
        "confidence": confidence,
    }
    tables: dict[str, pd.DataFrame] = {}
    tables["alignment"] = pd.concat(
        [
            on_concepts.report.assign(aligned="concepts"),
            on_features.report[on_features.report["kind"] == "features"].assign(aligned="features"),
        ],
        ignore_index=True,
    )
    tables["rsa"] = timed("rsa", lambda: rsa(ac, bc, similarity=similarity, **draws))
    as_named = {
        names[1]: list(bc.concepts),
        names[0]: [on_concepts.concepts[c] for c in bc.concepts],
    }
    ceilings = []
    for name, norms in ((names[1], reference_norms), (names[0], a_norms)):
        if norms is None:
            continue
        start = time.perf_counter()
        found = noise_ceiling(
            norms,
            concepts=as_named[name],
            n_splits=n_splits,
            seed=seed,
            similarity=similarity,
            confidence=confidence,
        )
        seconds[f"ceiling {name}"] = round(time.perf_counter() - start, 3)
        ceilings.append(found.assign(of=name))
    tables["ceiling"] = pd.concat(ceilings, ignore_index=True) if ceilings else _no_norms(names[1])
    tables["ceiling_fraction"] = ceiling_fraction(tables["rsa"], tables["ceiling"].iloc[[0]])
    probabilities = bool(((af.values >= 0) & (af.values <= 1)).all())
    tables["verification"] = timed(
        "verification",
        lambda: feature_verification(bf, af, by=by, probabilities=probabilities, **draws),
    )
    if probabilities:
        tables["calibration"] = calibration_bins(bf, af, by=by, seed=seed)
    tables["categories"] = timed(
        "categories",
        lambda: pd.concat(
            [
                category_structure(m, by=by, similarity=similarity, k=k, **draws).assign(matrix=n)
                for n, m in ((names[0], ac), (names[1], bc))
            ],
            ignore_index=True,
        ),
    )
    map_b = mds_map(bc, similarity=similarity, by=by)
    map_a = procrustes_onto(mds_map(ac, similarity=similarity, by=by), map_b)
    tables["map"] = pd.concat(
        [map_a.assign(matrix=names[0]), map_b.assign(matrix=names[1])], ignore_index=True
    )
    prior, per_concept = timed("prior", lambda: answer_prior(ac, space=space, **draws))
    tables["prior"], tables["prior_concepts"] = prior, per_concept
    plain_a, plain_af = without_prior(ac, space=space), without_prior(af, space=space)
    tables["rsa_without_prior"] = timed(
        "rsa without prior", lambda: rsa(plain_a, bc, similarity=similarity, **draws)
    )
    kept = list(plain_af.features)
    tables["verification_without_prior"] = timed(
        "verification without prior",
        lambda: feature_verification(
            bf.select(features=kept), plain_af, by=by, probabilities=False, **draws
        ),
    )
    tables["categories_without_prior"] = category_structure(
        plain_a, by=by, similarity=similarity, k=k, **draws
    ).assign(matrix=names[0])
    record = {
        "names": list(names),
        "a": ac.provenance.record(),
        "b": bc.provenance.record(),
        "options": {
            "similarity": similarity,
            "space": space,
            "k": k,
            "by": by,
            "n_splits": n_splits,
            **draws,
        },
        "shape": {"a": list(ac.shape), "b": list(bc.shape), "a_features_aligned": list(af.shape)},
        "left_out": {
            "a": ac.counts_left_out(),
            "b": bc.counts_left_out(),
            "features": af.counts_left_out(),
        },
        "seconds": seconds,
    }
    return Structure(ac, bc, tables, names, record)


def _no_norms(name: str) -> pd.DataFrame:
    row: dict[str, object] = dict.fromkeys(CEILING_COLUMNS, float("nan"))
    row.update({"reason": f"no norms with participant lists were given for {name}", "of": name})
    return pd.DataFrame([row])


def compare_norms(
    norms_a: NormSet | str | Path,
    norms_b: NormSet | str | Path,
    *,
    categories: Mapping[str, str] | str | Path | None = None,
    concept_map: Mapping[str, str] | None = None,
    n_participants_a: int | None = None,
    n_participants_b: int | None = None,
    names: tuple[str, str] | None = None,
    similarity: Similarity = "cosine",
    k: int = 5,
    seed: int = 0,
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    n_splits: int = 100,
    confidence: float = 0.95,
) -> Structure:
    """Two norm sets compared with no model: McRae against CSLB on their shared concepts, or a
    model's written norms (tacit.structure.model_norms) against people's (`b`, the
    reference). Each becomes a matrix of proportions (pf over the concept's participants:
    from the participant lists, or `n_participants_*`; McRae: 30) or, where neither says
    how many, of pf; then compare_matrices.

    Args:
        norms_a: a NormSet, or a path or installed name (tacit.norms.load_norms).
        norms_b: the reference, likewise.
        categories: concept -> category for b's concepts, or a concept table's file (CSLB's
            concepts.dat); a's concepts take b's.
        concept_map: a's concept -> b's, where names differ beyond their normal form.

    Examples:
        >>> found = compare_norms("mcrae.xlsx", "norms.dat", categories="concepts.dat",
        ...                       n_participants_a=30)  # doctest: +SKIP
        >>> found.tables["rsa"].query("scope == 'all'")["value"]  # doctest: +SKIP
    """
    a = norms_a if isinstance(norms_a, NormSet) else load_norms(norms_a)
    b = norms_b if isinstance(norms_b, NormSet) else load_norms(norms_b)

    def matrix(norms: NormSet, n: int | None, groups: object) -> ConceptFeatureMatrix:
        value = "proportion" if norms.participants is not None or n is not None else "pf"
        return from_norms(norms, value=value, n_participants=n, categories=groups)  # type: ignore[arg-type]

    return compare_matrices(
        matrix(a, n_participants_a, None),
        matrix(b, n_participants_b, categories),
        reference_norms=b,
        a_norms=a,
        names=names or (a.name or a.path.name, b.name or b.path.name),
        concept_map=concept_map,
        similarity=similarity,
        k=k,
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        n_splits=n_splits,
        confidence=confidence,
    )
