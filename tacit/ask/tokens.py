"""Per-token rows, as every probe that writes them writes them: one row per token, its
log-probability in nats and its surprisal in nats and bits (`probe surprisal`'s surprisal.csv;
and, with `--token-scores`, the span probes' tokens.csv: each listed candidate's tokens in its
prompt's blank).

A span probe scores a chunk of prompts at a time (the engine's runner, checkpointed), so the
tokens of the candidates a row lists travel in that row, in one JSON text column
(TOKENS_COLUMN), and leave it for tokens.csv when the run finishes (token_table): prompts.csv
keeps its columns whether or not the tokens were asked for.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from tacit.models.answers import SpanTokens

LN2 = math.log(2)
SCORE_COLUMNS = ["logprob", "surprisal_nats", "surprisal_bits"]
TOKENS_COLUMN = "span_tokens"  # a chunk's rows: their candidates' tokens, JSON (token_cell)
TOKENS_TABLE = "tokens"  # the run's table of them: tokens.csv
SPAN_TOKEN_COLUMNS = ["candidate", "index", "token", *SCORE_COLUMNS]


def with_surprisal(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with `logprob` as float and its surprisal in nats and bits after it."""
    table["logprob"] = table["logprob"].astype(float)
    table["surprisal_nats"] = -table["logprob"]
    table["surprisal_bits"] = table["surprisal_nats"] / LN2
    return table


def token_cell(spans: Sequence[str], found: Sequence[SpanTokens]) -> str:
    """The JSON a row carries for its listed candidates: `[[span, [tokens], [logprobs]], ...]`
    (each span once, in the order given)."""
    seen: dict[str, SpanTokens] = {}
    for span, tokens in zip(spans, found):
        seen.setdefault(span, tokens)
    return json.dumps(
        [[span, list(t.tokens), [float(v) for v in t.logprob]] for span, t in seen.items()],
        ensure_ascii=False,
    )


def token_cells(listed: Sequence[Sequence[tuple[str, SpanTokens]]]) -> list[str]:
    """Each row's cell (token_cell) of its listed candidates' (span, tokens) pairs
    (tacit.ranking.Ranking.tokens)."""
    return [token_cell([s for s, _ in row], [t for _, t in row]) for row in listed]


def token_table(rows: pd.DataFrame, keys: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows without TOKENS_COLUMN, tokens.csv's table): one row per model, `keys` value
    (the rows' prompt or item), listed candidate and token, `model, *keys, candidate, index,
    token, logprob, surprisal_nats, surprisal_bits`; a candidate listed by several rows of one
    prompt is written once. Rows without tokens (an ensemble's) add none."""
    records = []
    for model, *key, cell in zip(
        rows["model"], *(rows[k] for k in keys), rows[TOKENS_COLUMN], strict=True
    ):
        if not isinstance(cell, str) or not cell:
            continue
        for span, tokens, logprobs in json.loads(cell):
            records += [
                (model, *key, span, n, token, value)
                for n, (token, value) in enumerate(zip(tokens, logprobs))
            ]
    columns = ["model", *keys, *SPAN_TOKEN_COLUMNS[:3], "logprob"]
    table = pd.DataFrame(records, columns=columns)
    table = table.drop_duplicates(["model", *keys, "candidate", "index"], ignore_index=True)
    table["index"] = table["index"].astype(np.int64)
    return rows.drop(columns=TOKENS_COLUMN), with_surprisal(table)
