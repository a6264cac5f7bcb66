"""`--control random-weights`: each model of a run followed by its control, the same
architecture (the model's own config) and tokenizer with every weight drawn at random, torch
seeded with the run's seed, so that no number is read without what the tokenizer, the
templates and the candidates' lengths give alone.

A control is a model like any other, named by its text: the model's, then ` (random weights,
seed S)` (tacit.core.modelspec reads it back: `--model 'gpt2 (random weights, seed 0)'` runs
the control alone). The in-process Hugging Face family builds it (tacit.models.loading.
random_weights: a hub id, a local directory or a GGUF file, whose config transformers reads
from its header); a family without a config to build one from (a server) refuses it, in one
line naming the model, before anything loads (tacit.models.resolved, where each model of a
run is followed by its control).
"""

from __future__ import annotations


def control_of(model: str, seed: int) -> str:
    """The text (and name) of a model's random-weight control: its own text, then the seed.

    Examples:
        >>> control_of("gpt2,revision=main", 0)
        'gpt2,revision=main (random weights, seed 0)'
    """
    return f"{model} (random weights, seed {seed})"
