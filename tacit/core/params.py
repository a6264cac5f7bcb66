"""Options declared once: each probe declares its options as one typed dataclass (Options),
each field a Param, and the Python API's signature and docstring, the command line, sweep files
and their validation all read that declaration (as scikit-learn's `validate_params` declares
each choice once); the probe gets its options back as an instance of that dataclass, typed.

A Param knows its API keyword, its command-line flag(s), its kind and choices, and how to check
a value; an error names the option as the caller wrote it: the keyword in the API
(`max_props 0: ...`), the flag on the command line (`--max-props 0: ...`), the table and key
in a sweep file (`grid.toml: [retrieve] max_props 0: ...`). Nothing heavy is imported here.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from tacit.core.choices import check_choice, check_choices
from tacit.core.errors import TacitError, shorten

Context = Literal["api", "cli", "sweep"]
KINDS = ("int", "float", "str", "bool", "path", "list", "any")


@dataclass(frozen=True)
class Switch:
    """A command-line flag that sets an option to one value (`--no-prefix`: prefix=False)."""

    flag: str
    value: Any
    help: str


@dataclass(frozen=True)
class Param:
    """One option of a probe.

    Attributes:
        name: the API keyword and the sweep key (`max_props`).
        default: the value when not given; None means "not given" (then `shown_default` says
            what that amounts to, for the help).
        help: one or two sentences for `--help` and the docs.
        kind: `int`, `float`, `str`, `bool`, `path`, `list` (of text values) or `any` (checked
            by `check` alone).
        choices: the values allowed (each item's, for a list).
        minimum: the smallest number allowed.
        flags: the command-line names (default `--` + name with dashes).
        parse: how the command line's text becomes the value (`bear,cat` -> a list).
        switches: command-line flags that each set the option to one value, instead of a flag
            that takes a value.
        check: a further check, (value, label) -> the value to use.
        cli: whether the command line offers it.
        positional: the command line takes it as an argument (`probe items FILE`), not a
            flag; errors name it in capitals (`FILE`: the name in upper case).
        leading: the Python API takes it before the models, positionally
            (`tacit.nli("nope", "path/to/nope", models)`), where the probe cannot run without it.
        group: a run option that a probe may do without (tacit.core.options.RUN_OPTION_GROUPS):
            the group's name.
        recorded: how a run option is recorded in the manifest (RunOptions.recorded): `always`,
            `set` (where it differs from its default), `with OPTION` (where that option is
            set), or None (not at all: it changes no result).
    """

    name: str
    default: Any
    help: str
    kind: str = "str"
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    flags: tuple[str, ...] = ()
    shown_default: str | None = None
    parse: Callable[[str], Any] | None = None
    switches: tuple[Switch, ...] = ()
    check: Callable[[Any, str], Any] | None = None
    cli: bool = True
    positional: bool = False
    leading: bool = False
    group: str | None = None
    recorded: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is none of {KINDS}")

    def field(self) -> Any:
        """This option as a field of its probe's Options dataclass (`max_props: int =
        MAX_PROPS.field()`): the default, and the declaration kept with it."""
        if isinstance(self.default, dict):  # a mutable default: each instance its own copy
            default = self.default
            return dataclasses.field(
                default_factory=lambda: dict(default), metadata={"param": self}
            )
        return dataclasses.field(default=self.default, metadata={"param": self})

    @property
    def flag(self) -> str:
        """The option's command-line name."""
        return self.flags[0] if self.flags else "--" + self.name.replace("_", "-")

    def label(self, context: Context) -> str:
        """How an error names the option: as the caller wrote it."""
        if context == "cli" and self.positional:
            return self.name.upper()
        if context == "cli":
            return self.flag if not self.switches else "/".join(s.flag for s in self.switches)
        return self.name

    def validate(self, value: Any, context: Context = "api", where: str = "") -> Any:
        """The value to use, or a one-line error naming the option (`where` goes before it:
        a sweep file and table)."""
        label = where + self.label(context)
        if value is None:
            if self.default is None:
                return None
            raise TacitError(f"{label}: needs a value")
        value = self._typed(value, label)
        if self.choices is not None:
            if self.kind == "list":
                value = check_choices(label, list(value), self.choices)
            else:
                value = check_choice(label, value, self.choices)
        if self.minimum is not None and value < self.minimum:
            raise TacitError(f"{label} {value}: must be at least {self.minimum:g}")
        return self.check(value, label) if self.check is not None else value

    def _typed(self, value: Any, label: str) -> Any:
        """The value if it is of the option's kind (a list: as a list), else a one-line error."""
        expected = {
            "int": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
            "float": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
            "str": ("text", lambda v: isinstance(v, str)),
            "bool": ("true or false", lambda v: isinstance(v, bool)),
            "path": ("a path", lambda v: isinstance(v, str | os.PathLike)),
            "list": ("a list", lambda v: isinstance(v, list | tuple)),
        }
        if self.kind in expected:
            what, ok = expected[self.kind]
            if self.choices is not None and self.kind != "list" and value in self.choices:
                return value  # a choice of another type (prefix: True, False or "both")
            if not ok(value):
                raise TacitError(f"{label} {shorten(repr(value))}: expected {what}")
        if self.kind == "list":
            if not value and self.default is None:  # given, but empty
                raise TacitError(f"{label}: give at least one value")
            return list(value)
        return value


def validate(
    params: Sequence[Param],
    given: Mapping[str, Any],
    *,
    context: Context = "api",
    where: str = "",
    owner: str = "",
) -> dict[str, Any]:
    """Every option's value (the default where not given), each checked; an option that is
    not one of `params` is a one-line error naming it and the options there are."""
    known = {param.name: param for param in params}
    unknown = [name for name in given if name not in known]
    if unknown:
        names = ", ".join(known)
        raise TacitError(
            f"{where}{unknown[0]!r} is not an option of {owner or 'this probe'} "
            f"(its options: {names})"
        )
    return {
        name: param.validate(given.get(name, param.default), context, where)
        for name, param in known.items()
    }


OptionsT = TypeVar("OptionsT", bound="Options")


@dataclass(frozen=True)
class Options:
    """A probe's options, one field each (`name: type = PARAM.field()`): subclasses are frozen
    dataclasses. `params()` is the declaration the API, the command line and sweep files read;
    an instance is what the probe gets, every value checked (`validate`)."""

    _params: ClassVar[tuple[Param, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._params = ()  # read from the fields once the dataclass decorator has made them

    @classmethod
    def params(cls) -> tuple[Param, ...]:
        """Each field's Param, in field order (a field named unlike its Param is a bug)."""
        if not cls._params:
            found = []
            for field in dataclasses.fields(cls):
                param = field.metadata.get("param")
                if param is None or param.name != field.name:
                    raise TypeError(f"{cls.__name__}.{field.name}: declare it with PARAM.field()")
                found.append(param)
            cls._params = tuple(found)
        return cls._params

    @classmethod
    def annotations(cls) -> dict[str, Any]:
        """Each option's type, as written in the declaration (for the API's signature)."""
        return {field.name: field.type for field in dataclasses.fields(cls)}

    @classmethod
    def validate(
        cls: type[OptionsT],
        given: Mapping[str, Any],
        *,
        context: Context = "api",
        where: str = "",
        owner: str = "",
    ) -> OptionsT:
        """The options given, each checked as declared (the default where not given)."""
        return cls(**validate(cls.params(), given, context=context, where=where, owner=owner))

    def given(self) -> dict[str, Any]:
        """Every option's value, by name (what a sweep cell or a rerun passes back)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
