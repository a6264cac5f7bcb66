"""Generation by an in-process causal LM (CausalLMScorer.generate): transformers' own `generate`,
batched, with what tacit adds around it.

- The input: a chat's messages written by the chat template (tacit.models.chat.conversation:
  the tokenizer's own, or `chat_template=`, with `system=` as for scoring), the assistant's
  turn opened, its tokens as the text reads (no special tokens added: the template writes
  them); a plain prompt as the tokenizer encodes a text by default (Llama's BOS, none for
  GPT-2), as a server encodes a completion's prompt.
- Greedy requests (temperature 0) in batches of `--batch-size`, longest first, left-padded
  (with their attention mask, so that each row reads its own tokens only), halved when the
  device runs out of memory; a request's N completions are its one greedy completion N times.
- Sampled requests one at a time, each under its own seed (Sampling.seed and the request:
  tacit.models.answers.request_seed) in a forked random state, its N completions drawn
  together: a request's samples do not depend on what else is asked, nor on the batch size,
  and the caller's random state is left as it was. Unseeded (`seed=None`), they draw on
  torch's own random state, as a plain `generate` call does. No top-k is applied (top_p and the
  temperature only, as the OpenAI API samples).
- A completion ends at the model's end-of-sequence token (its generation config's, else its
  tokenizer's) or a stop text (Sampling.stop: cut there, as servers cut), `finish_reason:
  stop`; else at `max_tokens`, `finish_reason: length`. Its text is decoded without special
  tokens. Token log-probabilities (Sampling.logprobs > 0) are read off the logits generate
  returns, under the model's own distribution (before temperature and top_p), with the top
  alternatives at each step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import torch

from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option
from tacit.models.answers import (
    THINK_CLOSE,
    THINK_OPEN,
    Completion,
    GeneratedToken,
    GenerationRequest,
    Sampling,
    request_seed,
    thought,
)
from tacit.models.base import progress_bar
from tacit.models.batching import InProcessModel, longest_first_batches
from tacit.models.chat import conversation

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.core.modelspec import ModelSpec


class CausalModel(InProcessModel, Protocol):
    """What generation reads of a causal scorer (tacit.models.causal.CausalLMScorer): its
    model, tokenizer and device, and its loading options (a chat template)."""

    @property
    def spec(self) -> ModelSpec: ...

    @property
    def pad_id(self) -> int: ...


def prompt_ids(scorer: CausalModel, request: GenerationRequest) -> list[int]:
    """The request's tokens as the model reads them (see the module docstring)."""
    if request.messages is not None:
        text = conversation(
            scorer.tokenizer,
            scorer.spec.chat_template,
            scorer.name,
            request.messages,
            scorer.spec.system,
        )
        ids: list[int] = scorer.tokenizer(text, add_special_tokens=False)["input_ids"]
    else:
        ids = scorer.tokenizer(request.prompt)["input_ids"]
    if not ids:
        raise TacitError(f"{scorer.name}: an empty prompt, with no start token: nothing to follow")
    return ids


def end_ids(scorer: CausalModel) -> list[int]:
    """The tokens that end a completion: the generation config's end-of-sequence tokens (an
    instruct model's end of turn), else the tokenizer's."""
    config = getattr(scorer.model, "generation_config", None)
    found = getattr(config, "eos_token_id", None)
    if found is None:
        found = scorer.tokenizer.eos_token_id
    if found is None:
        return []
    return [int(i) for i in (found if isinstance(found, (list, tuple)) else [found])]


def generate(
    scorer: CausalModel,
    requests: list[GenerationRequest],
    sampling: Sampling,
    progress: bool | tqdm,
) -> list[list[Completion]]:
    """`sampling.n` completions of each request, in order (see the module docstring)."""
    encoded = [prompt_ids(scorer, r) for r in requests]
    for request, ids in zip(requests, encoded):
        if len(ids) + sampling.max_tokens > scorer.max_tokens:
            said = request.prompt or (request.messages or [{"content": ""}])[-1]["content"]
            raise TacitError(
                f"the request {shorten(repr(said))} is {len(ids)} tokens, and "
                f"{option('--max-tokens')} {sampling.max_tokens} more is longer than "
                f"{scorer.name} takes ({scorer.max_tokens} tokens): ask fewer tokens or a "
                f"shorter question ({option('--questions')} FILE)"
            )
    found: list[list[Completion]] = [[] for _ in requests]
    with (
        progress_bar(progress, len(requests), f"generating {scorer.name}", "request") as bar,
        torch.inference_mode(),
    ):
        if sampling.greedy:

            def run(indices: np.ndarray) -> list[Completion]:
                return _run(scorer, [encoded[i] for i in indices], sampling, 1)

            lengths = [len(ids) for ids in encoded]
            for indices, completions in longest_first_batches(lengths, scorer, run):
                for i, completion in zip(indices, completions):
                    found[int(i)] = [completion] * sampling.n
                bar.update(len(indices))
        else:
            devices = [scorer.device] if scorer.device.type == "cuda" else []
            for i, (request, ids) in enumerate(zip(requests, encoded)):
                if sampling.seed is None:  # unseeded: torch's own random state, drawn on
                    found[i] = _run(scorer, [ids], sampling, sampling.n)
                else:
                    with torch.random.fork_rng(devices=devices):
                        torch.manual_seed(request_seed(sampling.seed, request))
                        found[i] = _run(scorer, [ids], sampling, sampling.n)
                bar.update(1)
    return found


def opens_thinking(scorer: CausalModel, ids: Sequence[int]) -> bool:
    """Does the prompt end with an open `<think>` (a chat template that starts the think)?"""
    return str(scorer.tokenizer.decode(list(ids[-8:]))).rstrip().endswith(THINK_OPEN)


def _run(
    scorer: CausalModel, rows: Sequence[list[int]], sampling: Sampling, each: int
) -> list[Completion]:
    """One call of transformers' generate on left-padded rows, `each` completions a row (in
    row order)."""
    from transformers import GenerationConfig

    width = max(len(ids) for ids in rows)
    pad = scorer.pad_id
    ids = torch.tensor([[pad] * (width - len(r)) + list(r) for r in rows], device=scorer.device)
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=scorer.device)
    ends = end_ids(scorer)
    settings: dict[str, Any] = {"do_sample": False}
    if not sampling.greedy:
        settings = {
            "do_sample": True,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": 0,
        }
    config = GenerationConfig(
        max_new_tokens=sampling.max_tokens,
        num_return_sequences=each,
        eos_token_id=ends or None,
        pad_token_id=pad,
        output_logits=sampling.logprobs > 0,
        return_dict_in_generate=True,
        stop_strings=list(sampling.stop) or None,
        **settings,
    )
    model: Any = scorer.model  # transformers types its generate loosely
    out = model.generate(
        input_ids=ids,
        attention_mask=mask,
        generation_config=config,
        tokenizer=scorer.tokenizer if sampling.stop else None,
    )
    generated = out.sequences[:, width:].tolist()
    steps = None
    if sampling.logprobs > 0:
        steps = torch.log_softmax(torch.stack(out.logits, dim=1).float(), dim=-1)
    opened = [opens_thinking(scorer, r) for r in rows]
    return [
        _completion(scorer, row, len(rows[n // each]), ends, sampling, steps, n, opened[n // each])
        for n, row in enumerate(generated)
    ]


def _completion(
    scorer: CausalModel,
    generated: list[int],
    prompt_tokens: int,
    ends: list[int],
    sampling: Sampling,
    steps: torch.Tensor | None,
    row: int,
    opened: bool = False,
) -> Completion:
    """One row of generate's output as a Completion: cut at its end token or stop text, its
    thinking apart (tacit.models.answers.thought; `opened`: the prompt ends with `<think>`),
    its tokens counted (`reasoning_tokens`: up to and including `</think>`; every token
    where the think never closed)."""
    tokenizer = scorer.tokenizer
    ended = next((at for at, token in enumerate(generated) if token in ends), None)
    body = generated if ended is None else generated[:ended]
    text = str(tokenizer.decode(body, skip_special_tokens=True))
    cut = min((at for at in (text.find(s) for s in sampling.stop) if at >= 0), default=None)
    if cut is not None:  # the model ran up to the token that completed the stop text
        whole = text
        kept = _shortest(tokenizer, body, lambda t: len(t) >= cut)
        ran = len(_shortest(tokenizer, body, lambda t: any(s in t for s in sampling.stop)))
        text, reason = whole[:cut], "stop"
    elif ended is not None:
        kept, ran, reason = body, len(body) + 1, "stop"  # its end token counted
    else:
        kept, ran, reason = body, len(body), "length"
    tokens = None
    if steps is not None:
        pieces = token_pieces(tokenizer, kept)
        tokens = tuple(
            _token(tokenizer, piece, token, steps[row, at], sampling.logprobs)
            for at, (piece, token) in enumerate(zip(pieces, kept))
        )
    said = thought(Completion(THINK_OPEN * opened + text, reason, tokens, prompt_tokens, ran))
    if said.reasoning is None:
        return Completion(text, reason, tokens, prompt_tokens, ran)
    closed = THINK_CLOSE in text
    thinking = _shortest(tokenizer, kept, lambda t: THINK_CLOSE in t) if closed else kept
    return replace(said, reasoning_tokens=len(thinking))


def _shortest(tokenizer: Any, ids: list[int], enough: Callable[[str], bool]) -> list[int]:
    """The shortest start of `ids` whose text is `enough`."""
    for n in range(len(ids) + 1):
        if enough(tokenizer.decode(ids[:n], skip_special_tokens=True)):
            return ids[:n]
    return ids


def _token(
    tokenizer: Any, piece: str, token: int, logprobs: torch.Tensor, top: int
) -> GeneratedToken:
    best = torch.topk(logprobs, top)
    alternatives = tuple(
        (tokenizer.decode([int(t)]), float(v)) for v, t in zip(best.values, best.indices)
    )
    return GeneratedToken(piece, float(logprobs[token]), alternatives)


def token_pieces(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Each token's text as it adds to the text before it (as a server's detokenizer gives
    them: a word's leading space on its token; a character split over tokens on its last)."""
    pieces, before = [], ""
    for n in range(len(ids)):
        now = tokenizer.decode(list(ids[: n + 1]), skip_special_tokens=True)
        pieces.append(now[len(before) :] if now.startswith(before) else now)
        before = now
    return pieces
