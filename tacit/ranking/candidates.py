"""The candidates a run ranks, planned before any model loads: the shared vocabulary of the
models' tokenizers (tacit.vocab.shared.build_vocabulary; each tokenizer from the family that
claims the model, tacit.models.families), or sets of candidate spans (a FILE's, checked: every
span read whole by every model's tokenizer), with what the manifest and a resumed run record of
them (Candidates)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.choices import meant
from tacit.core.errors import TacitError, shorten
from tacit.core.files import check_text, regular_file
from tacit.core.option_names import option
from tacit.models.base import VOCAB_ANYWHERE, Needs, RunModel
from tacit.ranking.question import CandidateSet, SharedVocabulary
from tacit.ranking.spans import SpanCandidates

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.templates import Template
    from tacit.vocab.shared import Vocabulary


# what a probe with candidate spans asks of every model
SPAN_NEEDS = Needs.of("spans", asks="candidate spans in the blank")


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


@dataclass
class Candidates:
    """The run's choice of candidates, with what the run needs of it: what the ranking ranks
    among, what a resumed run must match, the manifest's record, and the work span scoring
    took (summed over models).

    vocabulary: the shared vocabulary (vocabulary mode).
    spans: the candidate span sets by name (span mode: `all`, or one per elicitation relation),
        how they are scored and normalised.
    """

    vocabulary: Vocabulary | None = None
    vocab_file: str | Path | None = None
    spans: SpanCandidates | None = None

    @property
    def ranked(self) -> SharedVocabulary | SpanCandidates:
        """What the ranking layer ranks every prompt's blank among."""
        if self.spans is not None:
            return self.spans
        return SharedVocabulary(self.vocab)

    @property
    def sets(self) -> Mapping[str, CandidateSet]:
        return {} if self.spans is None else self.spans.sets

    @property
    def token_scores(self) -> bool:
        """Whether the listed candidates' per-token scores are kept (tokens.csv)."""
        return self.spans is not None and self.spans.tokens

    @classmethod
    def shared_vocabulary(
        cls, models: Sequence[RunModel], run: RunOptions, needs: Needs, probe: str
    ) -> Candidates:
        """The shared vocabulary of the models' tokenizers (and --vocab-model, --vocab-file),
        once every model is known to answer what the probe `needs` of it there (a model that
        cannot score a vocabulary, a served one, is refused first, in one line)."""
        for model in models:
            model.check(needs, probe)
        vocab = vocabulary_of(
            {model.name: model.tokenizer for model in models},
            vocab_models=run.vocab_models,
            vocab_file=run.vocab_file,
            words=run.vocab_words,
        )
        return cls(vocabulary=vocab, vocab_file=run.vocab_file)

    @property
    def vocab(self) -> Vocabulary:
        assert self.vocabulary is not None, "span candidates have no vocabulary"
        return self.vocabulary

    def resume_key(self) -> dict[str, Any]:
        """What a resumed run must have scored over too."""
        if self.spans is None:
            return {"vocabulary_sha256": self.vocab.sha256}
        return {
            "candidates_sha256": {n: s.sha256 for n, s in self.sets.items()},
            "span_scoring": self.spans.scoring,
            "normalize": self.spans.normalize,
            **token_scores_key(self.token_scores),
        }

    def files(self, *, named: bool = False) -> dict[str, str]:
        """The spans ranked, one a line: candidates.txt (one set, or the same spans under every
        name), else candidates-<name>.txt per set (`named`: always)."""
        if not named and len({s.text for s in self.sets.values()}) == 1:
            return {"candidates.txt": next(iter(self.sets.values())).text}
        return {f"candidates-{n.replace(' ', '_')}.txt": s.text for n, s in self.sets.items()}

    def record(self, models: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The manifest's account: the vocabulary, or the candidate sets, the span scoring, the
        normalisation and the work the models' span scoring ran against the naive count (a
        masked LM's forward rows, a causal LM's tokens: SpanScores.work); and the tie rule the
        ranks follow (tacit.ranking.ties)."""
        from tacit.ranking import record

        if self.spans is None:
            return {"vocabulary": self.vocab.record(self.vocab_file), "ties": record()}
        return {
            "candidates": {name: s.record() for name, s in self.sets.items()},
            "span_scoring": self.spans.scoring,
            "normalize": self.spans.normalize,
            **token_scores_key(self.token_scores),
            "span_work": span_work(models),
            "ties": record(),
        }


def token_scores_key(token_scores: bool) -> dict[str, bool]:
    """`token_scores` for a manifest or a resume key, where it is on (a run without it records
    what it always did)."""
    return {"token_scores": True} if token_scores else {}


def span_work(models: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The work the models' span scoring ran, summed over the models' records (a masked LM's
    forward rows, a causal LM's tokens, each against the naive count: SpanScores.work)."""
    return {
        key: sum(m.get(key, 0) for m in models)
        for key in ("span_rows", "span_rows_naive", "span_tokens", "span_tokens_naive")
        if any(key in m for m in models)
    }


def unreadable_spans(spans: Sequence[str], models: Sequence[RunModel]) -> dict[str, str]:
    """The spans some model's tokenizer does not read whole (an unknown token, a character
    dropped: tacit.vocab.shared span_problems), each with which tokenizer and why. Such a span
    would be scored as something else: a FILE's is refused, a span the norms gave is left out
    and counted."""
    from tacit.vocab.shared import span_problems

    problems: dict[str, str] = {}
    for model in models:
        if model.tokenizer is None:  # a family that plans without one: nothing to check here
            continue
        for span, why in span_problems(model.tokenizer, spans).items():
            problems.setdefault(span, f"not read whole by {model.name}'s tokenizer ({why})")
    return problems


def refuse_unreadable(candidates: CandidateSet, problems: Mapping[str, str]) -> None:
    """A FILE of candidates holding a span a model cannot read: one line naming file and line."""
    for number, span in enumerate(candidates.spans, start=1):
        if span in problems:
            raise TacitError(
                f"{candidates.source}, line {number}: {shorten(span)!r} is {problems[span]}: "
                "remove it, or use models that read it"
            )


def read_candidates(path: str | Path, names: Sequence[str] = ()) -> CandidateSet:
    """A FILE of candidates, one span a line (UTF-8); blank lines and repeats are errors that
    name the line, so that the set scored is exactly the file. A missing file nearly named
    like one of the probe's `names` for its own sets (`concept`) says which was meant."""
    path = Path(path)
    try:
        regular_file(path, missing_ok=True)
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TacitError(
            f"{option('--candidates')} {path}: no such file{meant(path, names)}"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise TacitError(
            f"{option('--candidates')} {path}: cannot read it as UTF-8 text ({err})"
        ) from None
    check_text(text, path)
    spans: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        span = line.strip()
        if not span:
            raise TacitError(f"{path}, line {number}: a blank line (one candidate a line)")
        if span in seen:
            raise TacitError(f"{path}, line {number}: {shorten(span)!r} repeats line {seen[span]}")
        seen[span] = number
        spans.append(span)
    if not spans:
        raise TacitError(f"{option('--candidates')} {path}: the file names no candidate")
    return CandidateSet(str(path), spans)


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
