"""Elicitation's scoring, one model at a time: each prompt's gold answers ranked at the blank.

Average precision of the gold answers over the candidates (`ap_vocab`: the shared vocabulary,
or the candidate spans) and over the answers any concept gave to the relation (`ap_sens`; the
two are equal for `--candidates answers`), Spearman's rho between the answers' production
frequencies and the model's scores, and the top 5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike

from tacit.core.metrics import average_precision
from tacit.probes.base import Scored
from tacit.probes.candidates import TOP, SpanRanker, best_positions, settle_spans, top_spans
from tacit.probes.elicit.prompts import PROMPT_COLUMNS, parse_gold, parse_span_gold
from tacit.probes.paraphrase import (
    ITEM,
    TOP1,
    ensemble_frame,
    group_mean,
    item_numbers,
    paraphrased,
)
from tacit.probes.token_rows import TOKENS_COLUMN

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer
    from tacit.models.reduce import Settles
    from tacit.vocab.shared import Vocabulary

METRICS = ["ap_vocab", "ap_sens", "spearman", "top5"]
TOP_K = 5
RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, *METRICS]
SPAN_RESULT_COLUMNS = ["model", *PROMPT_COLUMNS, "n_candidates", *METRICS]


def score_elicitation(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    sensible: dict[str, np.ndarray],
    *,
    progress: bool | tqdm = True,
    offset: int = 0,
) -> Scored:
    """AP over the shared and the sensible vocabulary, Spearman's rho, top 5, per prompt (with
    several templates, `top1` too, and the ensemble of each item's templates, indexed from
    `offset`), and the work counted while scoring, near ties settled (tacit.models.ties) too.

    Args:
        sensible: relation -> positions (in the shared vocabulary) of every gold answer of that
            relation across concepts.
    """
    from tacit.models.answers import Needed
    from tacit.models.reduce import GroupMean, Referee, WorkCount

    device = scorer.device
    relation_ids = {r: i for i, r in enumerate(sensible)}
    among = torch.zeros((len(sensible), len(vocab)), dtype=torch.bool, device=device)
    for relation, positions in sensible.items():
        among[relation_ids[relation], torch.as_tensor(positions, device=device)] = True
    ids = vocab.token_ids[scorer.name]
    items = item_numbers(prompts)
    texts = list(prompts["prompt"])
    needed = Needed(gold_positions(prompts, vocab), TOP_K, items)
    referee = Referee(scorer, texts, ids)
    work = WorkCount()
    batches = work.passing(scorer.score_vocab(texts, ids, progress=progress, needed=needed))
    if items is None:
        table = _vocab_table(prompts, scorer, vocab, batches, among, relation_ids, referee)
        return Scored(table, {**work.counts, **referee.settled.counts()})
    ensemble = GroupMean(items, device)
    table = _vocab_table(
        prompts, scorer, vocab, ensemble.passing(batches), among, relation_ids, referee
    )
    frame = ensemble_frame(prompts, offset)
    combined = _vocab_table(
        frame, scorer, vocab, [ensemble.batch()], among, relation_ids, ensemble.referee(referee)
    )
    return Scored(pd.concat([table, combined]), {**work.counts, **referee.settled.counts()})


def gold_positions(prompts: pd.DataFrame, vocab: Vocabulary) -> list[list[int]]:
    """Each prompt's gold answers as positions in the shared vocabulary."""
    return [[vocab.index(w) for w, _ in parse_gold(g)] for g in prompts["gold"]]


def _vocab_table(
    prompts: pd.DataFrame,
    scorer: Scorer,
    vocab: Vocabulary,
    batches: Any,
    among: torch.Tensor,
    relation_ids: dict[str, int],
    referee: Settles,
) -> pd.DataFrame:
    from tacit.models.reduce import GoldScores

    golds = [parse_gold(g) for g in prompts["gold"]]
    scores = GoldScores(
        batches,
        gold_positions(prompts, vocab),
        among=among,
        among_of_row=[relation_ids[r] for r in prompts["relation"]],
        top_k=TOP_K,
        device=scorer.device,
        referee=referee,
    )
    table = prompts.copy()
    table.insert(0, "model", scorer.name)
    table["ap_vocab"] = scores.ap
    table["ap_sens"] = scores.ap_among
    table["spearman"] = [
        rank_correlation([pf for _, pf in gold], scores.prob[row, : len(gold)])
        for row, gold in enumerate(golds)
    ]
    words = np.asarray(vocab.words, dtype=object)
    table["top5"] = [
        " ".join(f"{w}:{p:.4g}" for w, p in zip(words[i], prob))
        for i, prob in zip(scores.top_index, scores.top_prob)
    ]
    if paraphrased(prompts):
        table[TOP1] = words[scores.top_index[:, 0]]
    return table[["model", *prompts.columns, *METRICS, *([TOP1] if paraphrased(prompts) else [])]]


def rank_correlation(pf: ArrayLike, prob: ArrayLike) -> float:
    """Spearman's rho between production frequencies and model probabilities.

    NaN (undefined) with fewer than 2 answers or when either side has no variance.

    Examples:
        >>> rank_correlation([3, 2, 1], [0.5, 0.2, 0.1]), rank_correlation([3, 3], [0.5, 0.2])
        (1.0, nan)
    """
    from scipy.stats import spearmanr  # scipy.stats takes a second to import: only when used

    x, y = np.asarray(pf, dtype=float), np.asarray(prob, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def score_span_elicitation(
    rows: pd.DataFrame,
    scorer: Scorer,
    rankers: dict[str, SpanRanker],
    answering: dict[str, set[str]],
    progress: tqdm | bool,
    offset: int = 0,
) -> pd.DataFrame:
    """AP over the candidates and over those answering the relation, rho, top 5, per prompt
    (with several templates, `top1` too, and the ensemble of each item's templates, indexed
    from `offset`); near ties are settled on the spans scored alone (tacit.models.ties)."""
    parts = []
    for relation, group in rows.groupby("relation", sort=False):
        ranker = rankers[relation]
        templates = list(dict.fromkeys(group["prompt"]))
        scores, _ = ranker.scores(scorer, templates, progress)
        row_of = {t: n for n, t in enumerate(templates)}
        per_row = scores[[row_of[p] for p in group["prompt"]]]
        index = ranker.candidates.index()
        golds = [[index[s] for s, _ in parse_span_gold(g)] for g in group["gold"]]
        members = [[(ranker, p)] for p in group["prompt"]]
        per_row = settle_spans(scorer, members, per_row, golds, TOP, ranker)
        part = _span_table(group, per_row, ranker.candidates.spans, answering[relation])
        if ranker.tokens:
            listed = [[*g, *top] for g, top in zip(golds, best_positions(per_row, TOP).tolist())]
            part[TOKENS_COLUMN] = ranker.token_cells(list(group["prompt"]), listed)
        parts.append(part)
        if paraphrased(rows):
            items, mean = group_mean(per_row, group[ITEM].to_numpy())
            frame = ensemble_frame(group, offset).loc[offset + items]
            grouped: dict[object, list[tuple[SpanRanker, str]]] = {}
            for prompt, item in zip(group["prompt"], group[ITEM]):
                grouped.setdefault(item, []).append((ranker, prompt))
            at = [[index[s] for s, _ in parse_span_gold(g)] for g in frame["gold"]]
            mean = settle_spans(scorer, [grouped[i] for i in items], mean, at, TOP, ranker)
            parts.append(_span_table(frame, mean, ranker.candidates.spans, answering[relation]))
    table = pd.concat(parts)
    table = table.loc[[*rows.index, *table.index.difference(rows.index)]]
    table.insert(0, "model", scorer.name)
    return table


def _span_table(
    group: pd.DataFrame, per_row: np.ndarray, spans: list[str], answering: set[str]
) -> pd.DataFrame:
    index = {span: n for n, span in enumerate(spans)}
    sensible = np.array([s in answering for s in spans])
    ap_vocab, ap_sens, rho = [], [], []
    for row, gold_text in zip(per_row, group["gold"]):
        gold = parse_span_gold(gold_text)
        relevant = np.zeros(len(spans), dtype=bool)
        relevant[[index[s] for s, _ in gold]] = True
        ap_vocab.append(average_precision(row, relevant))
        ap_sens.append(average_precision(row[sensible], relevant[sensible]))
        rho.append(rank_correlation([p for _, p in gold], [row[index[s]] for s, _ in gold]))
    table = group.copy()
    table["n_candidates"] = len(spans)
    table["ap_vocab"], table["ap_sens"], table["spearman"] = ap_vocab, ap_sens, rho
    table["top5"] = top_spans(per_row, spans)
    extra = []
    if paraphrased(group):
        table[TOP1] = np.asarray(spans, dtype=object)[best_positions(per_row, 1)[:, 0]]
        extra = [TOP1]
    return table[[*group.columns, "n_candidates", *METRICS, *extra]]
