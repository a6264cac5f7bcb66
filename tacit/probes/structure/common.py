"""What every way of making a structure run shares: people's matrix from the norms, the
analyses' draws and options as recorded, and how a model with nothing to analyse is said."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError

if TYPE_CHECKING:
    from tacit.core.options import Planning
    from tacit.norms import NormSet
    from tacit.probes.structure.options import StructureOptions
    from tacit.structure import ConceptFeatureMatrix


def reference_matrix(norms: NormSet, values: StructureOptions) -> ConceptFeatureMatrix:
    """People's matrix: proportions where the norms' participant lists count the people, else
    production frequencies."""
    from tacit.structure import from_norms

    if norms.participants is not None:
        return from_norms(norms, value="proportion", categories=values.categories)
    return from_norms(norms, value="pf", categories=values.categories)


def draws(values: StructureOptions, run: Planning) -> dict[str, Any]:
    """The analyses' seed and numbers of draws."""
    return {
        "seed": run.seed,
        "n_resamples": values.resamples,
        "n_permutations": values.permutations,
        "n_splits": values.splits,
    }


def options_record(values: StructureOptions, similarity: str | None) -> dict[str, Any]:
    """The manifest's record of the analyses' options."""
    return {
        "verification": values.verification,
        "similarity": similarity,
        "resamples": values.resamples,
        "permutations": values.permutations,
        "splits": values.splits,
        "categories": None if values.categories is None else str(values.categories),
        "participants": values.participants,
        "relations": list(values.relations) if values.relations else None,
        "concepts": list(values.concepts) if values.concepts else None,
    }


def say_left_out(models: list[str], said: str, others: bool) -> None:
    """Models with nothing to analyse (`said`: why) are left out with a warning (their
    answers stay in answers.csv); where no model is left, the run stops."""
    if not models:
        return
    if not others:
        raise TacitError(f"{', '.join(models)}: {said}")
    import warnings

    from tacit.core.errors import TacitWarning

    for model in models:
        warnings.warn(
            f"{model}: {said}: left out of the analyses "
            "(a summary row with n_concepts 0; its answers are in answers.csv)",
            TacitWarning,
            stacklevel=3,
        )
