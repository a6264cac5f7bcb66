"""Prince (1978)'s own examples of tacit assumptions, as quoted by Weir et al. (2020), Fig. 4.

The data are written here from the paper's text: the properties Prince lists for a person
(concept direction: is "person" named?) and for a country (property direction: are her
properties what the model says a country has?).

A causal model answers the country prompt (its blank ends the sentence) by its next-token
distribution; the person prompt's blank comes first, so every shared-vocabulary word is put in
it and its sentence scored: ranks as P(word | the rest), probabilities among the shared
vocabulary (CausalLMScorer.score_words_in_place).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from tacit.core.errors import TacitError
from tacit.core.metrics import average_precision_rows
from tacit.models.base import ScoredBatch, Scorer
from tacit.vocab.shared import Vocabulary

PERSON_PROMPT = (
    "A <mask> has parents, siblings, relatives, a home, a pet, a car, a spouse, and a job."
)
PERSON = "person"
COUNTRY_PROMPT = "Everyone knows that a country has <mask>."
COUNTRY_PROPERTIES = (
    "leader", "duke", "borders", "president", "queen", "citizens", "land", "language", "history",
)  # fmt: skip
TOP_K = 10
COLUMNS = [
    "model", "direction", "prompt", "target", "not_in_vocab", "rank", "target_prob", "ap_vocab",
    "gold_ranks", "top10",
]  # fmt: skip


def prince_prompts(vocab: Vocabulary) -> pd.DataFrame:
    """Both directions, with their answers restricted to the shared vocabulary."""
    if PERSON not in vocab:
        raise TacitError(f"{PERSON!r} is not in the shared vocabulary: Prince's probe needs it")
    kept = [w for w in COUNTRY_PROPERTIES if w in vocab]
    missing = [w for w in COUNTRY_PROPERTIES if w not in vocab]
    if not kept:
        raise TacitError("none of Prince's country properties is in the shared vocabulary")
    return pd.DataFrame(
        [
            ("concept", PERSON_PROMPT, PERSON, ""),
            ("property", COUNTRY_PROMPT, " ".join(kept), " ".join(missing)),
        ],
        columns=["direction", "prompt", "target", "not_in_vocab"],
    )


def _scored_prompts(
    scorer: Scorer, prompts: list[str], vocab: Vocabulary, progress: bool | tqdm
) -> Iterator[ScoredBatch]:
    """Each prompt's blank over the shared vocabulary; a causal model's blank that does not
    end its sentence is scored word by word in place (see the module docstring)."""
    ids = vocab.token_ids[scorer.name]
    if scorer.kind != "causal":
        yield from scorer.score_vocab(prompts, ids, progress=progress)
        return
    from tacit.models.causal import CausalLMScorer

    assert isinstance(scorer, CausalLMScorer)
    ends = np.array([scorer.blank_ends(p) for p in prompts])
    for which, batches in (
        (ends, lambda chosen: scorer.score_vocab(chosen, ids, progress=progress)),
        (~ends, lambda chosen: scorer.score_words_in_place(chosen, vocab.words, progress=progress)),
    ):
        positions = np.flatnonzero(which)
        if len(positions):
            for batch in batches([prompts[i] for i in positions]):
                rows = torch.as_tensor(positions, device=batch.rows.device)[batch.rows]
                yield ScoredBatch(rows, batch.batch_rows, batch.shared, batch.log_z)


def score_prince(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    *,
    progress: bool | tqdm = True,
) -> pd.DataFrame:
    """Rank and probability of each answer, AP of the answer set, and the top 10 words."""
    words = np.asarray(vocab.words, dtype=object)
    rows = []
    batches = _scored_prompts(scorer, list(prompts["prompt"]), vocab, progress)
    by_prompt = {}
    for batch in batches:
        for row, at in zip(batch.rows.tolist(), batch.batch_rows.tolist()):
            by_prompt[row] = (batch.shared[at], batch.log_z[at])
    for index, prompt in enumerate(prompts.itertuples()):
        shared, log_z = by_prompt[index]
        answers = prompt.target.split()
        positions = torch.as_tensor([vocab.index(w) for w in answers], device=shared.device)
        answer_scores = shared[positions]
        ranks = (1 + (shared.unsqueeze(0) > answer_scores.unsqueeze(1)).sum(dim=1)).tolist()
        mask = torch.ones((1, len(answers)), dtype=torch.bool, device=shared.device)
        ap = average_precision_rows(shared.unsqueeze(0), positions.unsqueeze(0), mask).item()
        values, top = shared.topk(TOP_K)
        top_probs = (values - log_z).exp().tolist()
        rows.append(
            {
                "model": scorer.name,
                "direction": prompt.direction,
                "prompt": prompt.prompt,
                "target": prompt.target,
                "not_in_vocab": prompt.not_in_vocab,
                "rank": min(ranks),
                "target_prob": float((answer_scores - log_z).exp().sum()),
                "ap_vocab": ap,
                "gold_ranks": " ".join(f"{w}:{r}" for w, r in zip(answers, ranks)),
                "top10": " ".join(f"{w}:{p:.4g}" for w, p in zip(words[top.cpu()], top_probs)),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
