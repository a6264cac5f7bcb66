"""The scorer contract every probe calls, whatever runs the model: plain Python, no torch.

A Scorer is anything that answers the questions probes ask; what it can answer it declares in
`capabilities`:

- `vocab`: `score_vocab(prompts, vocab_ids)` scores each prompt's blank (`<mask>`) over a shared
  vocabulary of one-token words, batch by batch (ScoredBatch), which the ranking layer
  (tacit.ranking) reduces to ranks, probabilities and top words. A family whose blank must
  end the sentence (a causal LM reads the next token) says so with `blank_anywhere = False`.
  A family may score exactly only the
  words a reduction can read (`Needed`: a causal LM's text after the blank) and give every
  other word an upper bound below all of those;
- `words`: `score_words(prompts, vocab_ids, words)` reads a blank anywhere in the sentence, by
  putting each word in it where the family cannot read the blank itself;
- `spans`: `score_spans(templates, spans)`: every candidate span in every template's blank,
  any number of tokens, exactly (SpanScores; DESIGN.md, "Scoring the blank");
- `encode`: `encode(texts, pooling=...)`: frozen features;
- `classify`: `label_probabilities(premises, hypotheses)`: an NLI classifier's labels;
- `tokens`: `token_scores(texts, pll=...)`: every token of each text with its log-probability
  (TokenScores: a causal LM's given the tokens before it, a masked LM's pseudo-log-likelihood);
- `generate`: `generate(requests, sampling)`: what the model says to each request (a chat's
  messages or a plain prompt), N completions each (Completion: text, finish reason, and where
  asked and given, the generated tokens' log-probabilities).

Probes ask for capabilities (Needs), never for a family or a kind. The base does once what
every family shares (a question the family cannot answer is a one-line error; repeated texts
are scored once; results come back in the order asked, with their own counts of the work done);
a family implements the hooks of its capabilities (`_vocab_scores`, `_words_in_place`,
`_span_scores`, `_encode`, `_classify`, `_token_scores`, `_generate`), and a test runs every
family against every method (tests/models/test_conformance.py). Arrays in answers are numpy
arrays, or, from a family that runs a model in this process, torch tensors on its device, so
that reductions over a vocabulary stay there (tacit.ranking.vocabulary takes either).
Scorers that run Hugging Face models in this process share tacit.models.hf_scorer (their
family, tacit.models.huggingface, is a light declaration); a new family is one module and its
registration (tacit.models.families; docs/extending.md).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from inspect import signature
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from tacit.core import faults
from tacit.core.choices import PLL_METRICS, SPAN_SCORINGS, check_choice
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.models.answers import (
    Completion,
    GenerationRequest,
    Needed,
    Sampling,
    ScoredBatch,
    SpanScores,
    TokenScores,
    VocabScores,
    thought,
)
from tacit.models.meter import metered

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.core.manifest import ModelRecord
    from tacit.models.answered import AnsweredRequests
    from tacit.models.score_cache import ScoreCache

# capability -> the hook a family implements for it
HOOKS = {
    "vocab": "_vocab_scores",
    "words": "_words_in_place",
    "spans": "_span_scores",
    "encode": "_encode",
    "classify": "_classify",
    "tokens": "_token_scores",
    "generate": "_generate",
}
# what a probe may ask for beyond HOOKS: the vocabulary at a blank anywhere in a sentence (a
# family with `vocab` and `blank_anywhere`), not only at one that ends it
VOCAB_ANYWHERE = "vocab_anywhere"
# each capability in words, for a refusal ("... it cannot score candidate spans")
ASKS = {
    "vocab": "score a <mask> over a vocabulary",
    VOCAB_ANYWHERE: "score a <mask> inside a sentence over a vocabulary",
    "words": "score words in a blank inside a sentence",
    "spans": "score candidate spans",
    "encode": "encode texts into features",
    "classify": "classify premise-hypothesis pairs",
    "tokens": "score every token of a text",
    "generate": "generate text (answer a chat or a prompt in words)",
}


def distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts (sorted) and, for each text given, the position of its distinct text:
    what lets every family score a repeated text once."""
    unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return list(unique), inverse.reshape(-1)


def group_rows(text_of_row: np.ndarray, n_texts: int) -> list[np.ndarray]:
    """For each distinct text (numbered 0..n_texts-1), the positions of the rows that have it.

    Examples:
        >>> [g.tolist() for g in group_rows(np.array([1, 0, 1]), 2)]
        [[1], [0, 2]]
    """
    order = np.argsort(text_of_row, kind="stable")
    bounds = np.searchsorted(text_of_row[order], np.arange(n_texts + 1))
    return [order[bounds[i] : bounds[i + 1]] for i in range(n_texts)]


@contextmanager
def progress_bar(
    progress: bool | tqdm, total: int, desc: str, unit: str, lengths: Sequence[int] | None = None
) -> Iterator[tqdm]:
    """The caller's bar (one that spans several calls), or a new one closed at the end (and
    cleared: under a run's bar, it is the inner one that moves while a chunk is scored); with
    `progress=False`, a silent one (every family's scoring shows one). A new bar of sentences
    tells a calibration (tacit.models.meter) what it plans (`lengths`: their tokens, in the
    order they are scored, where the family knows it)."""
    from tqdm.auto import tqdm

    if isinstance(progress, tqdm):
        yield progress
        return
    with tqdm(total=total, desc=desc, unit=unit, disable=not progress, leave=False) as bar:
        metered(bar, total, unit, lengths)  # a calibration's count (--dry-run), where one is on
        yield bar


def abilities(scorer: Scorer | type[Scorer]) -> frozenset[str]:
    """What a scorer (or a family's scorer class, before it loads) can be asked: its
    capabilities, and `vocab_anywhere` where it reads a blank anywhere in a sentence."""
    extra = {VOCAB_ANYWHERE} if "vocab" in scorer.capabilities and scorer.blank_anywhere else set()
    return frozenset(scorer.capabilities) | extra


@dataclass(frozen=True)
class Needs:
    """What a probe asks of every model, as capabilities: a model serves if it has every
    capability of any one set in `any_of` (NLI: a classifier, or a language model asked in
    cloze form). `asks`: the probe's question in words, for the refusal; `instead`: what to do
    instead, for a model that has a capability ((capability, advice), ...)."""

    any_of: tuple[frozenset[str], ...]
    asks: str = ""
    instead: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(
        cls, *capabilities: str, asks: str = "", instead: Mapping[str, str] | None = None
    ) -> Needs:
        """Needs of one set of capabilities."""
        return cls((frozenset(capabilities),), asks, tuple((instead or {}).items()))

    def met_by(self, scorer: Scorer | type[Scorer]) -> bool:
        have = abilities(scorer)
        return any(wanted <= have for wanted in self.any_of)

    def check(self, name: str, scorer: Scorer | type[Scorer], probe: str) -> None:
        """A one-line error unless `scorer` (a model's scorer, or the class it would load as)
        can answer: it names the model, its kind, what it cannot do and what to do instead."""
        if self.met_by(scorer):
            return
        have = abilities(scorer)
        closest = min(self.any_of, key=lambda wanted: len(wanted - have))
        cannot = " or ".join(ASKS.get(c, c) for c in sorted(closest - have))
        asked = f" ({self.asks})" if self.asks else ""
        advice = [text for capability, text in self.instead if capability in have]
        hint = f": {advice[0]}" if advice else ""
        raise TacitError(
            f"{name} is a {scorer.kind} model: it cannot {cannot}, which {probe} asks of it"
            f"{asked}{hint}"
        )


class RunModel(Protocol):
    """A model of the run as a probe plans with it, before its weights load (its text read
    once: tacit.models.resolved.ResolvedModel): its name, its tokenizer (None for a family that
    plans without one; read once, and reused by the scorer), and the one-line refusal of a
    model that cannot answer what the probe needs of it."""

    name: str

    @property
    def tokenizer(self) -> Any: ...

    def check(self, needs: Needs, probe: str) -> None: ...


class Scorer(ABC):
    """A model family's answers to what the probes ask (see the module docstring).

    Attributes every scorer has: `name` (as given: how tables and the manifest name it),
    `kind` (what it is, in a word: `masked`, `causal`, `classifier`, `server`, ...),
    `tokenizer` (what the probes plan with), `batch_size` (texts per call, as used), `device`
    (where its arrays live: `cpu` for families that return numpy), `max_tokens` (the longest
    input it takes).
    """

    kind: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[str]] = frozenset()
    blank_anywhere: ClassVar[bool] = True  # does score_vocab read a blank inside a sentence?
    # capability -> the hook its families implement (a base for several families may name
    # its own: in-process Hugging Face models give logits over their whole vocabulary)
    hooks: ClassVar[Mapping[str, str]] = HOOKS
    name: str
    tokenizer: Any
    batch_size: int
    device: Any = "cpu"
    max_tokens: int = 10**9
    # answers kept across runs (--cache: tacit.models.score_cache), attached by the runner
    cache: ScoreCache | None = None
    # the run's generation answers kept as each arrives (tacit.models.answered), attached by
    # the runner where the run has a checkpoint
    run_answers: AnsweredRequests | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A family declares a capability exactly when it implements its hook."""
        super().__init_subclass__(**kwargs)
        if "hooks" in cls.__dict__:
            return  # a base for several families, which declare what they implement
        unknown = set(cls.capabilities) - set(HOOKS)
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown capabilities {sorted(unknown)}")
        base = next(c for c in cls.__mro__ if "hooks" in c.__dict__)
        for capability, hook in cls.hooks.items():
            implemented = getattr(cls, hook) is not getattr(base, hook)
            if implemented != (capability in cls.capabilities):
                state = "implements" if implemented else "does not implement"
                raise TypeError(f"{cls.__name__} {state} {hook} but capabilities say otherwise")

    @abstractmethod
    def record(self) -> ModelRecord:
        """The model for the manifest: its name and kind, where it came from (revision, file,
        server), how it was loaded and run."""

    def unsupported(self, what: str) -> TacitError:
        """The one-line error for a question this family cannot answer."""
        return TacitError(f"{self.name} is a {self.kind} model: it cannot {what}")

    def can(self, capability: str) -> bool:
        """Whether this family answers `capability` (one of HOOKS, or `vocab_anywhere`)."""
        return capability in abilities(self)

    def scores_alone_concurrently(self) -> bool:
        """Can several threads each score a prompt alone (a batch of one, one CPU thread: the
        tie rule's canonical scores, tacit.ranking.vocabulary.Referee) at once? Only a family
        whose per-pass state is per thread says so; then settling runs them side by side."""
        return False

    def batches_invariant(self) -> bool:
        """Does a batch give each prompt's vocabulary scores exactly as the prompt scored alone
        (the tie rule's canonical scores), whatever the batch? Then the tie rule has nothing to
        settle in those batches (ScoredBatch.fixed; tacit.models.invariant)."""
        return False

    def _require(self, capability: str) -> None:
        if capability not in self.capabilities:
            raise self.unsupported(ASKS[capability])

    # --- what the probes call ---------------------------------------------------------------

    def score_vocab(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        *,
        progress: bool | tqdm = True,
        cut_to_fit: bool = False,
        needed: Needed | None = None,
    ) -> Iterator[ScoredBatch]:
        """Score each distinct prompt text's blank over the shared vocabulary, batch by batch.

        Every prompt given is covered by exactly one batch. With `cut_to_fit`, prompts too long
        for the model are cut around their blank (each batch counts its own in `cut`).
        `needed`: what the caller's reduction reads (Needed); None: every word's exact score.
        """
        self._require("vocab")
        yield from self._vocab_batches(prompts, vocab_ids, progress, cut_to_fit, needed)

    def score_words(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        words: Sequence[str],
        *,
        progress: bool | tqdm = True,
        needed: Needed | None = None,
    ) -> Iterator[ScoredBatch]:
        """Each prompt's blank over one-token `words` (their ids `vocab_ids`), wherever the
        blank is: read at the blank (as score_vocab, with `needed`) where the family can, else
        with each word put in the blank and its sentence scored (`log_z` then sums over the
        words only: the probabilities are among them)."""
        reads = np.array([self.reads_blank(p) for p in prompts], dtype=bool)
        read_needed = None if needed is None else needed.subset(np.flatnonzero(reads))
        streams: list[tuple[np.ndarray, Callable[[list[str]], Iterable[ScoredBatch]]]] = [
            (
                reads,
                lambda texts: self._vocab_batches(texts, vocab_ids, progress, False, read_needed),
            ),
            (~reads, lambda texts: self._in_place(texts, words, progress)),
        ]
        for chosen, batches in streams:
            positions = np.flatnonzero(chosen)
            if not len(positions):
                continue
            self._require("vocab" if chosen is reads else "words")
            for batch in batches([prompts[int(i)] for i in positions]):
                yield replace(batch, rows=positions[batch.rows])

    def reads_blank(self, prompt: str) -> bool:
        """Can score_vocab read this prompt's blank (a causal LM: only where it ends the
        sentence)?"""
        return "vocab" in self.capabilities and self.blank_anywhere

    def score_spans(
        self,
        templates: Sequence[str],
        spans: Sequence[str],
        *,
        scoring: str = "l2r",
        progress: bool | tqdm = True,
        cache: bool = True,
        tokens: bool = False,
    ) -> SpanScores:
        """Score every span in place of the `<mask>` of every template (`<mask>` once per
        template; the span replaces it, with the text around it unchanged). Each distinct
        (template, span) is scored once; the result does not depend on the batch size.
        `cache=False`: a causal LM scores each sentence whole instead of reusing the text
        before the blank (the plain way, for comparison: the scores are the same); a masked LM
        always shares its prefix tree's rows. `tokens`: SpanScores.tokens too, from the same
        pass (a family whose hook takes no `tokens` keyword refuses them in one line)."""
        self._require("spans")
        check_choice(option("--span-scoring"), scoring, SPAN_SCORINGS)
        unique_t, template_of = distinct(templates)
        unique_s, span_of = distinct(spans)
        if tokens and "tokens" not in signature(self._span_scores).parameters:
            raise self.unsupported("keep the per-token scores of candidate spans")
        asked = {"tokens": True} if tokens else {}  # the default call is a family's as ever

        def score(chosen: list[str]) -> SpanScores:
            return self._span_scores(chosen, unique_s, scoring, progress, cache, **asked)

        if self.cache is None:
            return score(unique_t).expanded(template_of, span_of)
        scores = self.cache.span_scores(unique_t, unique_s, scoring, score, tokens=tokens)
        return scores.expanded(template_of, span_of)

    def encode(
        self, texts: Sequence[str], *, pooling: str | None = None, progress: bool | tqdm = True
    ) -> tuple[np.ndarray, int]:
        """Frozen features, [texts x hidden] float32, and the number of texts cut to fit
        (pooling: the family's default when None)."""
        self._require("encode")
        return self._encode(list(texts), pooling, progress)

    def label_probabilities(
        self, premises: Sequence[str], hypotheses: Sequence[str], *, progress: bool | tqdm = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """[pairs x labels] NLI label probabilities, and which pairs were too long for the
        model (they lose the end of their premise). Each distinct pair is classified once."""
        self._require("classify")
        return self._classify(list(premises), list(hypotheses), progress)

    def token_scores(
        self, texts: Sequence[str], *, pll: str = "original", progress: bool | tqdm = True
    ) -> list[TokenScores]:
        """Every token of each text with its log-probability (TokenScores), in the order
        given; a repeated text is scored once. `pll` (a masked LM's pseudo-log-likelihood, as
        minicons names it): `original`, each token masked alone (Salazar et al. 2020), or
        `within_word_l2r`, with the later tokens of its word masked too (Kauf & Ivanova 2023);
        a causal LM reads left to right whatever it says."""
        self._require("tokens")
        check_choice(option("--pll"), pll, PLL_METRICS)
        unique, inverse = distinct(texts)
        scores = self._token_scores(unique, pll, progress)
        return [scores[i] for i in inverse]

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        sampling: Sampling | None = None,
        *,
        progress: bool | tqdm = True,
    ) -> list[list[Completion]]:
        """What the model says to each request: `sampling.n` completions each, in the order
        asked (Sampling: greedy by default). A repeated request is generated once (its
        completions given again). Answers are read first where this run kept them already
        (`run_answers`: tacit.models.answered, attached by the runner), then, with `--cache`,
        where the cache keeps them (greedy and seeded ones: Sampling.cacheable); the rest are
        generated, and each answer is kept in both the moment the family hands it over, a
        thinking model's thinking apart from its answer (tacit.models.answers.thought)."""
        self._require("generate")
        sampling = sampling or Sampling()
        asked = list(requests)
        unique, inverse = distinct([json.dumps(r.record(), sort_keys=True) for r in asked])
        first = {int(i): n for n, i in reversed(list(enumerate(inverse)))}
        chosen = [asked[first[i]] for i in range(len(unique))]
        cache = self.cache if self.cache is not None and sampling.cacheable else None
        stores: list[Any] = [s for s in (self.run_answers, cache) if s is not None]
        answers: list[list[Completion] | None] = []
        for request in chosen:
            found = None
            for store in stores:
                found = store.find(request, sampling)
                if found is not None:
                    found = [thought(c) for c in found]  # one kept before thinking was read
                    break
            answers.append(found)
        missing = [n for n, found in enumerate(answers) if found is None]
        if missing:
            todo = [chosen[n] for n in missing]

            def keep(at: int, completions: list[Completion]) -> None:
                completions = [thought(c) for c in completions]  # thinking apart, kept so
                answers[missing[at]] = completions
                if self.run_answers is not None:
                    self.run_answers.keep(todo[at], sampling, completions)
                if cache is not None:
                    cache.keep_completions(todo[at], sampling, completions)
                faults.point("answers:kept")

            if "each" in signature(self._generate).parameters:  # the family hands each over
                self._generate(todo, sampling, progress, each=keep)  # type: ignore[call-arg]
            else:
                for at, completions in enumerate(self._generate(todo, sampling, progress)):
                    keep(at, completions)
        return [list(answers[i] or []) for i in inverse]

    def sent(self, request: GenerationRequest) -> dict[str, Any]:
        """The request as the model is sent it (messages.jsonl): its record, with what the
        model's own options add (an in-process model's `system=`)."""
        return request.record()

    def chats(self) -> bool:
        """Whether `generate` is best asked with a chat's messages (an instruct model's chat
        template, a chat server) rather than a plain prompt (a base model)."""
        return False

    # --- the families' hooks (declared in `capabilities`) -----------------------------------

    def _vocab_scores(
        self, texts: list[str], vocab_ids: np.ndarray, progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[VocabScores]:
        """For batches of the distinct `texts`: (their indices, [batch x shared vocabulary]
        scores at each blank, [batch] logsumexp over the model's whole vocabulary, how many of
        them were cut to fit)."""
        raise NotImplementedError

    def _words_in_place(
        self, texts: list[str], words: list[str], progress: bool | tqdm
    ) -> Iterator[tuple[np.ndarray, Any]]:
        """(indices into `texts`, [batch x words] log-probabilities of each text's sentence
        with each word in its blank)."""
        raise NotImplementedError

    def _span_scores(
        self,
        templates: list[str],
        spans: list[str],
        scoring: str,
        progress: bool | tqdm,
        cache: bool,
        tokens: bool = False,
    ) -> SpanScores:
        """SpanScores of distinct templates and spans (with `tokens`, SpanScores.tokens)."""
        raise NotImplementedError

    def _encode(
        self, texts: list[str], pooling: str | None, progress: bool | tqdm
    ) -> tuple[np.ndarray, int]:
        raise NotImplementedError

    def _classify(
        self, premises: list[str], hypotheses: list[str], progress: bool | tqdm
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _token_scores(self, texts: list[str], pll: str, progress: bool | tqdm) -> list[TokenScores]:
        """TokenScores of each of the distinct `texts`."""
        raise NotImplementedError

    def _generate(
        self, requests: list[GenerationRequest], sampling: Sampling, progress: bool | tqdm
    ) -> list[list[Completion]]:
        """`sampling.n` Completions of each of the distinct `requests`, in their order. A
        family whose answers come one by one (a server's) takes `each` too, and calls
        `each(i, completions)` as request i's answer comes, so that it is kept at once."""
        raise NotImplementedError

    # --- shared by the families -------------------------------------------------------------

    def _logsumexp(self, scores: Any) -> Any:
        """logsumexp over the last axis, for the family's arrays (numpy here)."""
        from scipy.special import logsumexp

        return logsumexp(scores, axis=-1)

    def _vocab_batches(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        progress: bool | tqdm,
        cut: bool,
        needed: Needed | None = None,
    ) -> Iterator[ScoredBatch]:
        """ScoredBatch for each batch of the distinct prompt texts."""
        unique, inverse = distinct(prompts)
        rows_of = group_rows(inverse, len(unique))
        yield from self._text_batches(unique, rows_of, vocab_ids, needed, progress, cut)

    def _text_batches(
        self,
        texts: list[str],
        rows_of: list[np.ndarray],
        vocab_ids: np.ndarray,
        needed: Needed | None,
        progress: bool | tqdm,
        cut: bool,
    ) -> Iterator[ScoredBatch]:
        """ScoredBatch of the distinct `texts` (`rows_of[i]`: the prompts whose text is text
        i), every word's exact score (`needed` unread: a family that bounds the words no
        reduction reads, to save work per word, overrides this; tacit.models.causal_words)."""
        for indices, shared, log_z, n_cut in self._cached_vocab_scores(
            texts, vocab_ids, progress, cut
        ):
            # read after the batch: its family checks the batches on the first (a cache's
            # scores were batched by another run, canonical or not: never taken as such)
            invariant = self.cache is None and self.batches_invariant()
            yield ScoredBatch(
                rows=np.concatenate([rows_of[i] for i in indices]),
                batch_rows=np.concatenate(
                    [np.full(len(rows_of[i]), r) for r, i in enumerate(indices)]
                ),
                shared=shared,
                log_z=log_z,
                cut=n_cut,
                work={"tie_invariant_texts": len(indices)} if invariant else {},
                fixed=np.ones((len(indices), 1), dtype=bool) if invariant else None,
            )

    def _cached_vocab_scores(
        self, texts: list[str], vocab_ids: np.ndarray, progress: bool | tqdm, cut: bool
    ) -> Iterator[VocabScores]:
        """_vocab_scores of distinct texts, through the score cache where one is attached."""
        if self.cache is None:
            yield from self._vocab_scores(texts, vocab_ids, progress, cut)
            return
        yield from self.cache.vocab_scores(
            texts,
            vocab_ids,
            max(1, self.batch_size),
            lambda missing: self._vocab_scores(missing, vocab_ids, progress, cut),
        )

    def _in_place(
        self, prompts: list[str], words: Sequence[str], progress: bool | tqdm
    ) -> Iterator[ScoredBatch]:
        """Each word put in each prompt's blank. The caller's bar (a run's, counting prompts)
        advances a prompt at a time; the sentences scored, a prompt's words each, have their
        own bar (total and time left), as a prompt of a 50,000-word vocabulary takes long."""
        from tqdm.auto import tqdm

        unique, inverse = distinct(prompts)
        rows_of = group_rows(inverse, len(unique))
        outer = progress if isinstance(progress, tqdm) else None
        shown = not outer.disable if outer is not None else bool(progress)
        with tqdm(
            total=len(unique) * len(words),
            desc=f"words in the blank {self.name}",
            unit="sentence",
            leave=outer is None,
            disable=not shown,
        ) as inner:
            metered(inner, len(unique) * len(words))
            for indices, scores in self._words_in_place(unique, list(words), inner):
                for at, i in enumerate(indices):
                    shared = scores[at : at + 1]
                    yield ScoredBatch(
                        rows=rows_of[i],
                        batch_rows=np.zeros(len(rows_of[i]), dtype=np.int64),
                        shared=shared,
                        log_z=self._logsumexp(shared),
                    )
                if outer is not None:
                    outer.update(len(indices))
