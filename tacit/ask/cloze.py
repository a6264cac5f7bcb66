"""Cloze classification, PET-style: a template with `<mask>` and named fields, and a verbalizer
giving one word per label; a label's score is its word's logit at the mask. Shared by the
NLI suites and PragmEval's cloze mode.

A causal model reads the blank wherever it is by putting each label's word in it
(label_probs): a label's score is the log-probability of the sentence with its word in place,
which ranks the words as P(word | the rest); words of any number of tokens will do."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tacit.core.blank import MASK
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.models.base import VOCAB_ANYWHERE, Needs, Scorer
from tacit.vocab.shared import word_token_id

FIELD = re.compile(r"{([^{}]*)}")
PUNCTUATION = ".?!,;:"
# what asking in cloze form needs of a model: the label words read at the blank wherever it is,
# or each word scored in it as a span
CLOZE_NEEDS = Needs(
    (frozenset({VOCAB_ANYWHERE}), frozenset({"spans"})),
    asks="label words in a cloze prompt's blank",
)


def check_template(
    template: str, fields: Sequence[str], option: str = "--template", *, every_field: bool = True
) -> str:
    """The template has `<mask>` once, each of `fields` once (or, without `every_field`, at
    most once and at least one of them), and no other field."""
    if template.count(MASK) != 1:
        raise TacitError(f"{option} {template!r}: must contain {MASK} exactly once")
    found = FIELD.findall(template)
    for field in fields:
        if found.count(field) > 1 or (every_field and found.count(field) != 1):
            raise TacitError(f"{option} {template!r}: must contain {{{field}}} exactly once")
    if not set(found) & set(fields):
        raise TacitError(
            f"{option} {template!r}: uses none of " + ", ".join(f"{{{f}}}" for f in fields)
        )
    unknown = sorted(set(found) - set(fields))
    if unknown:
        raise TacitError(
            f"{option} {template!r}: unknown field {{{unknown[0]}}}; expected "
            + ", ".join(f"{{{f}}}" for f in fields)
        )
    return template


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """The template with each field's text in place, in one pass (a text that contains braces
    is never read as a field). Where the template puts punctuation right after a field, the
    text's own final punctuation gives way to it (`{premise}?` with `He left.` gives
    `He left?`)."""

    def text_of(match: re.Match) -> str:
        text = values[match.group(1)].strip()
        following = template[match.end() : match.end() + 1]
        return text.rstrip(PUNCTUATION + " ") if following and following in PUNCTUATION else text

    return FIELD.sub(text_of, template)


def parse_verbalizer(
    value: str,
    labels: Sequence[str],
    *,
    label_of: Callable[[str], str] | None = None,
    option: str = "--verbalizer",
) -> dict[str, str]:
    """`label=word,...` (labels in any order, read through `label_of`), or `word,...` in the
    order of `labels` -> {label: word} in that order."""
    parts = [part.strip() for part in value.split(",") if part.strip()]
    verbalizer: dict[str, str] = {}
    if parts and all("=" in part for part in parts):
        for part in parts:
            key, word = (s.strip() for s in part.split("=", 1))
            verbalizer[label_of(key) if label_of else key] = word
    elif parts and not any("=" in part for part in parts) and len(parts) == len(labels):
        verbalizer = dict(zip(labels, parts))
    if sorted(verbalizer) != sorted(labels) or not all(verbalizer.values()):
        example = ",".join(f"{label}=WORD" for label in labels)
        raise TacitError(
            f"{option} {value!r}: expected one word for each of {', '.join(labels)}, e.g. {example}"
        )
    if len(set(verbalizer.values())) != len(labels):
        raise TacitError(f"{option} {value!r}: two labels share a word")
    return {label: verbalizer[label] for label in labels}


def verbalizer_token_ids(scorer: Scorer, words: Mapping[str, str]) -> np.ndarray:
    """Each verbalizer word's token id (its leading-space form, as the mask follows a space);
    a word that is not one token is an error naming the pieces it splits into."""
    ids = []
    for label, word in words.items():
        token = word_token_id(scorer.tokenizer, word)
        if token is None:
            pieces = scorer.tokenizer.tokenize(" " + word)
            raise TacitError(
                f"{option('--verbalizer')}: {word!r} ({label}) is not one token for {scorer.name} "
                f"(it splits into {pieces}); choose single-token words"
            )
        ids.append(token)
    return np.asarray(ids, dtype=np.int64)


def label_probs(
    scorer: Scorer,
    prompts: list[str],
    words: Mapping[str, str],
    progress: bool,
    *,
    cut_to_fit: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Each prompt's probabilities over the labels' `words`, the words' total probability, and
    how many prompts were cut to fit. A family that reads the blank wherever it is (a masked
    LM) gives the softmax over the words' logits at the blank (each one token) and their
    share of the whole-vocabulary softmax; one that cannot (a causal LM) scores each word in
    the blank as a span: the label probabilities are the softmax over the sentences'
    log-probabilities, the words' total their probability as the text right after the words
    before the blank (any number of tokens)."""
    from tacit.ranking import label_distribution

    ids = verbalizer_token_ids(scorer, words) if scorer.can(VOCAB_ANYWHERE) else None
    return label_distribution(
        scorer, prompts, list(words.values()), ids, progress=progress, cut_to_fit=cut_to_fit
    )


def verbalizer_record(scorer: Scorer, words: Mapping[str, str]) -> dict[str, int | list[int]]:
    """Each label's word as the model reads it for the manifest: its token id (masked), or the
    ids of its tokens after a space (causal: any number)."""
    if scorer.can(VOCAB_ANYWHERE):
        return dict(zip(words, map(int, verbalizer_token_ids(scorer, words))))
    encoded = scorer.tokenizer([" " + w for w in words.values()], add_special_tokens=False)
    return dict(zip(words, encoded["input_ids"]))
