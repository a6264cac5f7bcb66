"""Model families: the ways tacit runs a model, each behind the plain contract of
tacit.models.base, found by the model's text before anything is loaded.

A family claims a model spec by what its text shows (a `base_url`, a file suffix, a scheme),
says which Scorer class it would load as (so a probe's needs are checked first), brings the
tokenizer the probes plan with and its loading options, and loads the scorer. Families
registered at run time are asked first, then tacit's own; the in-process Hugging Face family
claims every model the others leave. docs/extending.md has a worked example.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.core.errors import TacitError
from tacit.core.manifest import ModelRecord
from tacit.core.modelspec import LOAD_OPTIONS, LoadOption, ModelSpec
from tacit.core.option_names import option
from tacit.core.registry import Registry

# loading options every family takes, read before the family sees the model (its name)
EVERY_FAMILY = ("label",)

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.models.base import Needs, Scorer


class Family(ABC):
    """A way of running models (see the module docstring). Stateless: one instance serves
    every model it claims."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line: what it runs, for docs and errors
    # the loading options (NAME,KEY=VALUE) it takes, each declared (what it does, how its value
    # reads): tacit's own it takes (tacit.core.modelspec.LOAD_OPTIONS) and any of its own
    options: ClassVar[Mapping[str, LoadOption]] = {}
    # what it records of a model it ran, beyond the engine's keys: a TypedDict extending
    # ModelRecord (its Scorer.record's)
    record_keys: ClassVar[type[ModelRecord]] = ModelRecord

    @abstractmethod
    def claims(self, spec: ModelSpec) -> bool:
        """Is this model one of this family's (from its text alone: nothing is loaded)?"""

    @abstractmethod
    def scorer_class(self, spec: ModelSpec, needs: Needs | None = None) -> type[Scorer]:
        """The Scorer class the model would load as (its capabilities), before any weights
        load: a one-line error where the model is none this family can run. Where the model
        could load as several (a checkpoint that does not say its kind), the one that meets
        the probe's `needs`."""

    @abstractmethod
    def tokenizer(self, spec: ModelSpec, flag: str = "--model") -> Any:
        """The tokenizer the probes plan with (encode, decode, the vocabulary), as the scorer
        will use it; None for a family that plans without one (its spans are not checked for
        being read whole, and it cannot take part in a shared vocabulary). `flag`: the option
        that named the model (`--model`, `--vocab-model`), as its errors say."""

    @abstractmethod
    def load(self, text: str, options: RunOptions, scorer: type[Scorer], **extra: Any) -> Scorer:
        """The model loaded as `scorer` (what scorer_class said), as the run's options say
        (`text`: as given, its name in tables); `extra`: the tokenizer already loaded, and the
        probe's loading options for the scorer class (e.g. a classifier's label names)."""

    def takes(self, key: str) -> bool:
        """Does this family take the loading option `key` (the run's options for every model
        fill in only those a family takes)? Every family takes `label`: how tables name it."""
        return key in self.options or key in EVERY_FAMILY

    def check_options(self, spec: ModelSpec) -> None:
        """Refuse, in one line, a loading option this family does not take (a typo, or an
        option of another family)."""
        for key in spec.given():
            if not self.takes(key):
                raise TacitError(
                    f"{option('--model')} {spec.public}: {key!r} is not a loading option of "
                    f"{self.description} (its options: {', '.join(self.options)})"
                )

    def check_needs(self, spec: ModelSpec, needs: Needs) -> None:
        """Refuse, in one line, loading options that mean nothing for what a probe `needs`
        (before anything loads); by default none."""
        return None


FAMILIES: Registry[Family] = Registry(
    "model family",
    {
        "recorded": "tacit.models.recorded:FAMILY",  # a model with recorded=: a file answers
        "openai": "tacit.models.server:FAMILY",  # a model with a base_url: a server scores it
        "huggingface": "tacit.models.huggingface:FAMILY",  # every other model
    },
)


def options_of(name: str) -> Mapping[str, LoadOption]:
    """The loading options family `name` declares (Family.options): a family's module is its
    declaration, light (its scorers load when a model does)."""
    return FAMILIES.get(name).options


def loading_options() -> list[str]:
    """Every loading option a model's text may give, as the families declare them: tacit's
    own (LOAD_OPTIONS, which the in-process family takes), then every other family's, read
    from the registry (the server's settings, families registered at run time). The in-process
    family is not imported for this: it brings torch."""
    names = list(LOAD_OPTIONS)
    for name in FAMILIES.names():
        names += list(options_of(name))
    return list(dict.fromkeys(names))


def model_help(plural: bool = False) -> str:
    """What a model is and the loading options it takes, as `--model`'s help (and, `plural`,
    the API's `models`) say it: one text, the options listed from their declarations."""
    kinds = (
        "hub names, local directories or GGUF files, each"
        if plural
        else ("a Hugging Face hub name, a local directory or a GGUF file,")
    )
    return (
        f"{kinds} with its own loading options if any: NAME,KEY=VALUE,... (KEY: "
        f"{', '.join(loading_options())}; any other `from_pretrained` keyword is passed on: "
        "docs/models.md)"
    )


def register_family(family: Family) -> Family:
    """Add a family of your own (a Family instance) under its `name`: it is asked before
    tacit's own, so it can claim models by a scheme or option of its own."""
    return FAMILIES.register(family.name, family)


def _in_order() -> list[Family]:
    builtin = FAMILIES.builtin()
    added = [name for name in FAMILIES.names() if name not in builtin]
    return [FAMILIES.get(name) for name in (*added, *builtin)]


def family_of(spec: ModelSpec) -> Family:
    """The family that claims this model, its loading options checked."""
    for family in _in_order():
        if family.claims(spec):
            family.check_options(spec)
            return family
    raise TacitError(f"{option('--model')} {spec.public}: no model family claims it")


def resolve(
    text: str, defaults: Mapping[str, Any], *, flag: str = "--model"
) -> tuple[Family, ModelSpec]:
    """A model's text read, the family that claims it, and its spec with the run's `defaults`
    (RunOptions.model_defaults) where it gives none, of the options that family takes."""
    given = ModelSpec.parse(text, flag=flag)
    family = family_of(given)
    spec = given.over({k: v for k, v in defaults.items() if family.takes(k)})
    family.check_options(spec)
    return family, spec


def model_tokenizer(text: str, defaults: Mapping[str, Any], *, flag: str = "--model") -> Any:
    """The tokenizer a model's text calls for (its options, `defaults` where it gives none),
    from the family that claims it; `flag`: the option that named it, as errors say."""
    family, spec = resolve(text, defaults, flag=flag)
    return family.tokenizer(spec, flag)
