"""CausalLMScorer: a decoder-only LM (GPT-2, Pythia, OPT, Llama, ...) on the same probes.

- Span mode: a candidate span in a template's blank is scored by the log-probability of the
  whole sentence with the span in place, sum over its tokens of log P(token | every token
  before), the first conditioned on the start token (start_token: one rule per kind of
  tokenizer, or the `start_token` loading option). The words around the span are the same
  for every span, so this ranks spans as P(span | the rest of the sentence) does (DESIGN.md,
  "Scoring the blank").
- Vocabulary mode, only where the blank ends the sentence: each word of the shared vocabulary
  (leading-space form) scored as span mode scores it, less the text before the blank:
  log P(w | before) + log P(after | before, w), exactly where a reduction reads it
  (tacit.models.causal_words).
- Generation (`generate`): what the model says to a chat's messages (its chat template) or a
  plain prompt, batched, greedy or seeded sampling (tacit.models.causal_generate).

Speed: the text before the blank is the same for every span of a template (and for every
template that begins with the same words), so it runs once and its key/value cache is reused
(expanded over the batch, never copied) for every sentence that starts with it; only the span's
and the suffix's tokens run again, batched longest first across those templates, and only their
log-probabilities are read. Batches are right-padded and a causal model's tokens never attend
to the padding after them, so no attention mask is passed (the model keeps its causal fast
path) and each row's scores are those of the sentence alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from inspect import signature
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM

from tacit.core.blank import MASK, split_blank
from tacit.core.choices import POOLINGS, check_choice
from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option
from tacit.models.answers import (
    Completion,
    GenerationRequest,
    Needed,
    Sampling,
    ScoredBatch,
    SpanTokens,
    TokenScores,
)
from tacit.models.base import SpanScores, progress_bar
from tacit.models.batching import longest_first_batches, padded
from tacit.models.causal_cache import (
    Pair,
    PrefixRun,
    cache_layers,
    expanded_cache,
    length_bands,
    shared_prefixes,
    tokenised_pairs,
)
from tacit.models.chat import chat_prefix, with_system
from tacit.models.hf_scorer import HFScorer
from tacit.models.meter import longest_first
from tacit.models.start import StartToken, start_token

if TYPE_CHECKING:
    from tacit.models.huggingface import InProcessRecord

# What may follow a blank that ends its sentence: nothing, or final punctuation only.
SENTENCE_END = re.compile(r"\s*[.!?]*\s*")
CACHE_MIN_SPANS = 8  # a prefix shared by fewer sentences is scored whole, batched with others
NONE = np.zeros(0)  # no tokens before
LSE_ROWS = 64  # logits rows per logsumexp: a chunk stays in the CPU's cache (2-3x faster)


class CausalLMScorer(HFScorer):
    """A decoder-only LM with its tokenizer on a device (see the module docstring).

    Examples:
        >>> scorer = CausalLMScorer("gpt2")  # doctest: +SKIP
        >>> spans = ["A bear", "A knife"]
        >>> scores = scorer.score_spans(["<mask> has fur."], spans)  # doctest: +SKIP
        >>> scores.sentence  # doctest: +SKIP
    """

    kind = "causal"
    capabilities = frozenset({"vocab", "words", "spans", "encode", "tokens", "generate"})
    blank_anywhere = False  # the next token: only a blank that ends the sentence
    auto_class = AutoModelForCausalLM
    head = "causal-LM"
    start: StartToken  # set by check_tokenizer, before the weights load

    @property
    def _cache_keyword(self) -> str:
        """What this transformers calls the forward pass's key/value cache argument."""
        parameters = signature(type(self.model).forward).parameters
        return "cache" if "cache" in parameters else "past_key_values"

    takes_chat_template: ClassVar[bool] = True

    def check_tokenizer(self) -> None:
        """Find the start token (start_token: one a sentence's first token is conditioned on),
        or refuse the tokenizer in one line; with chat_template, the chat prefix that takes
        its place (tacit.models.chat), or refuse the template in one line."""
        self.start = start_token(self.tokenizer, self.spec.start_token, self.name)
        self.chat: dict[str, Any] | None = None
        self._start_ids = [self.start.id]
        if self.spec.chat_template is not None:
            prefix, self.chat = chat_prefix(
                self.tokenizer, self.spec.chat_template, self.name, self.spec.system
            )
            self._start_ids = self.tokenizer(prefix, add_special_tokens=False)["input_ids"]

    @property
    def start_id(self) -> int:
        """The token every sentence starts from (start_token)."""
        return self.start.id

    @property
    def _n_start(self) -> int:
        """How many tokens every sentence follows: the start token, or an instruct model's
        chat prefix (tacit.models.chat); they are conditioned on, never scored."""
        return len(self._start_ids)

    def record(self) -> InProcessRecord:
        """The runtime's record, with the start token and the rule that chose it."""
        record = super().record()
        record["start_token"] = {
            "token": self.start.text,
            "id": self.start.id,
            "rule": self.start.rule,
        }
        if self.chat is not None:
            record["start_token"]["replaced_by"] = "chat_template"
            record["chat_template"] = {**self.chat, "prefix_tokens": self._n_start}
        return record

    @property
    def pad_id(self) -> int:
        tok = self.tokenizer
        return next(i for i in (tok.pad_token_id, tok.eos_token_id, 0) if i is not None)

    # --- tokenising -------------------------------------------------------------------------

    def _encode_texts(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids without special tokens (the start token is added where it is needed)."""
        if not texts:
            return []
        return self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]

    def split_at_blank(self, template: str, *, at_end: bool = False) -> tuple[str, str, str]:
        """(text before the blank, the whitespace before it, text after it). The whitespace
        belongs to the word in the blank (leading-space form). With `at_end`, the blank must
        end the sentence: only final punctuation (`.`, `!`, `?`) may follow it."""
        prefix, gap, after = split_blank(template)
        if at_end and not SENTENCE_END.fullmatch(after):
            raise TacitError(
                f"{self.name} is a causal model: it scores a blank over the vocabulary only "
                f"where the blank ends the sentence (followed by nothing or by . ! ?), not in "
                f"{shorten(repr(template))}; score candidate spans instead (e.g. "
                "`probe retrieve --candidates concepts`)"
            )
        return prefix, gap, after

    def _pairs(
        self, templates: Sequence[str], spans: Sequence[str], cache: bool
    ) -> tuple[list[list[int]], list[list[Pair]]]:
        """Each template's prefix ids and each (template, span) pair tokenised (see
        tacit.models.causal_cache.tokenised_pairs)."""
        split = [self.split_at_blank(t) for t in templates]
        return tokenised_pairs(self, split, spans, cache=cache)

    # --- running ----------------------------------------------------------------------------

    def _target_logprobs(
        self, ids: torch.Tensor, targets: torch.Tensor, past: Any = None
    ) -> torch.Tensor:
        """[batch x tokens] float32 log P(targets[:, j] | ids up to j) for right-padded rows (no
        attention mask: see the module docstring): the target's logit less the logsumexp over
        the vocabulary, taken LSE_ROWS rows at a time (no [batch x tokens x vocab] temporary)."""
        cache = {self._cache_keyword: past} if past is not None else {}
        with self.runtime.compile_errors():
            logits = self.model(input_ids=ids, use_cache=False, **cache).logits
        rows = logits.reshape(-1, logits.shape[-1])
        picked = rows.gather(1, targets.reshape(-1, 1)).squeeze(1).float()
        return (picked - logsumexp_rows(rows)).reshape(targets.shape)

    def _banded_batches(
        self, lengths: list[int], run: Callable[[np.ndarray], np.ndarray]
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """longest_first_batches, on a CPU within bands of similar length (length_bands): there
        a batch costs its rows x its width whether full or not, so a batch cut short where the
        rows get much shorter saves their padding (on a GPU, full batches)."""
        if self.device.type != "cpu":
            yield from longest_first_batches(lengths, self, run)
            return
        for band in length_bands(lengths):

            def in_band(chosen: np.ndarray, band: np.ndarray = band) -> np.ndarray:
                return run(band[chosen])

            for indices, result in longest_first_batches([lengths[i] for i in band], self, in_band):
                yield band[indices], result

    def _score_whole(
        self, sequences: list[list[int]], bar: tqdm
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(indices, [batch x longest-1] log P(token j+1 | tokens <= j)) of start+ids sequences,
        batched longest first, for sequences of at least two tokens."""

        def run(indices: np.ndarray) -> np.ndarray:
            ids, _ = padded(sequences, indices, self.pad_id, self.device)
            if ids.shape[1] == self._n_start:  # the start tokens alone: an empty sentence
                return np.zeros((len(indices), 0))
            logprobs = self._target_logprobs(ids[:, :-1], ids[:, 1:]).cpu().numpy()
            return logprobs[:, self._n_start - 1 :]  # the sentence's tokens' only

        for indices, result in self._banded_batches([len(s) for s in sequences], run):
            yield indices, result
            bar.update(len(indices))

    def _run_prefix(self, prefix: Sequence[int]) -> PrefixRun:
        """Start token (or chat prefix) + prefix, run once (see PrefixRun)."""
        sequence = torch.tensor([[*self._start_ids, *prefix]], device=self.device)
        with self.runtime.compile_errors():
            out = self.model(input_ids=sequence, use_cache=True)
        logprobs = torch.log_softmax(out.logits[0].float(), dim=-1)
        prefix_lp = logprobs[:-1].gather(1, sequence[0, 1:].unsqueeze(1)).squeeze(1)
        cache = out.get("cache")  # transformers 5; 4 calls it past_key_values
        kv = cache_layers(cache if cache is not None else out.past_key_values)
        prefix_lp = prefix_lp[self._n_start - 1 :]  # the prefix's tokens' only
        return PrefixRun(prefix_lp.double().cpu().numpy(), logprobs[-1], kv)

    def _after_prefix(
        self, run: PrefixRun, rests: list[list[int]], bar: tqdm
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """For batches of the rests: (indices, [batch x longest] log P(rest token j | prefix,
        rest tokens < j)), every batch reusing the prefix's key/value cache."""

        def score(indices: np.ndarray) -> np.ndarray:
            first = torch.tensor([rests[i][0] for i in indices], device=self.device)
            first_lp = run.following[first].unsqueeze(1)
            if max(len(rests[i]) for i in indices) == 1:
                return first_lp.cpu().numpy()
            ids, _ = padded(rests, indices, self.pad_id, self.device)
            past = expanded_cache(run.kv, len(indices), self.model.config)
            rest_lp = self._target_logprobs(ids[:, :-1], ids[:, 1:], past)
            return torch.cat([first_lp, rest_lp], dim=1).cpu().numpy()

        for indices, result in self._banded_batches([len(r) for r in rests], score):
            yield indices, result
            bar.update(len(indices))

    def _span_scores(
        self,
        templates: list[str],
        spans: list[str],
        scoring: str,
        progress: bool | tqdm,
        cache: bool,
        tokens: bool = False,
    ) -> SpanScores:
        """Every (distinct) span in place of every (distinct) template's `<mask>`, scored as the
        module docstring says (`span`, `n_tokens`, `sentence`; with `tokens`, the span's tokens
        and their terms). A causal LM reads left to right whatever the `scoring` (both choices
        give the same scores). `cache=False` scores every sentence whole (the plain way, for
        comparison); the scores are the same."""
        prefixes, pairs = self._pairs(templates, spans, cache)
        n_t, n_s = len(templates), len(spans)
        span = np.zeros((n_t, n_s))
        sentence = np.zeros((n_t, n_s))
        n_tokens = np.array([[p.in_span.sum() for p in row] for row in pairs], dtype=np.int64)
        grid = np.empty((n_t, n_s), dtype=object) if tokens else None

        def add(key: tuple[int, int], logprobs: np.ndarray, before: np.ndarray = NONE) -> None:
            """A sentence's scores from its tokens' log-probabilities (the cached prefix's,
            `before`, then the rest's: `logprobs`, padded)."""
            t, s = key
            pair = pairs[t][s]
            lp = np.concatenate([before, logprobs[: len(pair.ids) - pair.start]])
            sentence[t, s] = lp.sum()
            span[t, s] = lp[pair.in_span].sum()
            if grid is not None:
                ids = np.asarray(pair.ids)[pair.in_span].tolist()
                names = tuple(self.tokenizer.convert_ids_to_tokens(ids))
                grid[t, s] = SpanTokens(names, lp[pair.in_span].astype(np.float64))

        groups = shared_prefixes(prefixes, pairs, CACHE_MIN_SPANS)
        in_cache = {member for members in groups.values() for member in members}
        whole = [(t, s) for t in range(n_t) for s in range(n_s) if (t, s) not in in_cache]
        sequences = [[*self._start_ids, *pairs[t][s].ids] for t, s in whole]
        # tokens run as input: a sentence scored whole runs start + every token but its last
        naive_tokens = sum(self._n_start - 1 + len(p.ids) for row in pairs for p in row)
        ran = sum(len(q) - 1 for q in sequences)
        # the sentences' tokens run, in the order they are (each batching longest first)
        order = [
            *(
                n
                for prefix, members in groups.items()
                for n in longest_first([len(pairs[t][s].ids) - len(prefix) for t, s in members])
            ),
            *longest_first([len(q) for q in sequences]),
        ]
        with (
            progress_bar(
                progress, n_t * n_s, f"scoring spans {self.name}", "sentence", order
            ) as bar,
            torch.inference_mode(),
        ):
            for prefix, members in groups.items():
                rests = [pairs[t][s].ids[len(prefix) :] for t, s in members]
                ran += self._n_start + len(prefix) + sum(len(r) - 1 for r in rests)
                run = self._run_prefix(prefix)
                for indices, result in self._after_prefix(run, rests, bar):
                    for at, i in enumerate(indices):
                        add(members[i], result[at], run.prefix_lp)
            for indices, result in self._score_whole(sequences, bar):
                for at, i in enumerate(indices):
                    add(whole[i], result[at])
        return SpanScores(
            span=span,
            n_tokens=n_tokens,
            sentence=sentence,
            work={"span_tokens": ran, "span_tokens_naive": naive_tokens},
            tokens=grid,
        )

    # --- every token of a text -------------------------------------------------------------

    def _token_scores(self, texts: list[str], pll: str, progress: bool | tqdm) -> list[TokenScores]:
        """Each token's log P(token | the start token and the tokens before it): the start
        token (start_id, or an instruct model's chat prefix) and the text's tokens run whole, as
        a sentence of span mode does (_score_whole: batched longest first). `pll` is a masked
        LM's; a causal LM ignores it."""
        encoded = self._text_tokens(texts, special=False, added=self._n_start)
        sequences = [[*self._start_ids, *ids] for ids in encoded["input_ids"]]
        logprobs: list[np.ndarray] = [NONE] * len(texts)
        with (
            progress_bar(progress, len(texts), f"token scores {self.name}", "text") as bar,
            torch.inference_mode(),
        ):
            for indices, result in self._score_whole(sequences, bar):
                for at, i in enumerate(indices):
                    logprobs[i] = result[at, : len(sequences[i]) - self._n_start]
                    logprobs[i] = logprobs[i].astype(np.float64)
        return [
            TokenScores(
                tuple(self.tokenizer.convert_ids_to_tokens(ids)),
                np.asarray(offsets, dtype=np.int64).reshape(-1, 2),
                lp,
            )
            for ids, offsets, lp in zip(encoded["input_ids"], encoded["offset_mapping"], logprobs)
        ]

    # --- vocabulary mode --------------------------------------------------------------------

    def _next_token_logits(
        self, encoded: list[list[int]], progress: bool | tqdm, desc: str
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
        """(indices, float32 logits over the whole vocabulary after each sequence's last
        token), batches right-padded and longest first."""
        lengths = torch.tensor([len(e) for e in encoded], device=self.device)

        def run(indices: np.ndarray) -> torch.Tensor:
            ids, attention = padded(encoded, indices, self.pad_id, self.device)
            with self.runtime.compile_errors():
                logits = self.model(input_ids=ids, attention_mask=attention).logits
            last = lengths[torch.as_tensor(indices, device=self.device)] - 1
            return logits[torch.arange(len(indices), device=self.device), last].float()

        with (
            progress_bar(progress, len(encoded), f"{desc} {self.name}", "text") as bar,
            torch.inference_mode(),
        ):
            for indices, result in longest_first_batches([len(e) for e in encoded], self, run):
                yield indices, result
                bar.update(len(indices))

    def _with_start(
        self, texts: Sequence[str], cut_to_fit: bool, *, room: int = 0
    ) -> tuple[list[list[int]], np.ndarray]:
        """Start token + each text's tokens, leaving `room` tokens free for what follows
        them; too long ones keep their end (with cut_to_fit) or are an error. Returns the
        token lists and which were cut (a bool per text)."""
        limit = self.max_tokens - room
        encoded = [[*self._start_ids, *ids] for ids in self._encode_texts(texts)]
        cut = np.zeros(len(encoded), dtype=bool)
        for n, ids in enumerate(encoded):
            if len(ids) > limit:
                if not cut_to_fit:
                    following = f" and {room} tokens after it" if room else ""
                    raise TacitError(
                        f"{shorten(repr(texts[n]))} is {len(ids)} tokens{following}: longer "
                        f"than {self.name} takes ({self.max_tokens})"
                    )
                keep = limit - self._n_start
                if keep < 1:
                    raise TacitError(
                        f"{self.name}: its start tokens (chat prefix) are {self._n_start} "
                        f"tokens, leaving none of the {self.max_tokens} it takes for the text"
                    )
                encoded[n], cut[n] = [*self._start_ids, *ids[len(ids) - keep :]], True
        return encoded, cut

    def _text_batches(
        self,
        texts: list[str],
        rows_of: list[np.ndarray],
        vocab_ids: np.ndarray,
        needed: Needed | None,
        progress: bool | tqdm,
        cut_to_fit: bool,
    ) -> Iterator[ScoredBatch]:
        """Each word with the text after the blank counted, exactly where `needed` reads
        (tacit.models.causal_words); texts with nothing after their blank are read at it, as
        every family reads a blank (the score cache included)."""
        from tacit.models.causal_words import vocab_scores

        def at_blank(chosen: list[int]) -> Iterator[ScoredBatch]:
            return super(CausalLMScorer, self)._text_batches(
                [texts[i] for i in chosen],
                [rows_of[i] for i in chosen],
                vocab_ids,
                None,
                progress,
                cut_to_fit,
            )

        yield from vocab_scores(
            self, texts, rows_of, vocab_ids, needed, progress, cut_to_fit, at_blank
        )

    def _vocab_logits(
        self, texts: list[str], progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[tuple[np.ndarray, torch.Tensor, int]]:
        """The next-token distribution after the text before each prompt's blank, which must
        end the sentence (see split_at_blank); cut to fit, a prompt keeps its end."""
        before = [self.split_at_blank(p, at_end=True)[0] for p in texts]
        encoded, cut = self._with_start(before, cut_to_fit)
        for indices, logits in self._next_token_logits(encoded, progress, "scoring"):
            yield indices, logits, int(cut[indices].sum())

    def reads_blank(self, prompt: str) -> bool:
        """Does the prompt's blank end its sentence (the next-token question applies)?"""
        return bool(SENTENCE_END.fullmatch(prompt.partition(MASK)[2]))

    def _words_in_place(
        self, texts: list[str], words: list[str], progress: bool | tqdm
    ) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
        """Every word put in the blank of each text and its sentence scored (score_spans, all
        texts in one pass, so texts that begin alike share their prefix's run and are batched
        together): a word's score is log P(sentence), which ranks words as P(word | the rest)
        does. `progress` (the base's bar of sentences) advances a sentence at a time."""
        scores = self.score_spans(texts, words, progress=progress)
        assert scores.sentence is not None
        sentence = torch.as_tensor(scores.sentence, dtype=torch.float32, device=self.device)
        yield np.arange(len(texts)), sentence

    # --- generation -------------------------------------------------------------------------

    def chats(self) -> bool:
        """An instruct model: its tokenizer carries a chat template, or one was given."""
        return self.spec.chat_template is not None or bool(
            getattr(self.tokenizer, "chat_template", None)
        )

    def sent(self, request: GenerationRequest) -> dict[str, Any]:
        """The request's record, its messages with `system=`'s message where it adds one."""
        if request.messages is None:
            return request.record()
        return {"messages": with_system(request.messages, self.spec.system)}

    def _generate(
        self, requests: list[GenerationRequest], sampling: Sampling, progress: bool | tqdm
    ) -> list[list[Completion]]:
        """transformers' generate, batched and seeded as tacit.models.causal_generate says."""
        from tacit.models.causal_generate import generate

        return generate(self, requests, sampling, progress)

    # --- features ---------------------------------------------------------------------------

    def _encode(
        self, texts: list[str], pooling: str | None, progress: bool | tqdm
    ) -> tuple[np.ndarray, int]:
        """The last hidden layer, float32: at the text's last token (`last`, the one that has
        read the whole text) or averaged over the text's tokens (`mean`; the start token, which
        every text shares, left out). Texts too long keep their end. `<mask>`-pooling is a
        masked LM's; a causal model refuses it."""
        pooling = check_choice(option("--pooling"), pooling or "last", POOLINGS)
        if pooling == "mask":
            raise self.unsupported(f"pool at a <mask> (use {option('--pooling')} last or mean)")
        encoded, cut_flags = self._with_start(texts, cut_to_fit=True)
        cut = int(cut_flags.sum())
        lengths = torch.tensor([len(e) for e in encoded], device=self.device)

        def forward(indices: np.ndarray) -> torch.Tensor:
            ids, attention = padded(encoded, indices, self.pad_id, self.device)
            with self.runtime.compile_errors():
                hidden = self.model.base_model(input_ids=ids, attention_mask=attention)
            states = hidden.last_hidden_state.float()
            if pooling == "last":
                last = lengths[torch.as_tensor(indices, device=self.device)] - 1
                return states[torch.arange(len(indices), device=self.device), last]
            weights = attention.unsqueeze(-1).float()
            weights[:, : self._n_start] = 0  # the start token (or chat prefix)
            return (states * weights).sum(1) / weights.sum(1).clamp(min=1)

        return self._pooled(encoded, forward, progress), cut


def logsumexp_rows(rows: torch.Tensor) -> torch.Tensor:
    """float32 logsumexp of each row of a [rows x vocabulary] matrix, LSE_ROWS rows at a time:
    each chunk's temporaries stay in the CPU's cache, and none is as large as the matrix."""
    return torch.cat(
        [torch.logsumexp(rows[i : i + LSE_ROWS].float(), -1) for i in range(0, len(rows), LSE_ROWS)]
    )
