"""Property elicitation: ask for a concept's properties and score the answers against people's.

"Everyone knows that a bear has <mask>." is scored against the one-word `has` features that
people wrote for bear (fur, claws, ...), weighted by production frequency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike
from tqdm.auto import tqdm

from tacit.core.errors import TacitError
from tacit.core.metrics import average_precision_rows
from tacit.lexicon import article, concept_text
from tacit.models.base import MASK, Scorer
from tacit.norms.phrasing import one_word_answers
from tacit.norms.reader import NormSet
from tacit.vocab.shared import Vocabulary

# Prompts per relation in Weir et al. (2020), Table 1, for comparison.
PAPER_PROMPTS = {"is": 583, "is a": 506, "has": 564, "has a": 537, "made of": 495}
PREFIX = "Everyone knows that"
# How each relation reads in the prompt: the paper's {is, has, is a, has a, is made of}. The
# relation keeps CSLB's name `made of` (its answers are the `made of X` features).
RELATION_WORDS = {"is": "is", "is a": "is a", "has": "has", "has a": "has a",
                  "made of": "is made of"}  # fmt: skip
PROMPT_COLUMNS = ["relation", "prefix", "concept", "prompt", "gold", "n_gold"]
RESULT_COLUMNS = [
    "model",
    *PROMPT_COLUMNS,
    "ap_vocab",
    "ap_sens",
    "spearman",
    "top5",
]


def elicitation_prompt(concept: str, relation: str, *, prefix: bool = True) -> str:
    """'Everyone knows that a bear has <mask>.' (or 'A bear has <mask>.' without the prefix)."""
    noun = concept_text(concept)
    sentence = f"{article(noun)} {noun} {RELATION_WORDS[relation]} {MASK}."
    return f"{PREFIX} {sentence}" if prefix else sentence[0].upper() + sentence[1:]


@dataclass(frozen=True)
class GoldSet:
    """Gold answers and what was left out.

    answers: `relation, concept, word, pf`, one row per answer (a word produced by several
        features of a concept keeps the highest pf).
    excluded: per relation, features that answer it, and how many were left out and why.
    """

    answers: pd.DataFrame
    excluded: pd.DataFrame


def gold_answers(norms: NormSet, vocab: Vocabulary, relations: Sequence[str]) -> GoldSet:
    """One-word answers per relation and concept, restricted to the shared vocabulary.

    A feature answers the relation in its `relation` column with the text in its `answer`
    column (tacit.norms.NormSet): the probe reads no format's own syntax.
    """
    rows: list[tuple[str, str, str, float]] = []
    report = []
    table = norms.table
    for relation in relations:
        counts = {"features": 0, "multi_word": 0, "out_of_vocabulary": 0, "alternatives_oov": 0}
        answering = table[table["relation"] == relation]
        for concept, answer, pf in zip(
            answering["concept"], answering["answer"], answering["pf"].tolist()
        ):
            counts["features"] += 1
            words = one_word_answers(answer)
            if words is None:
                counts["multi_word"] += 1
                continue
            kept = [w for w in words if w in vocab]
            counts["alternatives_oov"] += len(words) - len(kept)
            if not kept:
                counts["out_of_vocabulary"] += 1
            rows.extend((relation, concept, word, pf) for word in kept)
        counts["kept"] = counts["features"] - counts["multi_word"] - counts["out_of_vocabulary"]
        report.append({"relation": relation, **counts})
    answers = pd.DataFrame(rows, columns=["relation", "concept", "word", "pf"])
    answers = (
        answers.sort_values("pf", ascending=False, kind="stable")
        .drop_duplicates(["relation", "concept", "word"])
        .sort_values(["relation", "concept", "pf", "word"], ascending=[True, True, False, True])
        .reset_index(drop=True)
    )
    return GoldSet(answers, pd.DataFrame(report))


def build_elicitation_prompts(
    answers: pd.DataFrame,
    relations: Sequence[str],
    prefixes: Sequence[bool],
    concepts: Sequence[str] | None = None,
    *,
    column: str = "word",
    separator: str = " ",
) -> pd.DataFrame:
    """One prompt per relation x prefix x concept with at least one gold answer; `gold` lists
    the concept's answers (`answers[column]`, in the table's order) as `answer:pf`."""
    if concepts is not None:
        unknown = sorted(set(concepts) - set(answers["concept"]))
        if unknown:
            raise TacitError(f"--concepts: no gold answer for any relation: {', '.join(unknown)}")
        answers = answers[answers["concept"].isin(concepts)]
    records = []
    for relation in relations:
        for concept, rows in answers[answers["relation"] == relation].groupby("concept"):
            gold = separator.join(f"{w}:{p}" for w, p in zip(rows[column], rows["pf"]))
            for prefix in prefixes:
                prompt = elicitation_prompt(concept, relation, prefix=prefix)
                records.append((relation, prefix, concept, prompt, gold, len(rows)))
    return pd.DataFrame.from_records(records, columns=PROMPT_COLUMNS)


def parse_gold(gold: str) -> list[tuple[str, int | float]]:
    """'fur:20 claws:2.5' -> [('fur', 20), ('claws', 2.5)] (a generic table's pf can be any
    number: whole ones read back as ints, others as the floats they were written from)."""
    items = (item.rpartition(":") for item in gold.split())
    return [(word, int(pf) if pf.isdigit() else float(pf)) for word, _, pf in items]


def score_elicitation(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    sensible: dict[str, np.ndarray],
    *,
    progress: bool | tqdm = True,
) -> pd.DataFrame:
    """AP over the shared and the sensible vocabulary, Spearman's rho, top 5, per prompt.

    Args:
        sensible: relation -> positions (in the shared vocabulary) of every gold answer of that
            relation across concepts.
    """
    device = scorer.device
    relation_ids = {r: i for i, r in enumerate(sensible)}
    among = torch.zeros((len(sensible), len(vocab)), dtype=torch.bool, device=device)
    for relation, positions in sensible.items():
        among[relation_ids[relation], torch.as_tensor(positions, device=device)] = True
    golds = [parse_gold(g) for g in prompts["gold"]]
    width = max(len(g) for g in golds)
    gold_index = torch.zeros((len(golds), width), dtype=torch.long)
    gold_mask = torch.zeros((len(golds), width), dtype=torch.bool)
    for row, gold in enumerate(golds):
        gold_index[row, : len(gold)] = torch.tensor([vocab.index(w) for w, _ in gold])
        gold_mask[row, : len(gold)] = True
    gold_index, gold_mask = gold_index.to(device), gold_mask.to(device)
    row_relation = torch.as_tensor([relation_ids[r] for r in prompts["relation"]], device=device)
    n = len(prompts)
    ap_vocab = torch.empty(n, device=device)
    ap_sens = torch.empty(n, device=device)
    gold_prob = torch.empty((n, width), device=device)
    top_index = torch.empty((n, 5), dtype=torch.long, device=device)
    top_prob = torch.empty((n, 5), device=device)
    ids = vocab.token_ids[scorer.name]
    batches = scorer.score_vocab(list(prompts["prompt"]), ids, progress=progress)
    for batch in batches:
        rows, at = batch.rows, batch.batch_rows
        shared, log_z = batch.shared[at], batch.log_z[at]
        g, m = gold_index[rows], gold_mask[rows]
        ap_vocab[rows] = average_precision_rows(shared, g, m)
        ap_sens[rows] = average_precision_rows(shared, g, m, among=among[row_relation[rows]])
        gold_prob[rows] = (shared.gather(1, g) - log_z.unsqueeze(1)).exp()
        top_values, top_positions = shared.topk(5, dim=1)
        top_index[rows] = top_positions
        top_prob[rows] = (top_values - log_z.unsqueeze(1)).exp()
    gold_prob_np = gold_prob.cpu().numpy()
    table = prompts.copy()
    table.insert(0, "model", scorer.name)
    table["ap_vocab"] = ap_vocab.cpu().numpy().astype(float)
    table["ap_sens"] = ap_sens.cpu().numpy().astype(float)
    table["spearman"] = [
        rank_correlation([pf for _, pf in gold], gold_prob_np[row, : len(gold)])
        for row, gold in enumerate(golds)
    ]
    words = np.asarray(vocab.words, dtype=object)
    table["top5"] = [
        " ".join(f"{w}:{p:.4g}" for w, p in zip(words[i], prob))
        for i, prob in zip(top_index.cpu().numpy(), top_prob.cpu().numpy())
    ]
    return table[RESULT_COLUMNS]


def rank_correlation(pf: ArrayLike, prob: ArrayLike) -> float:
    """Spearman's rho between production frequencies and model probabilities.

    NaN (undefined) with fewer than 2 answers or when either side has no variance.

    >>> rank_correlation([3, 2, 1], [0.5, 0.2, 0.1]), rank_correlation([3, 3], [0.5, 0.2])
    (1.0, nan)
    """
    from scipy.stats import spearmanr  # scipy.stats takes a second to import: only when used

    x, y = np.asarray(pf, dtype=float), np.asarray(prob, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)
