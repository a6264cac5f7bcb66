"""The scorer contract every probe calls, whatever the model family.

A Scorer is a ModelRuntime (a model and its tokenizer on a device) that declares what it can
answer, its `capabilities`:

- `vocab`: `score_vocab(prompts, vocab_ids)` scores each prompt's blank (`<mask>`) over a shared
  vocabulary of one-token words, batch by batch (ScoredBatch); `score_targets` ranks one target
  per prompt on top of it. A family whose blank must end the sentence (a causal LM reads the
  next token) says so with `blank_anywhere = False`;
- `words`: `score_words(prompts, vocab_ids, words)` reads a blank anywhere in the sentence, by
  putting each word in it where the family cannot read the blank itself;
- `spans`: `score_spans(templates, spans)`: every candidate span in every template's blank,
  any number of tokens, exactly (SpanScores; DESIGN.md, "Scoring the blank");
- `encode`: `encode(texts, pooling=...)`: frozen features;
- `classify`: `label_probabilities(premises, hypotheses)`: an NLI classifier's labels.

The base does once what every family shares (a question the family cannot answer is a
one-line error; repeated texts are scored once; results come back in the order asked, with
their own counts of the work done); a family implements the forward hooks of its capabilities
(`_vocab_logits`, `_words_in_place`, `_span_scores`, `_encode`, `_classify`), and a test runs
every family against every method (tests/models/test_conformance.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm

from tacit.core.choices import SPAN_SCORINGS, check_choice
from tacit.core.errors import TacitError
from tacit.core.interface import option
from tacit.models.batching import group_rows
from tacit.models.runtime import ModelRuntime

# capability -> the hook a family implements for it
HOOKS = {
    "vocab": "_vocab_logits",
    "words": "_words_in_place",
    "spans": "_span_scores",
    "encode": "_encode",
    "classify": "_classify",
}


def distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts (sorted) and, for each text given, the position of its distinct text:
    what lets every family score a repeated text once."""
    unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return list(unique), inverse.reshape(-1)


@dataclass(frozen=True)
class TargetScores:
    """Scores of (prompt, target) pairs, as numpy arrays aligned with the pairs given.

    rank: 1 + the number of shared-vocabulary words scored higher than the target, or as high
        at an earlier position (the tie rule, tacit.models.ties).
    target_prob: the target's probability under the softmax over the model's whole vocabulary.
    target_prob_shared: the same renormalised over the shared vocabulary.
    top_index, top_prob: the top-k shared-vocabulary positions of each pair's prompt, and their
        probabilities under the whole-vocabulary softmax.
    """

    rank: np.ndarray
    target_prob: np.ndarray
    target_prob_shared: np.ndarray
    top_index: np.ndarray
    top_prob: np.ndarray


@dataclass(frozen=True)
class ScoredBatch:
    """One batch of distinct prompt texts, scored.

    rows: positions (in the prompts given) of every prompt whose text is in this batch.
    batch_rows: for each of `rows`, the row of its text in `shared` and `log_z`.
    shared: [texts x shared vocabulary] float32 logits at the blank, on the device.
    log_z: [texts] logsumexp of the logits over the model's whole vocabulary: `shared - log_z`
        are log-probabilities under the whole-vocabulary softmax (`score_words` with a word put
        in the blank: over the words given).
    cut: how many of the batch's texts were cut to fit the model (`cut_to_fit`).
    """

    rows: torch.Tensor
    batch_rows: torch.Tensor
    shared: torch.Tensor
    log_z: torch.Tensor
    cut: int = 0


@dataclass(frozen=True)
class SpanScores:
    """Candidate spans scored in templates: [templates x spans] arrays, aligned with the
    templates and spans given.

    span: the sum over the span's tokens (as tokenised in that sentence) of their
        log-probability: for a masked LM by the chain rule left to right (`l2r`: token i given
        the tokens before it written and the rest masked) or all masked at once
        (`independent`); for a causal LM, log P(token | every token before it).
    n_tokens: how many tokens the span has in that sentence.
    sentence: causal LMs only (else None): the log-probability of the whole sentence with the
        span in place (its first token conditioned on BOS). The words around the span are the
        same for every span, so ranking spans by it ranks them by P(span | the rest).
    work: what the scoring ran against the naive count, for the manifest: a masked LM's forward
        rows (`span_rows`, `span_rows_naive`: one per span token per pair), a causal LM's
        input tokens (`span_tokens`, `span_tokens_naive`: a whole-sentence loop's, the start
        token and every token of the sentence but its last).
    """

    span: np.ndarray
    n_tokens: np.ndarray
    sentence: np.ndarray | None = None
    work: Mapping[str, int] = field(default_factory=dict)

    def expanded(self, template_of: np.ndarray, span_of: np.ndarray) -> SpanScores:
        """Scores of distinct templates and spans put back in the order they were asked for."""
        pick = np.ix_(template_of, span_of)
        sentence = None if self.sentence is None else self.sentence[pick]
        return SpanScores(self.span[pick], self.n_tokens[pick], sentence, self.work)


class Scorer(ModelRuntime, ABC):
    """A model family's answers to what the probes ask (see the module docstring)."""

    capabilities: ClassVar[frozenset[str]] = frozenset()
    blank_anywhere: ClassVar[bool] = True  # does score_vocab read a blank inside a sentence?

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A family declares a capability exactly when it implements its hook."""
        super().__init_subclass__(**kwargs)
        unknown = set(cls.capabilities) - set(HOOKS)
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown capabilities {sorted(unknown)}")
        for capability, hook in HOOKS.items():
            implemented = getattr(cls, hook) is not getattr(Scorer, hook)
            if implemented != (capability in cls.capabilities):
                state = "implements" if implemented else "does not implement"
                raise TypeError(f"{cls.__name__} {state} {hook} but capabilities say otherwise")

    @abstractmethod
    def check_tokenizer(self) -> None:
        """Refuse a tokenizer this family cannot work with (a masked LM needs a mask token, a
        causal LM a token to start sentences from)."""

    def unsupported(self, what: str) -> TacitError:
        """The one-line error for a question this family cannot answer."""
        return TacitError(f"{self.name} is a {self.kind} model: it cannot {what}")

    def can(self, capability: str) -> bool:
        """Whether this family answers `capability` (one of HOOKS)."""
        return capability in self.capabilities

    def _require(self, capability: str, what: str) -> None:
        if capability not in self.capabilities:
            raise self.unsupported(what)

    # --- what the probes call ---------------------------------------------------------------

    def score_vocab(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        *,
        progress: bool | tqdm = True,
        cut_to_fit: bool = False,
    ) -> Iterator[ScoredBatch]:
        """Score each distinct prompt text's blank over the shared vocabulary, batch by batch.

        Every prompt given is covered by exactly one batch. With `cut_to_fit`, prompts too long
        for the model are cut around their blank (each batch counts its own in `cut`).
        """
        self._require("vocab", "score a <mask> over a vocabulary")
        unique, inverse = distinct(prompts)
        rows_of = group_rows(inverse, len(unique))
        batches = self._vocab_logits(unique, progress, cut_to_fit)
        yield from self._scored_batches(rows_of, batches, vocab_ids)

    def score_words(
        self,
        prompts: Sequence[str],
        vocab_ids: np.ndarray,
        words: Sequence[str],
        *,
        progress: bool | tqdm = True,
    ) -> Iterator[ScoredBatch]:
        """Each prompt's blank over one-token `words` (their ids `vocab_ids`), wherever the
        blank is: read at the blank (as score_vocab) where the family can, else with each word
        put in the blank and its sentence scored (`log_z` then sums over the words only: the
        probabilities are among them)."""
        self._require("vocab", "score a <mask> over a vocabulary")
        reads = np.array([self.reads_blank(p) for p in prompts], dtype=bool)
        for chosen, batches in (
            (reads, lambda texts: self.score_vocab(texts, vocab_ids, progress=progress)),
            (~reads, lambda texts: self._in_place(texts, words, progress)),
        ):
            positions = np.flatnonzero(chosen)
            if not len(positions):
                continue
            for batch in batches([prompts[int(i)] for i in positions]):
                rows = torch.as_tensor(positions, device=batch.rows.device)[batch.rows]
                yield ScoredBatch(rows, batch.batch_rows, batch.shared, batch.log_z, batch.cut)

    def reads_blank(self, prompt: str) -> bool:
        """Can score_vocab read this prompt's blank (a causal LM: only where it ends the
        sentence)?"""
        return self.blank_anywhere

    def _in_place(
        self, prompts: list[str], words: Sequence[str], progress: bool | tqdm
    ) -> Iterator[ScoredBatch]:
        """Each word put in each prompt's blank. The caller's bar (a run's, counting prompts)
        advances a prompt at a time; the sentences scored, a prompt's words each, have their
        own bar (total and time left), as a prompt of a 50,000-word vocabulary takes long."""
        self._require("words", "score words in a blank inside a sentence")
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
            for indices, scores in self._words_in_place(unique, list(words), inner):
                yield from self._in_place_batches(indices, scores, rows_of)
                if outer is not None:
                    outer.update(len(indices))

    def _in_place_batches(
        self, indices: np.ndarray, scores: torch.Tensor, rows_of: list[np.ndarray]
    ) -> Iterator[ScoredBatch]:
        """A ScoredBatch per text of a _words_in_place batch (`scores`: [texts x words])."""
        for at, i in enumerate(indices):
            shared = scores[at].unsqueeze(0)
            yield ScoredBatch(
                rows=torch.as_tensor(rows_of[i], device=self.device),
                batch_rows=torch.zeros(len(rows_of[i]), dtype=torch.long, device=self.device),
                shared=shared,
                log_z=torch.logsumexp(shared, dim=-1),
            )

    def score_spans(
        self,
        templates: Sequence[str],
        spans: Sequence[str],
        *,
        scoring: str = "l2r",
        progress: bool | tqdm = True,
        cache: bool = True,
    ) -> SpanScores:
        """Score every span in place of the `<mask>` of every template (`<mask>` once per
        template; the span replaces it, with the text around it unchanged). Each distinct
        (template, span) is scored once; the result does not depend on the batch size.
        `cache=False`: a causal LM scores each sentence whole instead of reusing the text
        before the blank (the plain way, for comparison: the scores are the same); a masked LM
        always shares its prefix tree's rows."""
        self._require("spans", "score candidate spans")
        check_choice(option("--span-scoring"), scoring, SPAN_SCORINGS)
        unique_t, template_of = distinct(templates)
        unique_s, span_of = distinct(spans)
        scores = self._span_scores(unique_t, unique_s, scoring, progress, cache)
        return scores.expanded(template_of, span_of)

    def encode(
        self, texts: Sequence[str], *, pooling: str | None = None, progress: bool | tqdm = True
    ) -> tuple[np.ndarray, int]:
        """Frozen features, [texts x hidden] float32, and the number of texts cut to fit
        (pooling: the family's default when None)."""
        self._require("encode", "encode texts into features")
        return self._encode(list(texts), pooling, progress)

    def label_probabilities(
        self, premises: Sequence[str], hypotheses: Sequence[str], *, progress: bool | tqdm = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """[pairs x labels] NLI label probabilities, and which pairs were too long for the
        model (they lose the end of their premise). Each distinct pair is classified once."""
        self._require("classify", "classify premise-hypothesis pairs")
        return self._classify(list(premises), list(hypotheses), progress)

    def score_targets(
        self,
        prompts: Sequence[str],
        targets: Sequence[int],
        vocab_ids: np.ndarray,
        *,
        top_k: int = 5,
        progress: bool | tqdm = True,
    ) -> TargetScores:
        """Rank each target among the shared vocabulary at its prompt's blank.

        Args:
            prompts: texts with one `<mask>` each; repeated texts are scored once.
            targets: for each prompt, the target's position in the shared vocabulary.
            vocab_ids: this model's token id of each shared-vocabulary word.
            top_k: how many top shared-vocabulary words to return per prompt.
            progress: show a progress bar (or advance the caller's).
        """
        from tacit.models.reduce import Referee, rank_targets

        if len(prompts) != len(targets):
            raise ValueError("one target per prompt")
        batches = self.score_vocab(prompts, vocab_ids, progress=progress)
        referee = Referee(self, prompts, vocab_ids)  # ranks as at batch size 1: models.ties
        return rank_targets(batches, targets, top_k=top_k, device=self.device, referee=referee)

    # --- the families' hooks (declared in `capabilities`) -----------------------------------

    def _vocab_logits(
        self, texts: list[str], progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[tuple[np.ndarray, torch.Tensor, int]]:
        """(indices into `texts`, float32 logits over the whole vocabulary at each blank, how
        many of them were cut to fit) for batches of the distinct `texts`."""
        raise NotImplementedError

    def _words_in_place(
        self, texts: list[str], words: list[str], progress: bool | tqdm
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
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
    ) -> SpanScores:
        """SpanScores of distinct templates and spans."""
        raise NotImplementedError

    def _encode(
        self, texts: list[str], pooling: str | None, progress: bool | tqdm
    ) -> tuple[np.ndarray, int]:
        raise NotImplementedError

    def _classify(
        self, premises: list[str], hypotheses: list[str], progress: bool | tqdm
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    # --- shared by the families -------------------------------------------------------------

    def _scored_batches(
        self,
        rows_of: list[np.ndarray],
        batches: Iterator[tuple[np.ndarray, torch.Tensor, int]],
        vocab_ids: np.ndarray,
    ) -> Iterator[ScoredBatch]:
        """ScoredBatch for each (distinct-text indices, [texts x vocabulary] logits, cut) batch:
        `rows_of[i]` are the positions of the prompts whose text is distinct text i."""
        vocab_t = torch.as_tensor(vocab_ids, device=self.device)
        for indices, logits, cut in batches:
            rows = np.concatenate([rows_of[i] for i in indices])
            batch_rows = np.concatenate(
                [np.full(len(rows_of[i]), r) for r, i in enumerate(indices)]
            )
            yield ScoredBatch(
                rows=torch.as_tensor(rows, device=self.device),
                batch_rows=torch.as_tensor(batch_rows, device=self.device),
                shared=logits[:, vocab_t],
                log_z=torch.logsumexp(logits, dim=-1),
                cut=cut,
            )
