"""Words from tokens: how `--by word` joins a text's tokens, as minicons'
`IncrementalLMScorer.word_score_tokenized(texts, tokenize_function=str.split)` does.

A word is a maximal run of non-whitespace (`str.split`), its log-probability the sum of its
tokens'. A token belongs to the word that holds its last non-whitespace character (by its
offsets: `Ġbear` and `▁bear` carry the space before and belong to it); a whitespace-only token
to the next word. minicons counts each word's tokens alone instead; where the tokenizer splits
at spaces (byte-level BPE, SentencePiece) the two agree (tested against minicons).
"""

from __future__ import annotations

import re

import numpy as np

WORD = re.compile(r"\S+")


def word_spans(text: str) -> np.ndarray:
    """[words x 2] character offsets (start, end) of the text's words."""
    return np.array([m.span() for m in WORD.finditer(text)], dtype=np.int64).reshape(-1, 2)


def word_of_tokens(text: str, offsets: np.ndarray, words: np.ndarray) -> np.ndarray:
    """The word (its row in `words`) of each token ([tokens x 2] offsets into `text`)."""
    at = []
    for start, end in offsets.tolist():
        piece = text[start:end].rstrip()
        # the last character that is not whitespace; a token of whitespace: the next word's
        at.append(start + len(piece) - 1 if piece.strip() else end)
    found = np.searchsorted(words[:, 1], np.asarray(at, dtype=np.int64), side="right")
    return np.minimum(found, len(words) - 1)
