"""The choices of options that several layers share, declared once, and the checks every
option goes through. Nothing heavy is imported here: the command line reads its choices from
here (and from each probe's declaration, tacit.core.params) to print `probe --help` without
loading torch or pandas. A wrong value gets the same one-line error from the API, the command
line and sweeps.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Literal, TypeVar, get_args

from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option

Dtype = Literal["float32", "float16", "bfloat16"]
Relation = Literal["is", "is a", "has", "has a", "made of"]
Suite = Literal["imppres", "nope", "impli"]
Pooling = Literal["mask", "mean", "last"]
SpanScoring = Literal["l2r", "independent"]
Normalize = Literal["sum", "mean", "pmi"]
VocabWords = Literal["all", "alpha", "lower"]
# a masked LM's pseudo-log-likelihood of each token (minicons' names): `original` (Salazar et al.
# 2020), `within_word_l2r` (Kauf & Ivanova 2023)
PllMetric = Literal["original", "within_word_l2r"]

DTYPES: tuple[Dtype, ...] = get_args(Dtype)
LoadDtype = Literal[Dtype, "auto"]  # `auto`: the checkpoint's own precision
LOAD_DTYPES: tuple[str, ...] = (*DTYPES, "auto")
# the relations of elicitation, as tacit.norms phrases features into them
RELATIONS: tuple[Relation, ...] = get_args(Relation)
# the pragmatics suites (tacit.pragmatics) by name
SUITES: tuple[Suite, ...] = get_args(Suite)
# tacit's own norms formats, each a module tacit.norms.NAME (the registry, tacit.norms.formats,
# is made from this list; formats registered at run time join it there)
NORMS_FORMATS = ("cslb", "mcrae", "generic")
POOLINGS: tuple[Pooling, ...] = get_args(Pooling)
SPAN_SCORINGS: tuple[SpanScoring, ...] = get_args(SpanScoring)
NORMALIZATIONS: tuple[Normalize, ...] = get_args(Normalize)
VOCAB_WORDS: tuple[VocabWords, ...] = get_args(VocabWords)
PLL_METRICS: tuple[PllMetric, ...] = get_args(PllMetric)
# how `--limit N` picks its N concepts or items: a seeded random sample, or the first N
LimitBy = Literal["random", "first"]
LIMIT_BY: tuple[LimitBy, ...] = get_args(LimitBy)

TRACKERS = ("wandb", "mlflow")  # --log-to: experiment trackers (tacit.results.tracking)
# --control: a model run beside each model, to read its numbers against (tacit.models.controls)
Control = Literal["random-weights"]
CONTROLS: tuple[Control, ...] = get_args(Control)

T = TypeVar("T")


def check_choice(option: str, value: object, choices: Collection[T]) -> T:
    """`value` (typed as one of `choices`) if it is one of them, else a one-line error naming
    the option and the choices.

    Examples:
        >>> check_choice("--dtype", "bfloat16", DTYPES)
        'bfloat16'
    """
    if value not in choices:
        raise TacitError(
            f"{option} {shorten(repr(value))}: expected one of {', '.join(map(str, choices))}"
        )
    return value  # type: ignore[return-value]


def meant(value: object, names: Collection[str]) -> str:
    """`; did you mean NAME?` for a value that is nearly one of `names` (a name mistyped as a
    file that does not exist: `--candidates concept`), else nothing.

    Examples:
        >>> meant("concept", ["vocab", "concepts"]), meant("my.txt", ["vocab", "concepts"])
        ('; did you mean concepts?', '')
    """
    close = closest(value, names)
    return f"; did you mean {close}?" if close else ""


def closest(value: object, names: Collection[str]) -> str | None:
    """The one of `names` that `value` nearly is (a typo of it), or None."""
    import difflib

    close = difflib.get_close_matches(str(value), list(names), n=1, cutoff=0.75)
    return close[0] if close else None


def check_choices(option: str, values: Sequence[object], choices: Collection[T]) -> list[T]:
    """Several values of a repeatable option, each checked, duplicates dropped, order kept; at
    least one."""
    if not values:
        raise TacitError(f"{option}: give at least one of {', '.join(map(str, choices))}")
    return [check_choice(option, value, choices) for value in dict.fromkeys(values)]


def check_device(device: str) -> str:
    """A --device value tacit knows (whether the machine has it is checked when a model loads,
    tacit.models.runtime.resolve_device)."""
    if device not in ("auto", "cpu", "cuda", "mps") and not re.fullmatch(r"cuda:\d+", device):
        raise TacitError(
            f"{option('--device')} {device!r}: expected auto, cpu, cuda, cuda:N or mps"
        )
    return device


def check_at_least(option: str, value: int | None, minimum: int) -> None:
    """A number option that must be at least `minimum` (None: not given)."""
    if value is not None and value < minimum:
        raise TacitError(f"{option} {value}: must be at least {minimum}")
