"""One model of a run, its text read once (tacit.models.families.resolve): the family that
claims it and its spec, with the run's loading options where the text gives none, checked
before anything slow. Everything later asks it, never the text again: the device check, the
control beside it, what the probe needs of it (its family's scorer class says, before anything
loads), its tokenizer (read once: the probe plans with it, the scorer reuses it) and its
loading. A Scorer already in memory is a run's model too, used as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.core.modelspec import model_name
from tacit.core.option_names import option
from tacit.core.secrets import redact
from tacit.models.controls import control_of
from tacit.models.families import resolve

if TYPE_CHECKING:
    from tacit.core.modelspec import ModelSpec
    from tacit.core.options import RunOptions
    from tacit.models.base import Needs, Scorer
    from tacit.models.families import Family

_UNREAD = object()  # a tokenizer not asked for yet


class ResolvedModel:
    """A model's text read (or a Scorer already in memory), for the whole run: it implements
    what a probe plans with (tacit.models.base.RunModel)."""

    def __init__(self, model: str | Scorer, options: RunOptions) -> None:
        """`options`: the run's (their loading options fill in what the text does not give)."""
        self.options = options
        self.given: Scorer | None = None if isinstance(model, str) else model
        self.family: Family | None = None
        self.spec: ModelSpec | None = None
        if isinstance(model, str):
            self.text = model  # as given: what loads it (it may hold a secret, never shown)
            self.family, self.spec = resolve(model, options.model_defaults())
            # how tables, titles, the manifest and every message name it
            self.name = model_name(model, self.spec)
        else:
            self.text = self.name = model.name
        self.public = redact(self.text)  # its whole text as the manifest records it
        self._tokenizer: Any = _UNREAD
        # the class it loads as, by what was needed (the family reads the model's config)
        self._classes: dict[Needs | None, type[Scorer]] = {}

    def __repr__(self) -> str:
        return f"ResolvedModel({self.name!r})"

    @property
    def tokenizer(self) -> Any:
        """The tokenizer the probes plan with (None for a family that plans without one), read
        on first use and kept: the scorer, when it loads, reuses it."""
        if self._tokenizer is _UNREAD:
            if self.given is not None:
                self._tokenizer = self.given.tokenizer
            else:
                assert self.family is not None and self.spec is not None
                self._tokenizer = self.family.tokenizer(self.spec)
        return self._tokenizer

    def scorer_class(self, needs: Needs | None = None) -> Scorer | type[Scorer]:
        """What answers for the model: the scorer in memory, or the class it would load as
        (where the checkpoint could load as several, the one that meets `needs`), asked of
        the family once: the needs check before planning and the loading share it."""
        if self.given is not None:
            return self.given
        assert self.family is not None and self.spec is not None
        if needs not in self._classes:
            self._classes[needs] = self.family.scorer_class(self.spec, needs)
        return self._classes[needs]

    def check(self, needs: Needs, probe: str) -> None:
        """Refuse, in one line, a model that cannot answer what `probe` needs of it (before
        any tokenizer or weights load: tacit.models.base.Needs.check), or loading options
        that mean nothing for it (Family.check_needs)."""
        needs.check(self.name, self.scorer_class(needs), probe)
        if self.family is not None and self.spec is not None:
            self.family.check_needs(self.spec, needs)

    def control(self) -> ResolvedModel | None:
        """Its random-weight control (tacit.models.controls), seeded with the run's seed; None
        where it is a control already. A model that cannot have one (a server's, or one
        already in memory) is refused in one line naming it."""
        asked = f"{option('--control')} {self.options.control}"
        if self.family is None or self.spec is None:
            raise TacitError(
                f"{asked}: {self.name} is a model already in memory; give it by name or path "
                "(its config and tokenizer are read from there)"
            )
        if self.spec.random_weights is not None:
            return None
        if not self.family.takes("random_weights"):
            raise TacitError(
                f"{asked}: {self.name} is scored by {self.family.description}, which has no "
                "config to draw random weights for; run its control from a checkpoint instead"
            )
        return ResolvedModel(control_of(self.text, self.options.seed), self.options)

    def load(
        self,
        needs: Needs | None = None,
        probe: str = "this probe",
        load_options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Scorer:
        """The scorer, as the run's options say, if it can answer what `probe` `needs` (else
        a one-line error, before any weights load); a scorer in memory as it is.
        `load_options` gives, by capability, keyword arguments for the scorer classes that
        have it (a classifier's label names)."""
        scorer = self.scorer_class(needs)
        if needs is not None:
            needs.check(self.name, scorer, probe)
            if self.family is not None and self.spec is not None:
                self.family.check_needs(self.spec, needs)
        if self.given is not None:
            return self.given
        assert self.family is not None and self.spec is not None
        assert isinstance(scorer, type)
        extra: dict[str, Any] = {}
        for capability, keywords in (load_options or {}).items():
            if capability in scorer.capabilities:
                extra.update(keywords)
        if self._tokenizer is not _UNREAD and self._tokenizer is not None:
            extra["tokenizer"] = self._tokenizer
        loaded = self.family.load(self.text, self.options, scorer, **extra)
        loaded.name = self.name  # the text loads it; its name is what may be shown
        return loaded


def resolved_models(models: Sequence[str | Scorer], options: RunOptions) -> list[ResolvedModel]:
    """The run's models, before anything slow: each distinct model once (by name, the first
    kept), its text read once and checked, followed by its random-weight control where
    `--control` asks for one (tacit.models.controls; a control given beside its model is not
    run twice), every one able to load on the device asked."""
    if options.control is not None and not models:
        raise TacitError(
            f"{option('--control')} {options.control}: no {option('--model')} to run a control of"
        )
    chosen: dict[str, ResolvedModel] = {}
    for given in models:
        text = given if isinstance(given, str) else given.name
        if text in chosen:
            continue
        model = chosen[text] = ResolvedModel(given, options)
        control = model.control() if options.control is not None else None
        if control is not None:
            chosen.setdefault(control.text, control)
    named: dict[str, ResolvedModel] = {}
    for model in chosen.values():
        other = named.setdefault(model.name, model)
        if other is not model:
            raise TacitError(
                f"{option('--model')} {other.public} and {model.public} are both named "
                f"{model.name!r} (label=): give each model a label of its own"
            )
    check_device(list(chosen.values()), options)
    return list(chosen.values())


def judge_model(text: str, options: RunOptions, *, main: bool = True) -> Callable[[], Scorer]:
    """The judge of answers in words (`--judge`: tacit.ask.judge): its text read and checked
    now (one line if it cannot generate), loaded as the run's options say on the loader's
    first call, `--cache`'s cache attached and its answers kept in the run's checkpoint
    (`judge-answers.jsonl`, tacit.models.answered) for `--resume`; the same scorer on every
    later call. A dry run's judge has neither: it writes nothing, and the calibration times
    the judge's requests as the run would send them. `main`: whether this process keeps the
    run's checkpoint (in a data-parallel run, the main process alone: two processes appending
    to one journal would interleave their lines)."""
    from tacit.models.base import Needs

    needs = Needs.of("generate")
    try:
        model = ResolvedModel(text, options)
        needs.check(model.name, model.scorer_class(needs), option("--judge"))
    except TacitError as error:  # said of the judge, not of a --model
        raise TacitError(str(error).replace(option("--model"), option("--judge"), 1)) from None
    loaded: list[Scorer] = []

    def load() -> Scorer:
        if not loaded:
            from tacit.models.answered import SUFFIX

            checkpoint = options.checkpoint if main else None  # kept as they come: --resume
            journal = Path(checkpoint) / f"judge{SUFFIX}" if checkpoint is not None else None
            kept = (None, None) if options.dry_run else (options.cache, journal)
            loaded.append(keeping(model.load(needs, option("--judge")), *kept))
        return loaded[0]

    return load


def keeping(scorer: Scorer, cache: str | Path | None, journal: Path | None) -> Scorer:
    """The scorer with `--cache`'s cache and the run's journal of generation answers
    (`journal`, in its checkpoint) attached where given: nothing it answered is asked again."""
    if cache is not None:
        from tacit.models.score_cache import ScoreCache

        scorer.cache = ScoreCache(cache, scorer.record())
    if journal is not None and scorer.can("generate"):
        from tacit.models.answered import AnsweredRequests

        scorer.run_answers = AnsweredRequests(journal, scorer.record())
    return scorer


def check_device(models: Sequence[ResolvedModel], options: RunOptions) -> None:
    """Is the device asked for on this machine, and may every model load there (8- or 4-bit
    weights only on a GPU)?"""
    specs = [model.spec for model in models if model.spec is not None]
    if options.device not in ("auto", "cpu") or any(s.quantization for s in specs):
        from tacit.models.loading import check_quantization
        from tacit.models.runtime import resolve_device

        device = resolve_device(options.device)
        for spec in specs:
            check_quantization(spec, device)


def load_scorer(
    text: str,
    options: RunOptions,
    *,
    needs: Needs | None = None,
    probe: str = "this probe",
    load_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Scorer:
    """Load a model (its text: a name or path with its own loading options, if any) as the
    run's options say, by the family that claims it, if it can answer what the probe `needs`
    (ResolvedModel.load)."""
    return ResolvedModel(text, options).load(needs, probe, load_options)
