"""`--control random-weights`: each model of a run followed by its control, the same
architecture (the model's own config) and tokenizer with every weight drawn at random, torch
seeded with the run's seed, so that no number is read without what the tokenizer, the
templates and the candidates' lengths give alone.

A control is a model like any other, named by its text: the model's, then ` (random weights,
seed S)` (tacit.core.modelspec reads it back: `--model 'gpt2 (random weights, seed 0)'` runs
the control alone). The in-process Hugging Face family builds it (tacit.models.loading.
random_weights: a hub id, a local directory or a GGUF file, whose config transformers reads
from its header); a family without a config to build one from (a server) refuses it, in one
line naming the model, before anything loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.models.families import resolve

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.models.base import Scorer


def control_of(model: str, seed: int) -> str:
    """The text (and name) of a model's random-weight control: its own text, then the seed.

    Examples:
        >>> control_of("gpt2,revision=main", 0)
        'gpt2,revision=main (random weights, seed 0)'
    """
    return f"{model} (random weights, seed {seed})"


def with_controls(models: Sequence[str | Scorer], options: RunOptions) -> list[str | Scorer]:
    """The run's models, each followed by its control where `options.control` asks for one
    (a model that is a control already is kept as it is); a model that cannot have one (a
    server's, or one already in memory) is refused in one line naming it."""
    if options.control is None:
        return list(models)
    asked = f"{option('--control')} {options.control}"
    if not models:
        raise TacitError(f"{asked}: no {option('--model')} to run a control of")
    with_them: list[str | Scorer] = []
    for model in models:
        if not isinstance(model, str):
            raise TacitError(
                f"{asked}: {model.name} is a model already in memory; give it by name or path "
                "(its config and tokenizer are read from there)"
            )
        family, spec = resolve(model, options.model_defaults())
        if spec.random_weights is not None:
            with_them.append(model)
            continue
        if not family.takes("random_weights"):
            raise TacitError(
                f"{asked}: {model} is scored by {family.description}, which has no config "
                "to draw random weights for; run its control from a checkpoint instead"
            )
        with_them += [model, control_of(model, options.seed)]
    return with_them
