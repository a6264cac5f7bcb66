"""The shared vocabulary: building it from tokenizers, reading a vocab file, coverage."""

from tacit.vocab.shared import (
    Vocabulary,
    build_vocabulary,
    read_vocab_file,
    single_token_words,
    vocabulary_for,
)

__all__ = [
    "Vocabulary",
    "build_vocabulary",
    "read_vocab_file",
    "single_token_words",
    "vocabulary_for",
]
