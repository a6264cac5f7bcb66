"""What the probes plan with before any model loads: each model's tokenizer, from the family
that claims the model (tacit.models.families), and the shared vocabulary of those tokenizers
(tacit.vocab.shared.build_vocabulary)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tacit.models.families import model_tokenizer
from tacit.vocab.shared import Vocabulary, build_vocabulary


def vocabulary_for(
    models: Sequence[Any],
    *,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    revision: str | None = None,
    model_args: Mapping[str, Any] | None = None,
    words: str = "all",
) -> tuple[Vocabulary, dict[str, Any]]:
    """Load the tokenizers of the models (names or paths with their loading options, if any:
    tacit.core.modelspec; a Scorer already in memory brings its own) and of --vocab-model, and
    build their vocabulary (keeping `words`: tacit.vocab.shared.WORD_FILTERS).

    Returns the vocabulary and the tokenizers of `models`, so that scorers need not load them
    again. `revision` and `model_args` apply to `models` where their own text gives none;
    vocabulary-only models load as their own text says (by default, their default revision).
    """
    tokenizers = model_tokenizers(models, revision=revision, model_args=model_args)
    extra = {
        name: model_tokenizer(name, {}, flag="--vocab-model")
        for name in dict.fromkeys(vocab_models)
        if name not in tokenizers
    }
    vocabulary = build_vocabulary({**tokenizers, **extra}, vocab_file=vocab_file, words=words)
    return vocabulary, tokenizers


def model_tokenizers(
    models: Sequence[Any],
    *,
    revision: str | None = None,
    model_args: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Each model's tokenizer, by the model's text: a name or path with its loading options
    (tacit.core.modelspec; `revision` and `model_args` where its own text gives none), or a
    Scorer already in memory, which brings its own."""
    defaults = {"revision": revision, **(model_args or {})}
    return {
        model if isinstance(model, str) else model.name: (
            model_tokenizer(model, defaults) if isinstance(model, str) else model.tokenizer
        )
        for model in dict.fromkeys(models)
    }
