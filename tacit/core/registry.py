"""One registry for everything tacit looks up by name: probes, norm formats, model families.

Each registry holds tacit's own entries as `"module:attribute"` texts, imported on first use
(so `probe --help` lists every probe without importing torch), and entries added at run time
(`register`), which come after tacit's own and may not take their names. Looking up an unknown
name is a one-line error that lists the names there are.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from tacit.core.errors import TacitError

T = TypeVar("T")


class Registry(Generic[T]):
    """Entries by name: tacit's own (`builtin`, imported lazily) and those added at run time.

    Examples:
        ```python
        >>> colours = Registry("colour", {"red": "colorsys:rgb_to_hsv"})
        >>> colours.names()
        ('red',)
        >>> colours.get("red").__name__
        'rgb_to_hsv'
        >>> colours.get("blue")
        Traceback (most recent call last):
        tacit.core.errors.TacitError: no colour named 'blue': expected one of red

        ```
    """

    def __init__(self, what: str, builtin: Mapping[str, str]) -> None:
        self.what = what
        self._builtin = dict(builtin)
        self._loaded: dict[str, T] = {}
        self._added: dict[str, T] = {}

    def names(self) -> tuple[str, ...]:
        """tacit's own names first, in their order, then those added."""
        return (*self._builtin, *self._added)

    def builtin(self) -> tuple[str, ...]:
        return tuple(self._builtin)

    def __contains__(self, name: object) -> bool:
        return name in self._builtin or name in self._added

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """The entry of that name (imported on first use); a one-line error for an unknown one."""
        if name in self._added:
            return self._added[name]
        if name not in self._builtin:
            raise TacitError(
                f"no {self.what} named {name!r}: expected one of {', '.join(self.names())}"
            )
        if name not in self._loaded:
            module, _, attribute = self._builtin[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return self._loaded[name]

    def register(self, name: str, entry: T) -> T:
        """Add an entry under `name` (not one of tacit's own: pick another name)."""
        if name in self._builtin:
            raise TacitError(f"{name!r} is the name of one of tacit's {self.what}s: pick another")
        self._added[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove an entry added at run time (tests, notebooks that redefine one)."""
        self._added.pop(name, None)
