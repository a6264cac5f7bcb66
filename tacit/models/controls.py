"""`--control random-weights`: each model of a run followed by its control, the same
architecture (its config) and tokenizer with every weight drawn at random, torch seeded with
the run's seed, so that no number is read without what the tokenizer, the templates and the
candidates' lengths give alone. A control is a model named by its text (the model's, then
` (random weights, seed S)`), built by the in-process family (tacit.models.loading.
random_weights); a family without a config (a server) refuses it before anything loads.
"""

from __future__ import annotations


def control_of(model: str, seed: int) -> str:
    """The text (and name) of a model's random-weight control: its own text, then the seed.

    Examples:
        >>> control_of("gpt2,revision=main", 0)
        'gpt2,revision=main (random weights, seed 0)'
    """
    return f"{model} (random weights, seed {seed})"
