"""A masked LM's pseudo-log-likelihood of every token of a text (Scorer.token_scores), as
minicons' `MaskedLMScorer.token_score` computes it: the tokenizer's special tokens are context,
never scored; `original` (Salazar et al. 2020) masks token i alone, `within_word_l2r` (Kauf &
Ivanova 2023) masks it with the later tokens of its word (`word_ids`). One forward row per
token, batched longest first, the LM head run only at the token read
(masked_spans.run_plan: the one forward loop of masked scores).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from tacit.models.answers import TokenScores
from tacit.models.masked_spans import MaskedModel, SpanPlan, run_plan

if TYPE_CHECKING:
    from tqdm.auto import tqdm


class TokenModel(MaskedModel, Protocol):
    """What the pseudo-log-likelihood reads of a masked LM's scorer: span scoring's, and its
    texts tokenised with their offsets."""

    def _text_tokens(self, texts: list[str], *, special: bool, added: int = 0) -> Any: ...


def plan_tokens(scorer: TokenModel, encoded: Any, pll: str) -> tuple[SpanPlan, list[list[int]]]:
    """The rows that score every token of every text (each token a pair of one entry, in text
    order), and the positions scored in each text's ids."""
    tokenizer = scorer.tokenizer
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    plan = SpanPlan()
    scored = []
    for n, ids in enumerate(encoded["input_ids"]):
        word_of = encoded.word_ids(n)
        positions = [i for i, token in enumerate(ids) if token not in special]
        for i in positions:
            hidden = [i]
            if pll == "within_word_l2r" and word_of[i] is not None:
                hidden += [j for j in positions if j > i and word_of[j] == word_of[i]]
            masked = [tokenizer.mask_token_id if j in hidden else t for j, t in enumerate(ids)]
            plan.row.append(plan.add_row(masked, [i]))
            plan.read.append(0)
            plan.token.append(ids[i])
            plan.pair.append(len(plan.n_tokens))
            plan.n_tokens.append(1)
        scored.append(positions)
    return plan, scored


def token_scores(
    scorer: TokenModel, texts: list[str], pll: str, progress: bool | tqdm
) -> list[TokenScores]:
    """TokenScores of each text (see the module docstring)."""
    encoded = scorer._text_tokens(texts, special=True)
    plan, scored = plan_tokens(scorer, encoded, pll)
    values = run_plan(scorer, plan, progress, "token scores")
    bounds = np.cumsum([0] + [len(p) for p in scored])
    out = []
    for n, positions in enumerate(scored):
        ids = [encoded["input_ids"][n][i] for i in positions]
        offsets = [encoded["offset_mapping"][n][i] for i in positions]
        out.append(
            TokenScores(
                tuple(scorer.tokenizer.convert_ids_to_tokens(ids)),
                np.asarray(offsets, dtype=np.int64).reshape(-1, 2),
                values[bounds[n] : bounds[n + 1]],
            )
        )
    return out
