"""Ranking: the layer between the models and the Ask stage.

One Question of each model (its prompts, what it reads of each prompt's ranking) over its
candidates (SharedVocabulary, SpanCandidates) gives a Ranking of plain numpy arrays: each
anchor's rank, score, probability and share, average precision, the top k, the ensemble of a
group's templates, the work done. The tie rule, the reductions over a vocabulary on the
device and the span normalisations live here; the scorer answers only what it is asked.
Importing this module loads no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tacit.ranking.question import TOP, CandidateSet, Question, Ranking, SharedVocabulary
from tacit.ranking.spans import SpanCandidates, span_alone

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from tqdm.auto import tqdm

    from tacit.models.base import Scorer

# what a question's blanks are ranked among: the shared vocabulary, or candidate spans
Among = SharedVocabulary | SpanCandidates

__all__ = [
    "TOP",
    "Among",
    "CandidateSet",
    "Question",
    "Ranking",
    "SharedVocabulary",
    "SpanCandidates",
    "label_distribution",
    "rank",
    "rank_targets",
    "record",
    "span_alone",
]


def rank(
    scorer: Scorer,
    question: Question,
    candidates: Among,
    *,
    progress: bool | tqdm = True,
) -> Ranking:
    """Ask `question` of one model over `candidates`: every prompt (and group) ranked, near
    ties settled as at batch size 1, in one pass over the prompts."""
    if isinstance(candidates, SharedVocabulary):
        from tacit.ranking.vocabulary import rank_vocabulary

        return rank_vocabulary(scorer, question, candidates, progress)
    if isinstance(candidates, SpanCandidates):
        from tacit.ranking.spans import rank_spans

        return rank_spans(scorer, question, candidates, progress)
    raise TypeError(f"no ranking over {type(candidates).__name__}")


def rank_targets(
    scorer: Scorer,
    prompts: Sequence[str],
    targets: Sequence[int],
    vocab_ids: np.ndarray,
    *,
    top_k: int = TOP,
    progress: bool | tqdm = True,
) -> Ranking:
    """Rank one target per prompt (its position in `vocab_ids`, this model's token id of each
    shared-vocabulary word) among the shared vocabulary at the prompt's blank, with its share
    of it: the simplest question, for a model already in hand."""
    from tacit.vocab.shared import Vocabulary

    if len(prompts) != len(targets):
        raise ValueError("one target per prompt")
    words = tuple(str(n) for n in range(len(vocab_ids)))
    vocab = Vocabulary(words, {scorer.name: vocab_ids}, {scorer.name: frozenset(words)})
    question = Question(prompts, [[int(t)] for t in targets], top_k, shares=True)
    return rank(scorer, question, SharedVocabulary(vocab), progress=progress)


def label_distribution(
    scorer: Scorer,
    prompts: Sequence[str],
    words: Sequence[str],
    ids: np.ndarray | None,
    *,
    progress: bool | tqdm = True,
    cut_to_fit: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Each prompt's distribution over a few label words at its blank (cloze classification),
    the words' total probability, and how many prompts were cut to fit. With the words' token
    `ids` (one token each: a family that reads the blank where it is, a masked LM), the softmax
    over their logits at the blank and their share of the whole-vocabulary softmax; without,
    each word is scored in the blank as a span (any number of tokens: a causal LM), the
    softmax over the sentences' log-probabilities, and the words' total probability as the
    text right after the words before the blank."""
    import numpy as np

    if ids is not None:
        from tacit.ranking.vocabulary import distribution

        batches = scorer.score_vocab(prompts, ids, progress=progress, cut_to_fit=cut_to_fit)
        return distribution(batches, len(prompts), scorer.device)
    from scipy.special import softmax

    scores = scorer.score_spans(prompts, list(words), progress=progress)
    assert scores.sentence is not None, "a family that scores spans in place gives sentences"
    probs = softmax(np.asarray(scores.sentence, dtype=np.float64), axis=-1)
    return probs, np.exp(scores.span).sum(axis=1), 0


def record() -> dict[str, object]:
    """The tie rule as the manifest records it (`ties`: tacit.ranking.ties)."""
    from tacit.ranking.ties import RELATIVE_TOLERANCE, RULE

    return {"rule": RULE, "relative_tolerance": dict(RELATIVE_TOLERANCE)}
