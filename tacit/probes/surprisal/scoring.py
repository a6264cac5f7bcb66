"""The surprisal probe's rows and summary: every token of every text with its log-probability
(Scorer.token_scores), or every word with the sum of its tokens' (tacit.probes.surprisal.words);
surprisal in nats and bits; per text and over every text, the total log-probability, the mean
surprisal in bits per token and the perplexity."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.tokens import LN2, SCORE_COLUMNS, with_surprisal
from tacit.core.display import Table
from tacit.core.labels import short_labels
from tacit.probes.surprisal.words import word_of_tokens, word_spans

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.answers import TokenScores
    from tacit.models.base import Scorer

OVERALL = "all"  # the summary's row over every text
TOKEN_COLUMNS = ["model", "text_id", "text", "index", "token", "start", "end"]
WORD_COLUMNS = ["model", "text_id", "text", "index", "word", "start", "end", "n_tokens"]
FEW_TEXTS = 10  # a run of at most this many texts prints each one's row


def units(text: str, scores: TokenScores, by: str) -> dict[str, Any]:
    """One text's rows as columns: its tokens, or its words (each word's tokens' log-
    probabilities summed; `n_tokens` says how many)."""
    if by == "token":
        return {
            "token": list(scores.tokens),
            "start": scores.offsets[:, 0],
            "end": scores.offsets[:, 1],
            "logprob": scores.logprob,
        }
    words = word_spans(text)
    of = word_of_tokens(text, scores.offsets, words)
    return {
        "word": [text[a:b] for a, b in words.tolist()],
        "start": words[:, 0],
        "end": words[:, 1],
        "n_tokens": np.bincount(of, minlength=len(words)),
        "logprob": np.bincount(of, weights=scores.logprob, minlength=len(words)),
    }


def score_texts(
    rows: pd.DataFrame, scorer: Scorer, by: str, pll: str, bar: tqdm | bool
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The rows of every text of `rows` (one row each, `text_id` and `text`), each under the
    index of its text's row, in order; and the count of unknown tokens scored (an unknown
    word is scored as the tokenizer's [UNK], as minicons does)."""
    texts = list(dict.fromkeys(rows["text"]))
    shown = bar if isinstance(bar, bool) else not bar.disable  # the run's bar: its own moves
    scores = dict(zip(texts, scorer.token_scores(texts, pll=pll, progress=shown)))
    if not isinstance(bar, bool):
        bar.update(len(texts))  # the run's bar counts texts
    parts = []
    for index, text_id, text in zip(rows.index, rows["text_id"], rows["text"]):
        columns = units(text, scores[text], by)
        n = len(columns["logprob"])
        parts.append(
            pd.DataFrame(
                {"text_id": [text_id] * n, "text": text, "index": np.arange(n), **columns},
                index=[index] * n,
            )
        )
    table = pd.concat(parts) if parts else pd.DataFrame(columns=["text_id", "text", "index"])
    table.insert(0, "model", scorer.name)
    table = with_surprisal(table)
    unknown = getattr(scorer.tokenizer, "unk_token", None)
    found = sum(s.tokens.count(unknown) for s in scores.values()) if unknown else 0
    return table[(TOKEN_COLUMNS if by == "token" else WORD_COLUMNS) + SCORE_COLUMNS], {
        "unknown_tokens": found
    }


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model, each text and every text together (`text_id` all): `n_tokens` (and
    `n_words`, for rows by word), `logprob` (the total, nats), `mean_surprisal_bits` (per
    token: the total over the tokens, in bits), `perplexity` (per token: e to the mean
    surprisal in nats), and with words `mean_word_surprisal_bits`."""
    by_word = "word" in rows.columns
    counted = rows.assign(n_tokens=rows["n_tokens"] if by_word else 1, n_words=1)
    records = []
    for model, mine in counted.groupby("model", sort=False):
        per_text = mine.groupby("text_id", sort=False).agg(
            text=("text", "first"),
            n_tokens=("n_tokens", "sum"),
            n_words=("n_words", "sum"),
            logprob=("logprob", "sum"),
        )
        every = pd.DataFrame(
            {
                "text": [""],
                "n_tokens": [per_text["n_tokens"].sum()],
                "n_words": [per_text["n_words"].sum()],
                "logprob": [per_text["logprob"].sum()],
            },
            index=pd.Index([OVERALL], name="text_id"),
        )
        table = pd.concat([per_text, every]).reset_index(names="text_id")
        table.insert(0, "model", model)
        records.append(table)
    summary = pd.concat(records, ignore_index=True)
    mean_nats = -summary["logprob"] / summary["n_tokens"]
    summary["mean_surprisal_bits"] = mean_nats / LN2
    summary["perplexity"] = np.exp(mean_nats)
    if by_word:
        summary["mean_word_surprisal_bits"] = -summary["logprob"] / summary["n_words"] / LN2
    else:
        summary = summary.drop(columns="n_words")
    return summary


def surprisal_tables(summary: pd.DataFrame) -> list[Table]:
    """Every text together, one row per model; and, for a run of a few texts, each text."""
    overall = summary[summary["text_id"].astype(str) == OVERALL]
    labels = short_labels(summary["model"])
    columns = {
        "n_tokens": "tokens",
        "logprob": "log-probability (nats)",
        "mean_surprisal_bits": "surprisal (bits/token)",
        "perplexity": "perplexity",
    }
    if "mean_word_surprisal_bits" in summary:
        columns = {"n_words": "words", **columns, "mean_word_surprisal_bits": "bits/word"}
    frame = overall[list(columns)].assign(model=overall["model"].map(labels))
    tables = [
        Table(
            frame[["model", *columns]].reset_index(drop=True),
            title="Every text together (perplexity: e to the mean surprisal in nats per token)",
            headers=columns,
        )
    ]
    each = summary[summary["text_id"].astype(str) != OVERALL]
    if each["text_id"].nunique() <= FEW_TEXTS:
        shown = each.assign(model=each["model"].map(labels))
        tables.append(
            Table(
                shown[["model", "text_id", *columns]].reset_index(drop=True),
                title="Each text",
                headers=columns,
            )
        )
    return tables
