"""Prince's prompts and their scoring: the examples of Prince (1978), as quoted by Weir et al.
(2020), Fig. 4.

The data are written here from the paper's text: the properties Prince lists for a person
(concept direction: is "person" named?) and for a country (property direction: are her
properties what the model says a country has?).

A causal model answers the country prompt (its blank ends the sentence) by its next-token
distribution; the person prompt's blank comes first, so every shared-vocabulary word is put in
it and its sentence scored: ranks as P(word | the rest), probabilities among the shared
vocabulary (Scorer.score_words).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.probes.notes import run_notes

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.core.manifest import Manifest
    from tacit.models.base import Scorer
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


def score_prince(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    *,
    progress: bool | tqdm = True,
) -> pd.DataFrame:
    """Rank and probability of each answer, AP of the answer set, and the top 10 words (a
    causal model reads the person prompt's blank, which starts the sentence, by putting each
    word in it: see the module docstring)."""
    from tacit.models.reduce import GoldScores

    answers = [target.split() for target in prompts["target"]]
    batches = scorer.score_words(
        list(prompts["prompt"]), vocab.token_ids[scorer.name], vocab.words, progress=progress
    )
    scores = GoldScores(
        batches, [[vocab.index(w) for w in words] for words in answers], among=None,
        among_of_row=None, top_k=TOP_K, device=scorer.device,
    )  # fmt: skip
    words = np.asarray(vocab.words, dtype=object)
    rows = []
    for index, prompt in enumerate(prompts.itertuples()):
        n = len(answers[index])
        ranks = scores.rank[index, :n].tolist()
        rows.append(
            {
                "model": scorer.name,
                "direction": prompt.direction,
                "prompt": prompt.prompt,
                "target": prompt.target,
                "not_in_vocab": prompt.not_in_vocab,
                "rank": min(ranks),
                "target_prob": float(scores.prob[index, :n].sum()),
                "ap_vocab": float(scores.ap[index]),
                "gold_ranks": " ".join(f"{w}:{r}" for w, r in zip(answers[index], ranks)),
                "top10": " ".join(
                    f"{w}:{p:.4g}"
                    for w, p in zip(words[scores.top_index[index]], scores.top_prob[index])
                ),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def prince_report(prompts: pd.DataFrame, manifest: Manifest) -> tuple[str, list[str]]:
    """Each model's answer to both of Prince's directions."""
    lines = []
    for row in prompts.itertuples():
        lines.append(f"{row.model} | {row.prompt}")
        if row.direction == "concept":
            lines.append(f"  '{row.target}': rank {row.rank}, probability {row.target_prob:.4g}")
        else:
            lines.append(f"  Prince's properties: AP {row.ap_vocab:.3f}; ranks {row.gold_ranks}")
            if row.not_in_vocab:
                lines.append(f"  not in the shared vocabulary: {row.not_in_vocab}")
        lines.append(f"  top 10: {row.top10}")
    return "\n".join(lines), run_notes(manifest)
