"""Seq2SeqScorer: an encoder-decoder LM pretrained by T5's span corruption (T5, mT5, Flan-T5,
UL2, LongT5, ...), asked the cloze question the way it was trained to answer it: sentinel
infilling.

The encoder reads the template with its blank written as the first sentinel, `A <extra_id_0>
has fur.` (with the tokenizer's special tokens: T5's closing `</s>`); the decoder's target is
what T5 was pretrained to produce for one masked span: the sentinel, the span, the next
sentinel, `<extra_id_0> bear <extra_id_1>` (Raffel et al. 2020, figure 2). Each target token's
term is log P(token | the encoder's input, the target tokens before it), the first one's
conditioned on the decoder's start token.

- Span mode: `sentence` is the target's log-probability (the opening sentinel's term, the
  span's tokens', the closing sentinel's); `span` is the span's tokens' alone. The opening term
  is the same for every span of a template; the closing term says that the span ends there
  (the analogue of the words after a causal LM's blank): without it a span's first words
  would always outscore it ("fur" over "fur and claws"). What follows the closing sentinel
  (`</s>`, or other blanks' spans) is not scored: the event is that the blank holds the span,
  whatever comes after. This is lm-evaluation-harness's seq2seq `loglikelihood(context,
  "<extra_id_0> SPAN <extra_id_1>")`; minicons' `Seq2SeqScorer.conditional_score` gives the
  same terms where its encoder input has T5's `</s>` (it encodes without special tokens).
- Vocabulary mode (a blank anywhere in the sentence): a one-token word w scores as the same
  target, log P(<extra_id_0> w <extra_id_1>), so it gets the same score, and rank, in both
  modes. The decoder's distribution after the opening sentinel gives log P(w | ...) for every
  word at once (`log_z` is its normaliser); one short decoder pass per (prompt, word) adds the
  two sentinels' terms, which is what this mode costs: a decoder row of three tokens per word
  of the shared vocabulary per prompt.
- A span is the tokens it has after a space (the shared vocabulary's in-sentence form,
  tacit.vocab.shared.in_sentence: `▁bear`), as T5's pretraining cut spans out of whole
  sentences; a lone `▁` that the tokenizer writes beside the sentinel is dropped (the space
  before the blank belongs to the span, and text glued to the blank's end has none).

Speed: the encoder runs once per distinct template and every span of the template reuses its
output (a view expanded over a batch whose rows share it); the decoder's rows, right-padded (a
decoder token never attends to the padding after it), are batched longest first across
templates, and only the target tokens' log-probabilities are read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import AutoModelForSeq2SeqLM
from transformers.modeling_outputs import BaseModelOutput

from tacit.core.blank import MASK
from tacit.core.choices import POOLINGS, check_choice
from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option
from tacit.models.answers import SpanTokens
from tacit.models.base import SpanScores, VocabScores, progress_bar
from tacit.models.batching import longest_first_batches, padded
from tacit.models.causal import logsumexp_rows
from tacit.models.hf_scorer import HFScorer
from tacit.models.meter import quiet

# the blank in the encoder's input, and the sentinel that closes its span in the target
SENTINELS = ("<extra_id_0>", "<extra_id_1>")


class Seq2SeqScorer(HFScorer):
    """A T5-style encoder-decoder LM with its tokenizer on a device (see the module docstring).

    Examples:
        >>> scorer = Seq2SeqScorer("google/flan-t5-small")  # doctest: +SKIP
        >>> spans = ["A bear", "A knife"]
        >>> scores = scorer.score_spans(["<mask> has fur."], spans)  # doctest: +SKIP
        >>> scores.sentence  # log P(<extra_id_0> SPAN <extra_id_1> | input)  # doctest: +SKIP
    """

    kind = "seq2seq"
    capabilities = frozenset({"vocab", "spans", "encode"})
    auto_class = AutoModelForSeq2SeqLM
    head = "seq2seq-LM"

    def check_tokenizer(self) -> None:
        missing = [s for s in SENTINELS if s not in self.tokenizer.get_vocab()]
        if missing:
            raise TacitError(
                f"the tokenizer of {self.name!r} has no {missing[0]} sentinel: tacit scores "
                "encoder-decoder models by T5's sentinel infilling (T5, mT5, Flan-T5, UL2); "
                "models that rewrite the whole sentence (BART, mBART) or translate (Marian) "
                "are not supported"
            )

    @property
    def sentinel_ids(self) -> tuple[int, int]:
        """The ids of the blank's sentinel and of the one that closes its span."""
        vocab = self.tokenizer.get_vocab()
        return vocab[SENTINELS[0]], vocab[SENTINELS[1]]

    @property
    def start_id(self) -> int:
        """The decoder's first input token (T5's `<pad>`), as the model's config says."""
        config = self.model.config
        start = getattr(config, "decoder_start_token_id", None)
        return int(start if start is not None else self.pad_id)

    @property
    def pad_id(self) -> int:
        tok = self.tokenizer
        return next(i for i in (tok.pad_token_id, tok.eos_token_id, 0) if i is not None)

    def record(self) -> Any:
        record = super().record()
        record["mask_token"] = SENTINELS[0]
        record["infilling"] = {
            "input": f"the template, {SENTINELS[0]} in its blank",
            "target": f"{SENTINELS[0]} SPAN {SENTINELS[1]}",
            "decoder_start": str(self.tokenizer.convert_ids_to_tokens(self.start_id)),
        }
        return record

    # --- tokenising -------------------------------------------------------------------------

    def encoder_ids(self, templates: Sequence[str]) -> list[list[int]]:
        """Each template's encoder input: its `<mask>` written as the first sentinel, with the
        tokenizer's special tokens (T5's `</s>` at the end); a lone space token the tokenizer
        writes before the sentinel, or after it where the text goes on without a space, is
        dropped (see the module docstring)."""
        for template in templates:
            if template.count(MASK) != 1:
                raise TacitError(f"prompt {template!r} must contain {MASK} exactly once")
        encoded = self.tokenizer([t.replace(MASK, SENTINELS[0]) for t in templates])["input_ids"]
        blank = self.sentinel_ids[0]
        for template, ids in zip(templates, encoded):
            if ids.count(blank) != 1:
                raise TacitError(f"prompt {template!r} does not encode to exactly one sentinel")
            at = ids.index(blank)
            glued = not template.partition(MASK)[2][:1].isspace()
            if glued and at + 1 < len(ids) and self._is_lone_space(ids[at + 1]):
                del ids[at + 1]
            if at > 0 and self._is_lone_space(ids[at - 1]):
                del ids[at - 1]
        return encoded

    def targets(self, spans: Sequence[str]) -> list[list[int]]:
        """Each span's decoder target: the blank's sentinel, the span's tokens after a space,
        the closing sentinel."""
        from tacit.vocab.shared import in_sentence

        opening, closing = self.sentinel_ids
        return [[opening, *ids, closing] for ids in in_sentence(list(spans), self.tokenizer)]

    def _fitted(self, texts: Sequence[str], cut_to_fit: bool) -> tuple[list[list[int]], np.ndarray]:
        """encoder_ids, each longer than the model takes cut to a window around its sentinel
        that keeps its last token (`</s>`) with `cut_to_fit`, else refused; and which were cut."""
        encoded = self.encoder_ids(texts)
        cut = np.zeros(len(encoded), dtype=bool)
        for n, ids in enumerate(encoded):
            if len(ids) <= self.max_tokens:
                continue
            if not cut_to_fit:
                raise TacitError(
                    f"{shorten(repr(texts[n]))} is {len(ids)} tokens: longer than {self.name} "
                    f"takes ({self.max_tokens})"
                )
            at, width = ids.index(self.sentinel_ids[0]), self.max_tokens - 1
            start = max(0, min(at - width // 2, len(ids) - 1 - width))
            encoded[n], cut[n] = [*ids[start : start + width], ids[-1]], True
        return encoded, cut

    # --- running ----------------------------------------------------------------------------

    def _encoder_states(self, encoded: list[list[int]]) -> list[torch.Tensor]:
        """Each input's last encoder layer, [tokens x hidden] on the device (run once per
        input, batched longest first)."""
        states: list[torch.Tensor | None] = [None] * len(encoded)
        lengths = [len(e) for e in encoded]

        def run(indices: np.ndarray) -> torch.Tensor:
            ids, attention = padded(encoded, indices, self.pad_id, self.device)
            with self.runtime.compile_errors():
                encoder = self.model.get_encoder()
                return encoder(input_ids=ids, attention_mask=attention).last_hidden_state

        for indices, hidden in longest_first_batches(lengths, self, run):
            for row, i in enumerate(indices):
                states[i] = hidden[row, : lengths[i]]
        return [s for s in states if s is not None]

    def _batch_states(
        self, states: list[torch.Tensor], inputs: np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The encoder states of a batch's rows (`inputs`: each row's input) and their attention
        mask: one input's states expanded over the batch where every row shares it (views, no
        mask), else each row's padded to the longest (a copy, with its mask)."""
        first = int(inputs[0])
        if (inputs == first).all():
            return states[first].unsqueeze(0).expand(len(inputs), -1, -1), None
        rows = [states[int(i)] for i in inputs]
        width = max(len(r) for r in rows)
        stacked = rows[0].new_zeros((len(rows), width, rows[0].shape[-1]))
        mask = torch.zeros((len(rows), width), dtype=torch.long, device=self.device)
        for n, r in enumerate(rows):
            stacked[n, : len(r)] = r
            mask[n, : len(r)] = 1
        return stacked, mask

    def _target_logprobs(
        self,
        states: list[torch.Tensor],
        input_of: np.ndarray,
        targets: list[list[int]],
        bar: tqdm,
        columns: Sequence[int] | None = None,
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(indices, [batch x longest target] float32 log P(target token j | the encoder's input,
        the start token and target tokens < j)) for batches of the rows, longest target first;
        row i decodes `targets[i]` against the encoder states of input `input_of[i]`. With
        `columns`, only those target positions are read (the others' logsumexp is skipped)."""

        def run(indices: np.ndarray) -> np.ndarray:
            decoder = [[self.start_id, *targets[i][:-1]] for i in indices]
            ids, _ = padded(decoder, np.arange(len(indices)), self.pad_id, self.device)
            wanted, _ = padded(targets, indices, self.pad_id, self.device)
            hidden, mask = self._batch_states(states, input_of[indices])
            with self.runtime.compile_errors():
                logits = self.model(
                    encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
                    attention_mask=mask,
                    decoder_input_ids=ids,
                    use_cache=False,
                ).logits
            if columns is not None:
                logits, wanted = logits[:, list(columns)], wanted[:, list(columns)]
            rows = logits.reshape(-1, logits.shape[-1])
            picked = rows.gather(1, wanted.reshape(-1, 1)).squeeze(1).float()
            return (picked - logsumexp_rows(rows)).reshape(wanted.shape).cpu().numpy()

        for indices, result in longest_first_batches([len(t) for t in targets], self, run):
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
        """Every (distinct) span's target decoded against every (distinct) template's encoder
        input, scored as the module docstring says (`sentence`, `span`, `n_tokens`; with
        `tokens`, the span's target tokens, the sentinels left out, and their terms). The
        decoder reads left to right whatever the `scoring`. `cache=False` runs the encoder
        again for every pair (the plain way, for comparison); the scores are the same."""
        n_t, n_s = len(templates), len(spans)
        encoded, _ = self._fitted(templates, cut_to_fit=False)
        targets = self.targets(spans)
        pair_t = np.repeat(np.arange(n_t), n_s)
        pair_s = np.tile(np.arange(n_s), n_t)
        inputs = encoded if cache else [encoded[t] for t in pair_t]
        input_of = pair_t if cache else np.arange(n_t * n_s)
        rows = [targets[s] for s in pair_s]
        sentence = np.zeros(n_t * n_s)
        span = np.zeros(n_t * n_s)
        kept = np.empty(n_t * n_s, dtype=object) if tokens else None
        names = [tuple(self.tokenizer.convert_ids_to_tokens(t[1:-1])) for t in targets] * tokens
        with (
            progress_bar(progress, n_t * n_s, f"scoring spans {self.name}", "sentence") as bar,
            torch.inference_mode(),
        ):
            states = self._encoder_states(inputs)
            for indices, result in self._target_logprobs(states, input_of, rows, bar):
                for at, i in enumerate(indices):
                    lp = result[at, : len(rows[i])].astype(np.float64)
                    sentence[i], span[i] = lp.sum(), lp[1:-1].sum()
                    if kept is not None:
                        kept[i] = SpanTokens(names[pair_s[i]], lp[1:-1])
        decoded = sum(len(t) for t in rows)  # the start token and every target token but the last
        n_tokens = np.array([len(t) - 2 for t in targets], dtype=np.int64)
        return SpanScores(
            span=span.reshape(n_t, n_s),
            n_tokens=np.tile(n_tokens, (n_t, 1)),
            sentence=sentence.reshape(n_t, n_s),
            work={
                "span_tokens": sum(len(e) for e in inputs) + decoded,
                "span_tokens_naive": n_s * sum(len(e) for e in encoded) + decoded,
            },
            tokens=None if kept is None else kept.reshape(n_t, n_s),
        )

    # --- vocabulary mode --------------------------------------------------------------------

    def _vocab_logits(
        self, texts: list[str], progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[tuple[np.ndarray, torch.Tensor, int]]:
        """The decoder's distribution after the blank's sentinel (its first token is the span's
        first), over the whole vocabulary, for batches of the texts; cut to fit, a text keeps
        a window around its blank."""
        encoded, cut = self._fitted(texts, cut_to_fit)
        opening = [self.start_id, self.sentinel_ids[0]]

        def run(indices: np.ndarray) -> torch.Tensor:
            ids, attention = padded(encoded, indices, self.pad_id, self.device)
            decoder = torch.tensor([opening] * len(indices), device=self.device)
            with self.runtime.compile_errors():
                out = self.model(input_ids=ids, attention_mask=attention, decoder_input_ids=decoder)
            return out.logits[:, 1].float()

        with (
            progress_bar(progress, len(texts), f"scoring {self.name}", "text") as bar,
            torch.inference_mode(),
        ):
            for indices, logits in longest_first_batches([len(e) for e in encoded], self, run):
                yield indices, logits, int(cut[indices].sum())
                bar.update(len(indices))

    def _vocab_scores(
        self, texts: list[str], vocab_ids: np.ndarray, progress: bool | tqdm, cut_to_fit: bool
    ) -> Iterator[VocabScores]:
        """The first token's logits at each word (HFScorer's) plus the two sentinels' terms:
        `shared - log_z` is log P(<extra_id_0> w <extra_id_1>), the word's span-mode score."""
        for indices, shared, log_z, cut in super()._vocab_scores(
            texts, vocab_ids, progress, cut_to_fit
        ):
            batch = [texts[int(i)] for i in indices]
            yield indices, shared + self._sentinel_terms(batch, vocab_ids, cut_to_fit), log_z, cut

    def _sentinel_terms(
        self, texts: list[str], vocab_ids: np.ndarray, cut_to_fit: bool
    ) -> torch.Tensor:
        """[texts x words] log P(<extra_id_0> | start) + log P(<extra_id_1> | start,
        <extra_id_0>, w): the target <extra_id_0> w <extra_id_1> decoded for every word,
        the rows of one text batched together (its encoder states expanded over them)."""
        encoded, _ = self._fitted(texts, cut_to_fit)
        opening, closing = self.sentinel_ids
        words = np.asarray(vocab_ids, dtype=np.int64)
        targets = [[opening, int(w), closing] for _ in texts for w in words]
        input_of = np.repeat(np.arange(len(texts)), len(words))
        terms = np.zeros(len(targets))
        with torch.inference_mode(), quiet(len(targets)) as silent:  # counted in a calibration
            states = self._encoder_states(encoded)
            rows = self._target_logprobs(states, input_of, targets, silent, columns=(0, 2))
            for indices, result in rows:
                terms[indices] = result[:, 0].astype(np.float64) + result[:, 1]
        shaped = terms.reshape(len(texts), len(words))
        return torch.as_tensor(shaped, dtype=torch.float32, device=self.device)

    # --- features ---------------------------------------------------------------------------

    def _encode(
        self, texts: list[str], pooling: str | None, progress: bool | tqdm
    ) -> tuple[np.ndarray, int]:
        """The encoder's last hidden layer, float32: at the blank's sentinel (`mask`, the
        default: texts with a `<mask>`) or averaged over the text's tokens, `</s>` included
        (`mean`). The decoder does not run. Texts too long are cut around their sentinel
        (`mask`) or keep their start (`mean`)."""
        pooling = check_choice(option("--pooling"), pooling or "mask", POOLINGS)
        if pooling == "last":
            raise self.unsupported(
                f"pool at the last token (use {option('--pooling')} mask or mean)"
            )
        if pooling == "mask":
            encoded, cut_flags = self._fitted(texts, cut_to_fit=True)
        else:
            encoded = self.tokenizer(list(texts))["input_ids"]
            cut_flags = np.array([len(e) > self.max_tokens for e in encoded], dtype=bool)
            encoded = [e if len(e) <= self.max_tokens else e[: self.max_tokens] for e in encoded]
        blank = self.sentinel_ids[0]

        def forward(indices: np.ndarray) -> torch.Tensor:
            ids, attention = padded(encoded, indices, self.pad_id, self.device)
            with self.runtime.compile_errors():
                hidden = self.model.get_encoder()(input_ids=ids, attention_mask=attention)
            states = hidden.last_hidden_state.float()
            if pooling == "mask":
                return states[ids == blank]  # one sentinel per row, in row order
            weights = attention.unsqueeze(-1).float()
            return (states * weights).sum(1) / weights.sum(1)

        return self._pooled(encoded, forward, progress), int(cut_flags.sum())
