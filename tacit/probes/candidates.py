"""What a probe's blank is ranked among, chosen per run (Candidates): the shared vocabulary of
the models' tokenizers (the paper's, one token per word), or sets of candidate spans of any
length, scored exactly by any model family (SpanRanker).

A candidate set is a list of text spans put in the blank of every prompt: `concepts` (every
concept of the norms with its article, "A bear", "An aardvark", "Scissors"), `answers` (every
answer to an elicitation relation over all concepts, "fur", "four legs"), or a FILE (one span
a line). The scorer gives each span's log-probability (Scorer.score_spans); this module turns
it into the score spans are ranked by (`--normalize`):

- `sum`: the span's log-probability (a causal model: the whole sentence's, which ranks spans
  as P(span | the rest of the sentence); a seq2seq model: its infilling target's,
  `<extra_id_0> SPAN <extra_id_1>`, which counts where the span ends);
- `mean`: the span's log-probability per token;
- `pmi`: `sum` minus the same span's `sum` in the prompt's property-free form (retrieval:
  "<span>."; elicitation: the prompt with "it" for the concept), so that spans likely
  anywhere do not win for being likely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.core.blank import MASK
from tacit.core.choices import meant
from tacit.core.errors import TacitError, shorten
from tacit.core.files import check_text, sha256_bytes
from tacit.core.option_names import option
from tacit.lexicon import noun_phrase, sentence_start
from tacit.models.base import VOCAB_ANYWHERE, Needs
from tacit.norms.phrasing import answer_spans

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.core.options import RunOptions
    from tacit.models.base import Scorer, SpanScores
    from tacit.norms.reader import NormSet
    from tacit.templates import Template
    from tacit.vocab.shared import Vocabulary

TOP = 5  # candidates listed per prompt in prompts.csv
# what a probe with candidate spans asks of every model
SPAN_NEEDS = Needs.of("spans", asks="candidate spans in the blank")


def span_cost(
    key: str, spans: Callable[[pd.DataFrame], Any]
) -> Callable[[pd.DataFrame], pd.Series]:
    """A span probe's Work.cost: each distinct prompt text of a key costs a sentence per
    candidate in its blank (`spans`: rows -> how many candidates each row's blank takes)."""

    def cost(rows: pd.DataFrame) -> pd.Series:
        texts = rows.drop_duplicates([key, "prompt"])
        return texts.assign(_n=spans(texts)).groupby(key, sort=False)["_n"].sum()

    return cost


def vocab_needs(templates: Sequence[Template], spans: str) -> Needs:
    """What scoring the blank of these templates over the shared vocabulary asks of a model: a
    family that reads only the next token (a causal LM) serves where every blank ends its
    sentence; otherwise the blank must be read where it is (a masked LM). `spans`: the
    candidate spans to suggest instead (`concepts`, `answers`)."""
    at_end = all(template.blank_ends_sentence for template in templates)
    return Needs.of(
        "vocab" if at_end else VOCAB_ANYWHERE,
        asks="the shared vocabulary at each template's blank",
        instead={
            "spans": f"rank candidate spans instead ({option('--candidates')} {spans}), or give "
            f"{option('--templates')} whose blanks end their sentences"
        },
    )


@dataclass(frozen=True)
class CandidateSet:
    """The spans every prompt ranks, and where they came from (`concepts`, `answers`, a file)."""

    source: str
    spans: list[str]

    @property
    def text(self) -> str:
        """candidates.txt: one span a line."""
        return "".join(f"{span}\n" for span in self.spans)

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.text.encode("utf-8"))

    def index(self) -> dict[str, int]:
        return {span: n for n, span in enumerate(self.spans)}

    def record(self) -> dict[str, Any]:
        return {"source": self.source, "size": len(self.spans), "sha256": self.sha256}


@dataclass
class Candidates:
    """The run's choice of candidates, with what the run needs of it: what a resumed run must
    match, the manifest's record, and the work span scoring took (summed over models).

    vocabulary: the shared vocabulary (vocabulary mode), with the tokenizers loaded to build it.
    sets: candidate span sets by name (span mode): `all`, or one per elicitation relation.
    """

    vocabulary: Vocabulary | None = None
    tokenizers: Mapping[str, Any] = field(default_factory=dict)
    vocab_file: str | Path | None = None
    sets: dict[str, CandidateSet] = field(default_factory=dict)
    scoring: str = "l2r"
    normalize: str = "sum"
    token_scores: bool = False  # keep the listed candidates' per-token scores (tokens.csv)

    @classmethod
    def shared_vocabulary(
        cls, models: Sequence[Any], run: RunOptions, needs: Needs, probe: str
    ) -> Candidates:
        """The shared vocabulary of the models' tokenizers (and --vocab-model, --vocab-file),
        once every model is known to answer what the probe `needs` of it there (a model that
        cannot score a vocabulary, a served one, is refused first, in one line)."""
        from tacit.models.families import check_needs
        from tacit.models.vocabulary import vocabulary_for

        check_needs(models, run, needs, probe)

        vocab, tokenizers = vocabulary_for(
            models,
            vocab_models=run.vocab_models,
            vocab_file=run.vocab_file,
            revision=run.revision,
            model_args=run.model_args,
            words=run.vocab_words,
        )
        return cls(vocabulary=vocab, tokenizers=tokenizers, vocab_file=run.vocab_file)

    @property
    def vocab(self) -> Vocabulary:
        assert self.vocabulary is not None, "span candidates have no vocabulary"
        return self.vocabulary

    def resume_key(self) -> dict[str, Any]:
        """What a resumed run must have scored over too."""
        if self.vocabulary is not None:
            return {"vocabulary_sha256": self.vocabulary.sha256}
        return {
            "candidates_sha256": {n: s.sha256 for n, s in self.sets.items()},
            "span_scoring": self.scoring,
            "normalize": self.normalize,
            **token_scores_key(self.token_scores),
        }

    def files(self, *, named: bool = False) -> dict[str, str]:
        """The spans ranked, one a line: candidates.txt (one set, or the same spans under every
        name), else candidates-<name>.txt per set (`named`: always)."""
        if not named and len({s.text for s in self.sets.values()}) == 1:
            return {"candidates.txt": next(iter(self.sets.values())).text}
        return {f"candidates-{n.replace(' ', '_')}.txt": s.text for n, s in self.sets.items()}

    def record(self, models: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The manifest's account: the vocabulary, or the candidate sets, the span scoring, the
        normalisation and the work the models' span scoring ran against the naive count (a
        masked LM's forward rows, a causal LM's tokens: SpanScores.work); and the tie rule the
        ranks follow (tacit.models.ties)."""
        from tacit.models.ties import record

        if self.vocabulary is not None:
            return {"vocabulary": self.vocabulary.record(self.vocab_file), "ties": record()}
        return {
            "candidates": {name: s.record() for name, s in self.sets.items()},
            "span_scoring": self.scoring,
            "normalize": self.normalize,
            **token_scores_key(self.token_scores),
            "span_work": span_work(models),
            "ties": record(),
        }


def token_scores_key(token_scores: bool) -> dict[str, bool]:
    """`token_scores` for a manifest or a resume key, where it is on (a run without it records
    what it always did)."""
    return {"token_scores": True} if token_scores else {}


def span_work(models: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The work the models' span scoring ran, summed over the models' records (a masked LM's
    forward rows, a causal LM's tokens, each against the naive count: SpanScores.work)."""
    return {
        key: sum(m.get(key, 0) for m in models)
        for key in ("span_rows", "span_rows_naive", "span_tokens", "span_tokens_naive")
        if any(key in m for m in models)
    }


def unreadable_spans(
    spans: Sequence[str], models: Sequence[Any], run: RunOptions
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each model's tokenizer (loaded once: the models reuse it), and the spans some tokenizer
    does not read whole (an unknown token, a character dropped: tacit.vocab.shared
    span_problems), each with which tokenizer and why. Such a span would be scored as
    something else: a FILE's is refused, a span the norms gave is left out and counted."""
    from tacit.models.vocabulary import model_tokenizers
    from tacit.vocab.shared import span_problems

    tokenizers = model_tokenizers(models, revision=run.revision, model_args=run.model_args)
    problems: dict[str, str] = {}
    for name, tokenizer in tokenizers.items():
        if tokenizer is None:  # a family that plans without one: nothing to check here
            continue
        for span, why in span_problems(tokenizer, spans).items():
            problems.setdefault(span, f"not read whole by {name}'s tokenizer ({why})")
    return tokenizers, problems


def refuse_unreadable(candidates: CandidateSet, problems: Mapping[str, str]) -> None:
    """A FILE of candidates holding a span a model cannot read: one line naming file and line."""
    for number, span in enumerate(candidates.spans, start=1):
        if span in problems:
            raise TacitError(
                f"{candidates.source}, line {number}: {shorten(span)!r} is {problems[span]}: "
                "remove it, or use models that read it"
            )


def read_candidates(path: str | Path, names: Sequence[str] = ()) -> CandidateSet:
    """A FILE of candidates, one span a line (UTF-8); blank lines and repeats are errors that
    name the line, so that the set scored is exactly the file. A missing file nearly named
    like one of the probe's `names` for its own sets (`concept`) says which was meant."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TacitError(
            f"{option('--candidates')} {path}: no such file{meant(path, names)}"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise TacitError(
            f"{option('--candidates')} {path}: cannot read it as UTF-8 text ({err})"
        ) from None
    check_text(text, path)
    spans: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        span = line.strip()
        if not span:
            raise TacitError(f"{path}, line {number}: a blank line (one candidate a line)")
        if span in seen:
            raise TacitError(f"{path}, line {number}: {shorten(span)!r} repeats line {seen[span]}")
        seen[span] = number
        spans.append(span)
    if not spans:
        raise TacitError(f"{option('--candidates')} {path}: the file names no candidate")
    return CandidateSet(str(path), spans)


def concept_candidates(
    norms: NormSet, concepts: Sequence[str], articles: Mapping[str, str] | None = None
) -> tuple[CandidateSet, dict[str, str]]:
    """Every concept of the norms as a sentence-initial span ("A bear"), and each given
    concept's span. Two senses with one name read the same: one candidate, the target of
    both concepts' prompts."""
    span_of = {c: sentence_start(noun_phrase(c, articles)) for c in norms.concepts}
    spans = list(dict.fromkeys(span_of.values()))
    return CandidateSet("concepts", spans), {c: span_of[c] for c in concepts}


def relation_answers(norms: NormSet, relation: str) -> pd.DataFrame:
    """`concept, span, pf` of every answer to the relation (a span given by several features
    of a concept keeps the highest pf)."""
    table = norms.table[norms.table["relation"] == relation]
    rows = [
        (concept, span, pf)
        for concept, answer, pf in zip(table["concept"], table["answer"], table["pf"])
        for span in answer_spans(answer)
    ]
    answers = pd.DataFrame(rows, columns=["concept", "span", "pf"])
    return (
        answers.sort_values("pf", ascending=False, kind="stable")
        .drop_duplicates(["concept", "span"])
        .reset_index(drop=True)
    )


def span_alone(template: str) -> str:
    """A template without its context, for `--normalize pmi`: the span alone, '<mask>.'"""
    return f"{MASK}."


class SpanRanker:
    """One model's scores of the candidates in a probe's templates, normalised as asked, with
    the property-free baseline of `pmi` computed once per model; and the same scores of one
    template and span alone, which the tie rule settles near ties on (settle_spans)."""

    def __init__(
        self,
        candidates: CandidateSet,
        scoring: str,
        normalize: str,
        baseline_of: Callable[[str], str],
        tokens: bool = False,
    ) -> None:
        self.candidates, self.scoring, self.normalize = candidates, scoring, normalize
        self.baseline_of = baseline_of  # template -> its property-free form
        self.tokens = tokens  # keep the candidates' per-token scores (SpanScores.tokens)
        # template -> its candidates' SpanTokens, from the last call of `scores` (with tokens)
        self.last_tokens: dict[str, np.ndarray] = {}
        self._baselines: dict[tuple[str, str], np.ndarray] = {}
        self._alone: dict[tuple[str, str, int], float] = {}
        # (model, template) -> the largest |log-probability| its scores were made of
        self.scale: dict[tuple[str, str], float] = {}
        self.work: dict[str, int] = {}

    def scores(
        self, scorer: Scorer, templates: Sequence[str], bar: tqdm | bool
    ) -> tuple[np.ndarray, bool]:
        """[templates x candidates] scores to rank by (see the module docstring), and whether
        they are log-probabilities of the spans themselves (`sum`, with a family that scores
        the span rather than its whole sentence)."""
        spans = self.candidates.spans
        shown = bar if isinstance(bar, bool) else not bar.disable  # the run's bar: its own moves
        raw = scorer.score_spans(
            templates, spans, scoring=self.scoring, progress=shown, tokens=self.tokens
        )
        self._count(raw)
        if raw.tokens is not None:
            self.last_tokens = dict(zip(templates, raw.tokens))
        if not isinstance(bar, bool):
            bar.update(len(templates))  # the run's bar counts prompt texts
        baselines = None
        if self.normalize == "pmi":
            free = [self.baseline_of(t) for t in templates]
            missing = sorted({f for f in free if (scorer.name, f) not in self._baselines})
            if missing:
                got = scorer.score_spans(missing, spans, scoring=self.scoring, progress=False)
                self._count(got)
                for n, text in enumerate(missing):
                    self._baselines[(scorer.name, text)] = whole(got)[n]
            baselines = np.stack([self._baselines[(scorer.name, f)] for f in free])
        magnitude = np.abs(whole(raw)) + (0 if baselines is None else np.abs(baselines))
        largest = magnitude.max(axis=1).tolist()
        self.scale.update({(scorer.name, t): m for t, m in zip(templates, largest)})
        return self._normalised(raw, baselines), self.normalize == "sum" and raw.sentence is None

    def token_cells(
        self, templates: Sequence[str], positions: Sequence[Sequence[int]]
    ) -> list[str]:
        """For each row (its template, scored by the last call of `scores`, and the positions
        of the candidates it lists), the JSON of those candidates' tokens (token_cell); empty
        where no tokens were asked for."""
        from tacit.probes.token_rows import token_cell

        if not self.tokens:
            return [""] * len(templates)
        spans = self.candidates.spans
        return [
            token_cell([spans[p] for p in chosen], [self.last_tokens[template][p] for p in chosen])
            for template, chosen in zip(templates, positions)
        ]

    def _normalised(self, raw: SpanScores, baselines: np.ndarray | None) -> np.ndarray:
        """The scores spans are ranked by (`--normalize`), from their log-probabilities and
        those in the property-free baseline (`pmi`)."""
        if self.normalize == "mean":
            return raw.span / raw.n_tokens
        if baselines is None:
            return whole(raw)
        return whole(raw) - baselines

    def alone(self, scorer: Scorer, template: str, positions: Sequence[int]) -> np.ndarray:
        """The scores of these candidates in the template, each span's sentence scored alone
        (a batch of one, the whole sentence: the canonical scores of tacit.models.ties), its
        baseline too (`pmi`); kept per model, template and span."""
        from tacit.models.batching import one_at_a_time

        spans = self.candidates.spans
        for position in positions:
            key = (scorer.name, template, position)
            if key in self._alone:
                continue
            texts = [template] + ([self.baseline_of(template)] if self.normalize == "pmi" else [])
            with one_at_a_time(scorer):
                got = [
                    scorer.score_spans(
                        [text], [spans[position]], scoring=self.scoring, progress=False, cache=False
                    )
                    for text in texts
                ]
            baseline = whole(got[1]) if len(got) > 1 else None
            self._alone[key] = float(self._normalised(got[0], baseline)[0, 0])
        return np.array([self._alone[(scorer.name, template, p)] for p in positions])

    def _count(self, scores: SpanScores) -> None:
        for key, value in scores.work.items():
            self.work[key] = self.work.get(key, 0) + value

    def take_counts(self) -> dict[str, int]:
        """The work run since the last call (SpanScores.work, and near ties settled), for the
        model's record."""
        counts, self.work = self.work, {}
        return counts


def whole(scores: SpanScores) -> np.ndarray:
    """What `sum` ranks spans by: the whole sentence's log-probability (a causal model), else
    the span's."""
    return scores.sentence if scores.sentence is not None else scores.span


def settle_spans(
    scorer: Scorer,
    members: Sequence[Sequence[tuple[SpanRanker, str]]],
    scores: np.ndarray,
    anchors: Sequence[Sequence[int]],
    top_k: int,
    counted: SpanRanker,
) -> np.ndarray:
    """`scores` ([rows x candidates]) with their near ties settled (tacit.models.ties) around
    each row's anchors (targets, gold answers) and top_k: each row is the mean of its members'
    (ranker, template) scores (one member: a prompt; several: an ensemble of templates), and a
    near score is put in place by the mean of theirs alone. The counts go to `counted`."""
    from tacit.models.ties import Settled, relative_tolerance, settle_array

    settled = Settled()
    relative = relative_tolerance(scorer)
    scale = np.array([max(r.scale[(scorer.name, t)] for r, t in row) for row in members])
    out = np.array(scores, dtype=np.float64)

    def canonical(row: int, positions: list[int]) -> np.ndarray:
        return np.mean([r.alone(scorer, t, positions) for r, t in members[row]], axis=0)

    settle_array(out, anchors, top_k, relative * np.maximum(scale, 1.0), canonical, settled)
    for key, value in settled.counts().items():
        counted.work[key] = counted.work.get(key, 0) + value
    return out


def take_counts(rankers: Iterable[SpanRanker]) -> dict[str, int]:
    """The work several rankers ran since the last call, added up."""
    counts: dict[str, int] = {}
    for ranker in rankers:
        for key, value in ranker.take_counts().items():
            counts[key] = counts.get(key, 0) + value
    return counts


def rank_targets(scores: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rank, target score) of each row's target among the candidates: rank is 1 + the number
    of candidates scored higher, or as high at an earlier position (tacit.models.ties)."""
    positions = np.asarray(targets, dtype=np.int64)[:, None]
    return rank_candidates(scores, positions)[:, 0], scores[np.arange(len(targets)), targets]


def rank_candidates(scores: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
    """[rows x m] the rank of each of `positions` (default: every candidate) in its row, in
    the tie rule's order (tacit.models.ties.ranks)."""
    import torch

    from tacit.models.ties import ranks

    if positions is None:
        positions = np.tile(np.arange(scores.shape[1]), (len(scores), 1))
    table = torch.from_numpy(np.asarray(scores, dtype=np.float64))
    return ranks(table, torch.as_tensor(positions, dtype=torch.long)).numpy()


def shares(scores: np.ndarray) -> np.ndarray:
    """Softmax of each row's scores over the candidate set (a target's share of the set)."""
    shifted = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


def best_positions(scores: np.ndarray, k: int) -> np.ndarray:
    """[rows x k] each row's k best candidates in the tie rule's order (tacit.models.ties)."""
    import torch

    from tacit.models.ties import top

    return top(torch.from_numpy(np.asarray(scores, dtype=np.float64)), k)[1].numpy()


def top_spans(scores: np.ndarray, spans: Sequence[str], k: int = TOP) -> list[str]:
    """'A bear:-3.21 | A dog:-4.5 | ...': each row's k best candidates with their scores
    (spans hold spaces, so ` | ` separates them)."""
    names = np.asarray(spans, dtype=object)
    return [
        " | ".join(f"{names[i]}:{row[i]:.4g}" for i in order)
        for row, order in zip(scores, best_positions(scores, k))
    ]
