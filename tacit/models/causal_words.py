"""A causal LM's vocabulary mode, with the text after the blank counted exactly:
score(w) = log P(w | before) + log P(after | before, w), as span mode scores the sentence.

The second term costs a pass per word and is <= 0, so it is computed only for the words that
can change what a reduction reads (tacit.models.answers.Needed): run the text before the blank
once (L(w) over the vocabulary and the key/value cache every suffix reuses), score the golds'
and the top k's suffixes, then every word with L(w) >= the score to beat - MARGIN; no rank,
top-k word or probability can change. `--suffix-top K` is a budget instead (ranks then may be
bounds: ScoredBatch.exact). Suffixes are batched by tokens (batching.rows_per_batch).
docs/probes/causal.md ("The score, precisely") has the rule, why it is exact, its costs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from tacit.models.answers import MARGIN, Needed, ScoredBatch
from tacit.models.base import progress_bar
from tacit.models.batching import rows_per_batch
from tacit.models.causal_cache import CausalModel
from tacit.models.meter import longest_first, quiet

if TYPE_CHECKING:
    from tacit.models.causal_cache import PrefixRun


class PrefixModel(CausalModel, Protocol):
    """What vocabulary mode reads of a causal LM's scorer (tacit.models.causal.CausalLMScorer):
    the cache bookkeeping's, where its blank is, and a prefix run once and continued."""

    def split_at_blank(self, template: str, *, at_end: bool = False) -> tuple[str, str, str]: ...

    def _run_prefix(self, prefix: Sequence[int]) -> PrefixRun: ...

    def _after_prefix(
        self, run: PrefixRun, rests: list[list[int]], bar: tqdm
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...

    def _with_start(
        self, texts: Sequence[str], cut_to_fit: bool, *, room: int = 0
    ) -> tuple[list[list[int]], np.ndarray]: ...


def vocab_scores(
    scorer: PrefixModel,
    texts: list[str],
    rows_of: list[np.ndarray],
    vocab_ids: np.ndarray,
    needed: Needed | None,
    progress: bool | tqdm,
    cut_to_fit: bool,
    at_blank: Callable[[list[int]], Iterator[ScoredBatch]],
) -> Iterator[ScoredBatch]:
    """ScoredBatch of the distinct `texts` (every blank ends its sentence), scored as the
    module docstring says: log-probabilities, exact for every word `needed` can read, an
    upper bound for the rest. Texts with nothing after the blank, outside any group with one
    that has, are read at the blank in batches (every word exact: `at_blank`, given their
    positions in `texts`)."""
    split = [scorer.split_at_blank(t, at_end=True) for t in texts]
    needs = TextNeeds(needed, rows_of)
    components = needs.components(len(texts))
    plain = [c[0] for c in components if len(c) == 1 and not split[c[0]][2]]
    if plain:
        yield from at_blank(plain)
    rest = [c for c in components if len(c) > 1 or split[c[0]][2]]
    total = sum(len(c) for c in rest)
    if not total:
        return
    words = Words(scorer, vocab_ids)
    with (
        progress_bar(progress, total, f"scoring {scorer.name}", "text") as bar,
        torch.inference_mode(),
    ):
        for members in rest:
            part = [Suffixed(scorer, words, split[i], cut_to_fit) for i in members]
            yield _bounded(part, [needs.golds[i] for i in members], needs, members, rows_of)
            bar.update(len(members))


class TextNeeds:
    """Needed, per distinct text: the golds of its prompts, the groups of texts whose mean is
    read, and whether every word is read."""

    def __init__(self, needed: Needed | None, rows_of: list[np.ndarray]) -> None:
        self.suffix_top = 0 if needed is None else needed.suffix_top
        self.every_word = (needed is None or needed.every_word) and not self.suffix_top
        self.top_k = 0 if needed is None else needed.top_k
        self.golds: list[np.ndarray] = []
        self.groups: list[list[int]] = []
        group_of_row = [] if needed is None or needed.groups is None else needed.groups
        members: dict[int, set[int]] = {}
        for text, rows in enumerate(rows_of):
            golds = [] if needed is None else [g for r in rows for g in needed.golds[int(r)]]
            self.golds.append(np.unique(np.asarray(golds, dtype=np.int64)))
            for row in rows if len(group_of_row) else ():
                members.setdefault(int(group_of_row[int(row)]), set()).add(text)
        self.groups = [sorted(m) for m in members.values() if len(m) > 1]

    def components(self, n: int) -> list[list[int]]:
        """The texts in sets that are scored together: each group's texts (groups that share
        a text joined), every other text alone."""
        parent = list(range(n))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for group in self.groups:
            for text in group[1:]:
                parent[root(text)] = root(group[0])
        found: dict[int, list[int]] = {}
        for i in range(n):
            found.setdefault(root(i), []).append(i)
        return list(found.values())


class Words:
    """The shared vocabulary's words as text (each id decoded, its leading space dropped: the
    blank's own space goes before it), decoded once per call."""

    def __init__(self, scorer: PrefixModel, vocab_ids: np.ndarray) -> None:
        self.ids = np.asarray(vocab_ids, dtype=np.int64)
        decoded = scorer.tokenizer.batch_decode(
            [[int(i)] for i in self.ids], clean_up_tokenization_spaces=False
        )
        self.texts = [str(t).lstrip() for t in decoded]
        self.device_ids = torch.as_tensor(self.ids, device=scorer.device)


class Suffixed:
    """One text whose blank has text after it: its prefix run once, its words' first term
    L(w) (`bound`), and the full score of the words asked for (`score`)."""

    def __init__(
        self,
        scorer: PrefixModel,
        words: Words,
        split: tuple[str, str, str],
        cut_to_fit: bool,
    ) -> None:
        self.scorer, self.words = scorer, words
        self.prefix, self.gap, self.after = split
        self.prefix_ids = scorer._encode_texts([self.prefix])[0]
        self.after_ids = scorer._encode_texts([self.after])[0] if self.after else []
        # the word and the text after it must fit after the start token (or chat prefix) and
        # the prefix
        room = 1 + len(self.after_ids) + (1 if self.after_ids else 0)
        encoded, cut = scorer._with_start([self.prefix], cut_to_fit, room=room)
        self.cut = int(cut.sum())
        self.run: PrefixRun = scorer._run_prefix(encoded[0][scorer._n_start :])
        self.bound = self.run.following[words.device_ids]
        self.scored = 0

    def score(self, positions: torch.Tensor) -> torch.Tensor:
        """The full score of the words at `positions` (of the shared vocabulary)."""
        if not self.after_ids:
            return self.bound[positions]
        chosen = positions.cpu().numpy()
        rests = self._rests(chosen)
        self.scored += len(rests)
        out = np.zeros(len(rests))
        lengths = longest_first([len(r) for r in rests])
        # as many tokens a batch as --batch-size sentences of start, prefix, word and after
        sentence = self.scorer._n_start + len(self.prefix_ids) + 1 + len(self.after_ids)
        factor = sentence // max(1, max(len(r) for r in rests) - 1)  # a rest's last: no input
        with (
            quiet(len(rests), lengths) as bar,  # a calibration counts them (models.meter)
            rows_per_batch(self.scorer, factor),
        ):
            for indices, result in self.scorer._after_prefix(self.run, rests, bar):
                for at, i in enumerate(indices):
                    out[i] = result[at, : len(rests[i])].sum()
        return torch.as_tensor(out, dtype=torch.float32, device=self.bound.device)

    def _rests(self, chosen: np.ndarray) -> list[list[int]]:
        """Each chosen word's token and the text after it, tokenised as the whole sentence
        tokenises them (the text after alone where BPE merges it with the word)."""
        ids = self.words.ids[chosen]
        sentences = [self.prefix + self.gap + self.words.texts[int(i)] + self.after for i in chosen]
        encoded = self.scorer._encode_texts(sentences)
        n = len(self.prefix_ids)
        rests = []
        for word, tokens in zip(ids, encoded):
            whole = tokens[:n] == self.prefix_ids and len(tokens) > n and tokens[n] == word
            rests.append([int(word), *(tokens[n + 1 :] if whole else self.after_ids)])
        return rests


def _kth_best(scores: torch.Tensor, known: torch.Tensor, k: int) -> torch.Tensor:
    """Per row, the k-th best of the `known` scores (-inf where fewer are known, or k is 0)."""
    if k == 0:
        return torch.full(scores.shape[:-1], float("-inf"), device=scores.device)
    masked = torch.where(known, scores, torch.tensor(float("-inf"), device=scores.device))
    return masked.topk(min(k, scores.shape[-1]), dim=-1).values[..., -1]


def _to_beat(scores: torch.Tensor, known: torch.Tensor, golds: np.ndarray, k: int) -> torch.Tensor:
    """The score to beat of one row: the lowest gold's, or the k-th best known if lower."""
    beat = _kth_best(scores, known, k)
    if len(golds):
        beat = torch.minimum(beat, scores[torch.as_tensor(golds, device=scores.device)].min())
    return beat


def _bounded(
    part: Sequence[Suffixed],
    golds: Sequence[np.ndarray],
    needs: TextNeeds,
    members: list[int],
    rows_of: list[np.ndarray],
) -> ScoredBatch:
    """One component's texts scored: exact where Needed can read, bounded elsewhere."""
    bound = torch.stack([p.bound for p in part])  # [texts x words]
    device, (n, width) = bound.device, bound.shape
    scores = bound.clone()
    exact = torch.zeros((n, width), dtype=torch.bool, device=device)
    for i, p in enumerate(part):
        if not p.after_ids:
            exact[i] = True  # nothing after the blank: the first term is the score

    def score(ask: torch.Tensor) -> None:
        ask &= ~exact
        for i, p in enumerate(part):
            positions = torch.nonzero(ask[i]).squeeze(1)
            if len(positions):
                scores[i, positions] = p.score(positions)
                exact[i, positions] = True

    k = min(needs.top_k, width)
    budget = min(needs.suffix_top, width)
    if needs.every_word:
        score(torch.ones_like(exact))
    else:
        local = {text: i for i, text in enumerate(members)}
        groups = [[local[t] for t in g] for g in needs.groups if g[0] in local]
        group_golds = [np.unique(np.concatenate([golds[i] for i in g])) for g in groups]
        # round 1: the golds and the top k (with a budget, the top K) by the first term, per
        # text and per group
        first = max(k, budget)
        ask = torch.zeros_like(exact)
        for i in range(n):
            ask[i, torch.as_tensor(golds[i], device=device)] = True
            ask[i, bound[i].topk(first).indices] = True
        for g, gg in zip(groups, group_golds):
            chosen = torch.zeros(width, dtype=torch.bool, device=device)
            chosen[torch.as_tensor(gg, device=device)] = True
            chosen[bound[g].mean(0).topk(first).indices] = True
            ask[g] |= chosen
        score(ask)
        if budget:  # the budget spent: what was scored is what a reduction may read
            return _batch(part, scores, exact, members, rows_of, budget)
        # round 2: every word whose bound reaches the score to beat, less the margin
        ask = torch.zeros_like(exact)
        for i in range(n):
            beat = _to_beat(scores[i], exact[i], golds[i], k)
            ask[i] = scores[i] >= beat - MARGIN
        for g, gg in zip(groups, group_golds):
            mean, known = scores[g].mean(0), exact[g].all(0)
            beat = _to_beat(mean, known, gg, k)
            ask[g] |= (mean >= beat - MARGIN) & ~known
        score(ask)
    return _batch(part, scores, exact, members, rows_of, budget)


def _batch(
    part: Sequence[Suffixed],
    scores: torch.Tensor,
    exact: torch.Tensor,
    members: list[int],
    rows_of: list[np.ndarray],
    budget: int,
) -> ScoredBatch:
    """A component's scores as a ScoredBatch (log-probabilities: `log_z` zero), with the work
    it ran and, with a budget, which scores are exact."""
    rows = [rows_of[t] for t in members]
    suffixed = [p for p in part if p.after_ids]
    return ScoredBatch(
        rows=np.concatenate(rows),
        batch_rows=np.concatenate([np.full(len(r), i) for i, r in enumerate(rows)]),
        shared=scores,
        log_z=torch.zeros(len(part), device=scores.device),
        cut=sum(p.cut for p in part),
        work={
            "vocab_suffixes": sum(p.scored for p in suffixed),
            "vocab_suffixes_naive": scores.shape[1] * len(suffixed),
        },
        exact=exact if budget else None,
        fixed=~exact if budget else None,
    )
