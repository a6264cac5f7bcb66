"""Asking among candidate spans: the blank ranked among phrases of any length (a probe's own
sets, or `--candidates FILE`, one span a line), each scored whole in the blank by any family
(`--span-scoring`, `--normalize`), with each listed span's tokens kept on request
(`--token-scores`, tokens.csv)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from tacit.ask.base import Answered, Ask, Asking, Column, Finished, Work
from tacit.ask.ranked import default_key, ranked_work
from tacit.ask.tokens import TOKENS_TABLE, token_table
from tacit.core.choices import meant
from tacit.core.errors import TacitError, shorten
from tacit.core.files import check_text, regular_file
from tacit.core.option_names import option
from tacit.models.base import Needs
from tacit.ranking.question import CandidateSet
from tacit.ranking.spans import SpanCandidates, span_alone

if TYPE_CHECKING:
    from tacit.core.manifest import ModelRecord
    from tacit.models.base import RunModel
    from tacit.ranking import Ranking
    from tacit.templates import Template

# what a probe with candidate spans asks of every model
SPAN_NEEDS = Needs.of("spans", asks="candidate spans in the blank")


class SpanAsk(Ask):
    """The blank ranked among candidate spans (see the module docstring)."""

    name = "spans"
    form = "phrase"
    said = "candidate spans"
    takes = ("candidates", "span_scoring", "normalize", "token_scores")
    over = "the candidates"
    recorded_as = "span_scoring"
    own: ClassVar[tuple[str, ...]] = ()  # the names of the probe's own sets (`concepts`)
    files: ClassVar[str] = "sets"  # candidates.txt where the sets are one, else one a set
    records_sets: ClassVar[bool] = True  # the manifest records the candidate sets

    @classmethod
    def ranked_among(cls, manifest: Mapping[str, Any]) -> str:
        """The candidate sets and the work their scoring took against the naive count."""
        sizes = ", ".join(
            f"{s['size']} ({s['source']}" + (f", {name})" if name != "all" else ")")
            for name, s in manifest["candidates"].items()
        )
        work = manifest["span_work"]
        done = [
            f"{what}: {work[f'span_{what}']:,} (naive {work[f'span_{what}_naive']:,})"
            for what in ("rows", "tokens")
            if f"span_{what}" in work
        ]
        return f"candidates: {sizes}, {span_scoring_said(manifest)}; " + "; ".join(done)

    @classmethod
    def compared(cls, manifest: Mapping[str, Any]) -> dict[str, str]:
        candidates = manifest.get("candidates") or {}
        masked = candidates and masked_ran(manifest)  # span scoring is a masked LM's option
        return {
            "vocabulary": "",
            "candidates": ", ".join(
                f"{c.get('size')} {c.get('source')} ({str(c.get('sha256'))[:8]})"
                for c in candidates.values()
            ),
            "span scoring": str(manifest.get("span_scoring")) if masked else "",
            "normalisation": str(manifest.get("normalize")) if candidates else "",
        }

    @classmethod
    def no_probability(cls, manifest: Mapping[str, Any], model: Mapping[str, Any]) -> str | None:
        normalize, kind = manifest.get("normalize"), model.get("kind")
        if normalize in ("mean", "pmi"):
            return f"span scores normalised by {normalize}, not sum"
        if kind == "causal":
            return "a decoder-only model scores the whole sentence"
        if kind == "seq2seq" and "candidates" in manifest:
            return "a seq2seq model scores its span's target with sentinels"
        return None

    def __init__(self, values: Any, probe: str) -> None:
        super().__init__(values, probe)
        self.scoring = str(self.value("span_scoring", "l2r"))
        self.normalize = str(self.value("normalize", "sum"))
        self.tokens = bool(self.value("token_scores", False))
        given = self.value("candidates")
        self.file = None if given is None or str(given) in self.own else given
        self.sets: dict[str, CandidateSet] = {}
        self.ranked: SpanCandidates | None = None  # what work() ranks among

    @classmethod
    def named(cls) -> str:
        chosen = " or ".join([*cls.own, "a FILE"])
        given = f" ({option('--candidates')} {chosen})" if "candidates" in cls.takes else ""
        return cls.said + given

    @classmethod
    def chosen(cls, values: Any) -> bool:
        by = getattr(values, "by", "scoring")
        return by != "generation" and str(getattr(values, "candidates", "")) != "vocab"

    def needs(self, templates: Sequence[Template], instead: str, in_place: bool = False) -> Needs:
        return SPAN_NEEDS

    def has(self, text: str, among: str | None = None) -> bool:
        chosen = self.sets[among] if among is not None else next(iter(self.sets.values()))
        return text in chosen.index()

    def unread(self, texts: Sequence[str]) -> dict[str, str]:
        return unreadable_spans(texts, self.models)

    def candidate_sets(
        self,
        own: Callable[[], dict[str, CandidateSet]],
        *,
        one: str = "",
        without: Callable[[dict[str, str]], dict[str, CandidateSet]] | None = None,
    ) -> tuple[dict[str, CandidateSet], dict[str, str]]:
        """The probe's own sets, `without` the spans of theirs no model reads whole (those
        spans, with why, returned); or the FILE as each of them (with `one`, where there is
        only one), a span no model reads refused."""
        sets = own()
        if self.file is None:
            every = sorted({span for chosen in sets.values() for span in chosen.spans})
            unread = self.unread(every)
            self.sets = without(unread) if unread and without is not None else sets
            return self.sets, unread
        if one and len(sets) > 1:
            raise TacitError(f"{option('--candidates')} {self.file}: {one}")
        given = read_candidates(self.file, ("vocab", *self.own))
        refuse_unreadable(given, self.unread(given.spans))
        self.sets = {name: given for name in sets}
        return self.sets, {}

    def work(
        self,
        rows: pd.DataFrame,
        asking: Asking,
        columns: Sequence[Column] | Callable[[pd.DataFrame, Answered], pd.DataFrame],
        *,
        key: str | None = None,
        baseline: Callable[[str], str] | None = None,
    ) -> Work:
        key = key or default_key(rows)
        among = self.ranked = SpanCandidates(
            dict(self.sets), self.scoring, self.normalize, baseline or span_alone, self.tokens
        )
        index = {name: chosen.index() for name, chosen in self.sets.items()}
        only = next(iter(self.sets))
        text = asking.texts or (lambda _, name: name)

        def positions(set_name: str | None, names: Sequence[str]) -> list[int]:
            chosen = set_name or only
            return [index[chosen][text(chosen, name)] for name in names]

        def subset(set_name: str | None, names: Sequence[str]) -> list[int]:
            wanted = set(names)
            return [
                index[set_name or only][s] for s in self.sets[set_name or only].spans if s in wanted
            ]

        def fields(
            ranking: Ranking, row_sets: Sequence[str] | None, asked: pd.DataFrame
        ) -> dict[str, Callable[[], Any]]:
            named = asking.answers(asked)
            chosen = row_sets or [only] * len(asked)
            return {
                "score": lambda: ranking.score[:, 0].astype(float),
                "n_candidates": lambda: ranking.n_candidates,
                "span": lambda: [text(s, n[0]) for s, n in zip(chosen, named)],
            }

        sizes = {name: len(chosen.spans) for name, chosen in self.sets.items()}
        row_sets = asking.sets

        def per_row(texts: pd.DataFrame) -> Any:
            return [sizes[s] for s in row_sets(texts)] if row_sets else max(sizes.values())

        labels = self.sets[asking.labels].spans if asking.labels else None
        return ranked_work(
            rows,
            key,
            asking,
            columns,
            among,
            SPAN_NEEDS,
            positions,
            subset,
            fields,
            sets=True,
            labels=labels,
            cost=span_cost(key, per_row),
            questions=asking.questions,
        )

    def resume_key(self) -> dict[str, Any]:
        return {
            "candidates_sha256": {n: s.sha256 for n, s in self.sets.items()},
            "span_scoring": self.scoring,
            "normalize": self.normalize,
            **token_scores_key(self.tokens),
        }

    def finish(
        self, rows: pd.DataFrame, models: Sequence[ModelRecord], keys: Sequence[str] = ("prompt",)
    ) -> Finished:
        """tokens.csv (`keys`: the columns that tell the rows apart), the candidate files, and
        the manifest's record of the sets, their scoring and its work, and the tie rule."""
        from tacit.ranking import record

        extra = {}
        if self.tokens:
            rows, extra[TOKENS_TABLE] = token_table(rows, list(keys))
        added: dict[str, Any] = {
            **(
                {"candidates": {name: s.record() for name, s in self.sets.items()}}
                if self.records_sets
                else {}
            ),
            "span_scoring": self.scoring,
            "normalize": self.normalize,
            **token_scores_key(self.tokens),
            "span_work": span_work(models),
            "ties": record(),
        }
        return Finished(rows, extra, self._files(), added, self.options_record())

    def _files(self) -> dict[str, str | bytes]:
        """The spans ranked, one a line: candidates.txt (one set, or the same spans under every
        name), else candidates-<name>.txt per set (`named`, the probe's own sets: always)."""
        if self.files == "none":
            return {}
        named = self.files == "named" and self.file is None
        if not named and len({s.text for s in self.sets.values()}) == 1:
            return {"candidates.txt": next(iter(self.sets.values())).text}
        return {f"candidates-{n.replace(' ', '_')}.txt": s.text for n, s in self.sets.items()}

    def among(self) -> str:
        return ", ".join(f"{len(s.spans):,} spans" for s in self.sets.values())

    def faster(self, sentences: bool, kinds: set[str | None]) -> list[str]:
        ways = []
        if self.scoring == "l2r" and kinds & {"masked", None}:
            ways.append(
                f"{option('--span-scoring')} independent (a masked LM: one pass per span, not "
                "one per token)"
            )
        if self.normalize == "pmi":
            ways.append(
                f"{option('--normalize')} sum (pmi scores every span again without the properties)"
            )
        if "candidates" in self.takes:
            ways.append(
                f"{option('--candidates')} FILE (fewer candidates: the time goes with them)"
            )
        return ways


def masked_ran(manifest: Mapping[str, Any]) -> bool:
    """Whether a masked LM scored in the run: span scoring (`l2r`, `independent`) is a masked
    LM's option, said only where one ran."""
    return any(record.get("kind") == "masked" for record in manifest.get("models", []))


def span_scoring_said(manifest: Mapping[str, Any]) -> str:
    """`scored l2r, normalised sum`; `normalised sum` where no masked LM ran (a decoder-only
    model scores the whole sentence, whatever `--span-scoring` says)."""
    scored = f"scored {manifest.get('span_scoring')}, " if masked_ran(manifest) else ""
    return f"{scored}normalised {manifest.get('normalize')}"


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


def span_cost(
    key: str, spans: Callable[[pd.DataFrame], Any]
) -> Callable[[pd.DataFrame], pd.Series]:
    """A Work's cost: each distinct prompt text of a key costs a sentence per candidate in its
    blank (`spans`: rows -> how many candidates each row's blank takes)."""

    def cost(rows: pd.DataFrame) -> pd.Series:
        texts = rows.drop_duplicates([key, "prompt"])
        return texts.assign(_n=spans(texts)).groupby(key, sort=False)["_n"].sum()

    return cost


def unreadable_spans(spans: Sequence[str], models: Sequence[RunModel]) -> dict[str, str]:
    """The spans some model's tokenizer does not read whole (an unknown token, a character
    dropped: tacit.vocab.shared span_problems), each with which tokenizer and why. Such a span
    would be scored as something else: a FILE's is refused, a span the norms gave is left out
    and counted."""
    from tacit.vocab.shared import span_problems

    problems: dict[str, str] = {}
    for model in models:
        if model.tokenizer is None:  # a family that plans without one: nothing to check here
            continue
        for span, why in span_problems(model.tokenizer, spans).items():
            problems.setdefault(span, f"not read whole by {model.name}'s tokenizer ({why})")
    return problems


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
        regular_file(path, missing_ok=True)
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
