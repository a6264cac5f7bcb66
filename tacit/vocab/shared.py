"""The shared vocabulary: whole words that every compared model can predict as one token.

Scoring over a common candidate set is what makes ranks comparable across models (LAMA's
common vocabulary is built the same way). A word belongs to a tokenizer's single-token words
when encoding it as it appears inside a sentence, after a space, gives exactly one token that is
not a special token and that decodes back to the word. This takes RoBERTa's byte-level BPE
words in their leading-space form (`Ġbear`), drops WordPiece continuation pieces (`##s`),
special tokens and entries the tokenizer can never produce whole (BERT's `...`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.core.choices import VOCAB_WORDS, check_choice
from tacit.core.errors import TacitError
from tacit.core.files import check_text, regular_file, sha256_bytes
from tacit.core.option_names import option
from tacit.vocab.cache import cached_words

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


def single_token_words(tokenizer: PreTrainedTokenizerBase) -> dict[str, int]:
    """Map each word that this tokenizer encodes as one whole-word token to that token's id."""
    special = set(tokenizer.all_special_ids)
    ids = sorted(set(tokenizer.get_vocab().values()) - special)
    candidates = sorted(
        {
            word
            for decoded in _decode_each(ids, tokenizer)
            if (word := decoded.strip()) and not any(ch.isspace() for ch in word)
        }
    )
    encoded = in_sentence(candidates, tokenizer)
    single = [
        (word, e[0]) for word, e in zip(candidates, encoded) if len(e) == 1 and e[0] not in special
    ]
    decoded = _decode_each([index for _, index in single], tokenizer)
    return {word: index for (word, index), back in zip(single, decoded) if back.strip() == word}


def word_token_id(tokenizer: PreTrainedTokenizerBase, word: str) -> int | None:
    """The token id of `word` as a whole word after a space (RoBERTa's `Ġword`), or None when
    the tokenizer does not encode it as one such token."""
    encoded = in_sentence([word], tokenizer)[0]
    if len(encoded) != 1 or encoded[0] in tokenizer.all_special_ids:
        return None
    return encoded[0] if _decode_each(encoded, tokenizer)[0].strip() == word else None


def span_problems(tokenizer: PreTrainedTokenizerBase, spans: Sequence[str]) -> dict[str, str]:
    """The spans this tokenizer does not read whole, each with why: an unknown token (BERT's
    [UNK] for an emoji, which would be scored as the unknown token's probability), or tokens
    that read back as other text (a control character dropped). Folding case or accents, as an
    uncased model always does, is reading it whole."""
    normalizer = getattr(getattr(tokenizer, "backend_tokenizer", None), "normalizer", None)
    encoded = in_sentence(list(spans), tokenizer)
    problems = {}
    for span, ids in zip(spans, encoded):
        if tokenizer.unk_token_id is not None and tokenizer.unk_token_id in ids:
            problems[span] = "an unknown token"
            continue
        back = str(tokenizer.decode(ids)).strip()
        folded = normalizer.normalize_str(span) if normalizer is not None else span
        if back != span and not (back == folded and len(folded) == len(span)):
            problems[span] = f"it reads back as {back!r}"
    return problems


CONTEXT = "a"  # the word put before each word, so that it is encoded as inside a sentence


def in_sentence(words: list[str], tokenizer: PreTrainedTokenizerBase) -> list[list[int]]:
    """Each word's tokens as it appears inside a sentence, after a space: `a word` encoded and
    the tokens of `a` dropped. Encoding ` word` alone is not the same for every tokenizer:
    SentencePiece tokenizers that put `▁` before a text (Llama 2, Mistral) give it a lone `▁`
    then. A word whose encoding does not begin with the context's keeps it (never one token).
    The shared vocabulary reads words this way, and a seq2seq model's spans are these tokens
    (tacit.models.seq2seq)."""
    context = _encode_words([CONTEXT], tokenizer)[0]
    encoded = _encode_words([f"{CONTEXT} {word}" for word in words], tokenizer)
    return [e[len(context) :] if e[: len(context)] == context else e for e in encoded]


def _decode_each(ids: list[int], tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """Each token id decoded on its own, as text (RoBERTa's `Ġbear` -> ` bear`); in one call to
    the Rust backend when there is one."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return backend.decode_batch([[i] for i in ids], skip_special_tokens=False)
    tokens = [str(tokenizer.convert_ids_to_tokens(i)) for i in ids]
    return [tokenizer.convert_tokens_to_string([token]) for token in tokens]


def _encode_words(texts: list[str], tokenizer: PreTrainedTokenizerBase) -> list[list[int]]:
    """Token ids without special tokens; the Rust backend directly when there is one (it skips
    building a Python encoding object per text, the slow part for 50,000 texts)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return [e.ids for e in backend.encode_batch(texts, add_special_tokens=False)]
    return tokenizer(texts, add_special_tokens=False)["input_ids"]


# which single-token words the shared vocabulary keeps (--vocab-words): all of them (the
# paper's), letters only (no punctuation, digits, symbols: `!`, `!=`, `1990`), or lower-case
# letters only (also no names and no capitalised word pieces such as RoBERTa's `Brah`)
WORD_FILTERS: dict[str, Callable[[str], bool]] = {
    "all": lambda word: True,
    "alpha": str.isalpha,
    "lower": lambda word: word.isalpha() and word.islower(),
}


def read_vocab_file(path: str | Path) -> list[str]:
    """Words of a vocabulary file, one a line (blank lines skipped), in file order."""
    path = Path(path)
    try:
        regular_file(path, missing_ok=True)
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TacitError(f"{path}: no such vocabulary file") from None
    except UnicodeDecodeError as err:
        raise TacitError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise TacitError(f"{path}: cannot read the vocabulary file ({err.strerror})") from None
    check_text(text, path)
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if len(line.split()) > 1:
            raise TacitError(f"{path}:{number}: {line.strip()!r} is not one word")
    words = [line.strip() for line in lines if line.strip()]
    if not words:
        raise TacitError(f"{path}: empty vocabulary file; expected one word a line")
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class Vocabulary:
    """The candidate words every model is scored over, with each model's token id per word.

    Attributes:
        words: the shared words, sorted.
        token_ids: model name (as given) -> int64 array of token ids aligned with `words`.
        single_token: model name -> every word its tokenizer encodes as one whole-word token.
        file_words: the words of the vocabulary file, or None without one.
        found_by: model name -> how its single-token words were found (`computed`, or read
            from the cache: see tacit.vocab.cache), for the manifest.
        words_filter: which words it keeps (WORD_FILTERS: `all`, `alpha`, `lower`).
        filtered_out: how many words the tokenizers shared that the filter left out.
    """

    words: tuple[str, ...]
    token_ids: Mapping[str, np.ndarray]
    single_token: Mapping[str, frozenset[str]]
    file_words: frozenset[str] | None = None
    found_by: Mapping[str, str] = field(default_factory=dict)
    words_filter: str = "all"
    filtered_out: int = 0

    @property
    def coverage(self) -> pd.DataFrame:
        """One row per source (each tokenizer, the vocabulary file): words offered, words kept."""
        sources = {f"tokenizer {name}": words for name, words in self.single_token.items()}
        if self.file_words is not None:
            sources["vocabulary file"] = self.file_words
        shared = set(self.words)
        return pd.DataFrame(
            [
                {"source": source, "words": len(offered), "in_shared": len(shared & offered)}
                for source, offered in sources.items()
            ]
        )

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._positions

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {word: i for i, word in enumerate(self.words)}

    def shrinkage(self) -> dict[str, tuple[int, int]]:
        """For each model: (shared words without its tokenizer, shared words with it).

        Only with two or more tokenizers: how much each one narrows what the others share.
        """
        if len(self.single_token) < 2:
            return {}
        result = {}
        for name in self.single_token:
            others = set.intersection(
                *(set(w) for other, w in self.single_token.items() if other != name)
            )
            if self.file_words is not None:
                others &= self.file_words
            result[name] = (len(others), len(self.words))
        return result

    def warnings(
        self, shrinkage: dict[str, tuple[int, int]] | None = None, threshold: float = 0.5
    ) -> list[str]:
        """Legitimate but surprising: a tokenizer that removes more than `threshold` of the
        words the others share (an uncased or non-English model beside cased English ones).
        Pass `shrinkage()` if it is already computed."""
        return [
            f"{name} shrinks the shared vocabulary from {without} to {with_it} words "
            f"({1 - with_it / without:.0%} fewer): is it the model you meant to compare?"
            for name, (without, with_it) in (shrinkage or self.shrinkage()).items()
            if without and 1 - with_it / without > threshold
        ]

    def index(self, word: str) -> int:
        """Position of a word in `words`."""
        return self._positions[word]

    def text(self) -> str:
        """The vocabulary as written to vocab.txt: one word a line."""
        return "".join(word + "\n" for word in self.words)

    @property
    def sha256(self) -> str:
        """Hex sha256 of `text()`: identifies the vocabulary in a manifest."""
        return sha256_bytes(self.text())

    def record(self, vocab_file: str | Path | None = None) -> dict:
        """The vocabulary as a manifest records it: size, sha256, file, coverage per source,
        where each tokenizer's words came from, how much each tokenizer narrows it, warnings."""
        shrinkage = self.shrinkage()
        return {
            "size": len(self),
            "sha256": self.sha256,
            "file": str(vocab_file) if vocab_file is not None else None,
            "coverage": self.coverage.to_dict("records"),
            "single_token_words": dict(self.found_by),
            "shrinkage": {n: {"without": a, "with": b} for n, (a, b) in shrinkage.items()},
            "warnings": self.warnings(shrinkage),
            **(
                {"words_filter": {"words": self.words_filter, "left_out": self.filtered_out}}
                if self.words_filter != "all"
                else {}
            ),
        }


def build_vocabulary(
    tokenizers: Mapping[str, PreTrainedTokenizerBase],
    *,
    vocab_file: str | Path | None = None,
    words: str = "all",
) -> Vocabulary:
    """Intersect the single-token words of every tokenizer (and the vocabulary file, if any).
    Each tokenizer's words are read from the cache when it holds them (tacit.vocab.cache).

    Args:
        tokenizers: model name as given -> its tokenizer; every model compared and every
            `--vocab-model`.
        vocab_file: optional list of allowed words, one a line (e.g. LAMA's common vocabulary).
        words: which words to keep (WORD_FILTERS): `all`, `alpha` or `lower`.
    """
    keep = WORD_FILTERS[check_choice(option("--vocab-words"), words, VOCAB_WORDS)]
    if not tokenizers:
        raise TacitError("no model given: the shared vocabulary needs at least one tokenizer")
    found = {name: cached_words(tok, single_token_words) for name, tok in tokenizers.items()}
    per_model = {name: words for name, (words, _) in found.items()}
    every = set.intersection(*(set(offered) for offered in per_model.values()))
    shared = {word for word in every if keep(word)}
    filtered_out = len(every) - len(shared)  # of the words the tokenizers share
    file_words = None
    if vocab_file is not None:
        file_words = frozenset(read_vocab_file(vocab_file))
        shared &= file_words
        if not shared:
            raise TacitError(
                f"{vocab_file}: shares no word with the single-token words of the models"
            )
    kept = tuple(sorted(shared))
    token_ids = {
        name: np.array([words_of[w] for w in kept], dtype=np.int64)
        for name, words_of in per_model.items()
    }
    return Vocabulary(
        words=kept,
        token_ids=token_ids,
        single_token={name: frozenset(w) for name, w in per_model.items()},
        file_words=file_words,
        found_by={name: how for name, (_, how) in found.items()},
        words_filter=words,
        filtered_out=filtered_out,
    )
