"""Asking over the shared vocabulary (the paper's way): the blank is one word, ranked among
every word that is one whole-word token in every model's tokenizer, at the blank (a masked LM)
or, where the blank ends its sentence, by the next token (a causal LM); `--suffix-top K` bounds
a causal LM's work on a budget, its bounded ranks counted and said."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tacit.ask.base import Answered, Ask, Asking, Column, Finished, Work
from tacit.ask.ranked import ranked_work
from tacit.core.option_names import option
from tacit.models.base import VOCAB_ANYWHERE, Needs
from tacit.ranking.question import SharedVocabulary

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest, ModelRecord
    from tacit.models.base import RunModel
    from tacit.ranking import Ranking
    from tacit.templates import Template
    from tacit.vocab.shared import Vocabulary

BOUNDED = "ranks_bounded"  # prompts.csv and the summary: a prompt's ranks that are upper bounds
BOUNDED_HEADER = {BOUNDED: "ranks bounded"}  # a printed table's header of the column
RULE = (
    "the text after the blank scored for the golds and the K words most likely before it "
    "(at least the top k); a gold's rank is exact where its score lies above every bound left, "
    "else an upper bound (its average precision and reciprocal rank then lower bounds); a top "
    "k is the best k of the words scored, exact where its k-th score lies above every bound"
)
NOT_IN_FILE = "not in the vocabulary file"
# the budget advised for a causal LM's vocabulary mode on a CPU (docs/probes/causal.md: at
# 1,000, SmolLM2's AP on CSLB `has` within 0.01 of the exact run's on the prompts measured)
SUFFIX_TOP_ADVISED = 1000
# the shared vocabulary at a blank anywhere in a sentence: read where it is, or (a causal
# model, a blank that starts the sentence) by putting each word in it (Prince's person prompt)
IN_PLACE_NEEDS = Needs(
    (frozenset({VOCAB_ANYWHERE}), frozenset({"vocab", "words"})),
    asks="the shared vocabulary at a blank anywhere in a sentence",
)


def not_single_token(model: str) -> str:
    return f"not a single token in {model}"


def word_problem(word: str, vocab: Vocabulary) -> str | None:
    """Why `word` is no word of the shared vocabulary: not one token of some model (the first
    that splits it), or not in the vocabulary file; None where it is one."""
    for model, words in vocab.single_token.items():
        if word not in words:
            return not_single_token(model)
    if vocab.file_words is not None and word not in vocab.file_words:
        return NOT_IN_FILE
    return None


def vocab_needs(templates: Sequence[Template], spans: str) -> Needs:
    """What scoring the blank of these templates over the shared vocabulary asks of a model: a
    family that reads only the next token (a causal LM) serves where every blank ends its
    sentence; otherwise the blank must be read where it is (a masked LM). `spans`: the
    candidate spans to suggest instead (`concepts`, `answers`)."""
    at_end = all(template.blank_ends_sentence for template in templates)
    return Needs.of(
        "vocab" if at_end else VOCAB_ANYWHERE,
        asks="the shared vocabulary at each template's blank",
        instead={
            "spans": f"rank candidate spans instead ({option('--candidates')} {spans}), or give "
            f"{option('--templates')} whose blanks end their sentences"
        },
    )


class VocabularyAsk(Ask):
    """The blank ranked among the shared vocabulary (see the module docstring)."""

    name = "vocabulary"
    form = "word"
    said = "the shared vocabulary"
    takes = ("candidates", "suffix_top")
    over = "the shared vocabulary"
    recorded_as = "vocabulary"

    @classmethod
    def ranked_among(cls, manifest: Mapping[str, Any]) -> str:
        return f"shared vocabulary: {manifest['vocabulary']['size']} words"

    @classmethod
    def compared(cls, manifest: Mapping[str, Any]) -> dict[str, str]:
        vocabulary = manifest.get("vocabulary") or {}
        said = f"{vocabulary.get('size')} words ({str(vocabulary.get('sha256'))[:8]})"
        return {
            "vocabulary": said if vocabulary else "",
            "candidates": "",
            "span scoring": "",
            "normalisation": "",
        }

    @classmethod
    def no_probability(cls, manifest: Mapping[str, Any], model: Mapping[str, Any]) -> str | None:
        causal = model.get("kind") == "causal"
        return "a decoder-only model scores the whole sentence" if causal else None

    def __init__(self, values: Any, probe: str) -> None:
        super().__init__(values, probe)
        self.suffix_top = int(self.value("suffix_top", 0))
        self.vocab_file: Path | None = None
        self._vocabulary: Vocabulary | None = None
        self._needs: Needs | None = None

    @classmethod
    def named(cls) -> str:
        return f"{cls.said} ({option('--candidates')} vocab)"

    @classmethod
    def chosen(cls, values: Any) -> bool:
        by = getattr(values, "by", "scoring")
        return by != "generation" and str(getattr(values, "candidates", "vocab")) == "vocab"

    def needs(self, templates: Sequence[Template], instead: str, in_place: bool = False) -> Needs:
        return IN_PLACE_NEEDS if in_place else vocab_needs(templates, instead)

    def prepare(self, models: Sequence[RunModel], needs: Needs, run: Any = None) -> None:
        """The shared vocabulary of the models' tokenizers (and --vocab-model, --vocab-file),
        once every model is known to answer what the probe needs of it there (a served
        model, which cannot score a vocabulary, is refused first, in one line)."""
        super().prepare(models, needs)
        for model in models:
            model.check(needs, self.probe)
        self._needs = needs
        self.vocab_file = run.vocab_file
        self._vocabulary = vocabulary_of(
            {model.name: model.tokenizer for model in models},
            vocab_models=run.vocab_models,
            vocab_file=run.vocab_file,
            words=run.vocab_words,
        )

    @property
    def vocabulary(self) -> Vocabulary:
        assert self._vocabulary is not None, "the vocabulary is made by prepare()"
        return self._vocabulary

    def cannot(self, text: str, as_word: Callable[[str], str | None] | None = None) -> str | None:
        """Why `text` is no word here: as a name (`as_word`), then, once the vocabulary is
        made, as the vocabulary says (word_problem)."""
        said = as_word(text) if as_word is not None else None
        if said is not None or self._vocabulary is None:
            return said
        return word_problem(text, self._vocabulary)

    def has(self, text: str, among: str | None = None) -> bool:
        return text in self.vocabulary

    def work(
        self,
        rows: pd.DataFrame,
        asking: Asking,
        columns: Sequence[Column] | Callable[[pd.DataFrame, Answered], pd.DataFrame],
        *,
        key: str | None = None,
        baseline: Callable[[str], str] | None = None,
    ) -> Work:
        vocab = self.vocabulary
        shared = SharedVocabulary(vocab, in_place=asking.in_place, suffix_top=self.suffix_top)
        assert self._needs is not None

        def positions(_: str | None, names: Sequence[str]) -> list[int]:
            return [vocab.index(name) for name in names]

        def subset(_: str | None, names: Sequence[str]) -> np.ndarray:
            return np.array(sorted({vocab.index(name) for name in names}))

        return ranked_work(
            rows,
            key,
            asking,
            columns,
            shared,
            self._needs,
            positions,
            subset,
            self._fields,
            questions=asking.questions,
        )

    def _fields(self, ranking: Ranking, *_: Any) -> dict[str, Callable[[], Any]]:
        """What this way adds to the fields of a ranking: each row's ranks that are upper
        bounds, where --suffix-top bounded them."""
        return {BOUNDED: lambda: bounded_counts(ranking)} if self.suffix_top else {}

    def resume_key(self) -> dict[str, Any]:
        return {"vocabulary_sha256": self.vocabulary.sha256}

    def finish(
        self, rows: pd.DataFrame, models: Sequence[ModelRecord], keys: Sequence[str] = ("prompt",)
    ) -> Finished:
        from tacit.ranking import record

        added = {"vocabulary": self.vocabulary.record(self.vocab_file), "ties": record()}
        return Finished(rows, record=added, options=self.options_record())

    def options_record(self) -> dict[str, Any]:
        return {"suffix_top": {"k": self.suffix_top, "rule": RULE}} if self.suffix_top else {}

    def among(self) -> str:
        return f"a shared vocabulary of {len(self.vocabulary):,} words"

    def candidate_count(self) -> int | None:
        return len(self.vocabulary)

    def faster(self, sentences: bool, kinds: set[str | None]) -> list[str]:
        if not sentences:  # no word's text after the blank was scored
            return []
        ways = []
        if not self.suffix_top:
            ways.append(
                f"{option('--suffix-top')} {SUFFIX_TOP_ADVISED} (on a CPU: a causal LM "
                f"scores the text after the blank for the golds and the {SUFFIX_TOP_ADVISED:,} "
                "words most likely before it; ranks it cannot settle are flagged upper bounds)"
            )
        ways.append(
            f"{option('--vocab-words')} lower (fewer words, so fewer texts after the blank "
            "for a causal LM to score)"
        )
        return ways


def bounded_counts(ranking: Ranking) -> np.ndarray:
    """Per row, how many of its anchors' ranks are upper bounds (0 where none can be)."""
    if ranking.bounded is None:
        return np.zeros(len(ranking.rank), dtype=np.int64)
    return ranking.bounded.sum(axis=1).astype(np.int64)


def bounded_sum(group: pd.DataFrame) -> dict[str, int]:
    """A summary row's count of the bounded ranks among its prompts', where the run counted
    them (nothing else)."""
    return {BOUNDED: int(group[BOUNDED].sum())} if BOUNDED in group else {}


def bounded_columns(prompts: pd.DataFrame) -> list[str]:
    """The summary's columns for the bounded ranks, where the run counted them."""
    return [BOUNDED] if BOUNDED in prompts else []


def suffix_top_notes(manifest: Manifest) -> list[str]:
    """A note per model whose ranks the budget bounded, and one where it bounded none."""
    asked = (manifest.get("options") or {}).get("suffix_top")
    if not asked:
        return []
    k = asked["k"]
    notes = []
    for record in manifest.get("models", []):
        if record.get("kind") != "causal":
            continue
        ranks, tops = record.get("ranks_bounded", 0), record.get("tops_bounded", 0)
        if ranks or tops:
            notes.append(
                f"note: {record['name']}: approximate ({option('--suffix-top')} {k}): {ranks} "
                f"gold rank(s) are upper bounds ({BOUNDED} in prompts.csv), so their AP and "
                f"reciprocal rank lower bounds, and {tops} top-5 list(s) the best of the words "
                "scored; every other rank and list is exact"
            )
        else:
            notes.append(
                f"note: {record['name']}: {option('--suffix-top')} {k} bounded no rank: every "
                "rank and top-5 list is exact"
            )
    return notes


def vocabulary_of(
    tokenizers: Mapping[str, Any],
    *,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    words: str = "all",
) -> Vocabulary:
    """The vocabulary of the models' `tokenizers` (by model name) and of --vocab-model's (each
    loaded as its own text says), as --vocab-file restricts it, keeping `words`
    (tacit.vocab.shared.WORD_FILTERS)."""
    from tacit.models.families import model_tokenizer
    from tacit.vocab.shared import build_vocabulary

    extra = {
        name: model_tokenizer(name, {}, flag="--vocab-model")
        for name in dict.fromkeys(vocab_models)
        if name not in tokenizers
    }
    return build_vocabulary({**tokenizers, **extra}, vocab_file=vocab_file, words=words)


def vocabulary_for(
    models: Sequence[str],
    *,
    vocab_models: Sequence[str] = (),
    vocab_file: str | Path | None = None,
    revision: str | None = None,
    model_args: Mapping[str, Any] | None = None,
    words: str = "all",
) -> Vocabulary:
    """The shared vocabulary of models named by their texts (names or paths with their loading
    options, if any: tacit.core.modelspec; `revision` and `model_args` where a text gives
    none), as `probe vocab` and `probe norms show` build it, no run planned."""
    from tacit.models.families import model_tokenizer

    defaults = {"revision": revision, **(model_args or {})}
    tokenizers = {model: model_tokenizer(model, defaults) for model in dict.fromkeys(models)}
    return vocabulary_of(tokenizers, vocab_models=vocab_models, vocab_file=vocab_file, words=words)
