"""Norm formats behind one contract, in a registry: each reader recognises its files and turns
one into a NormSet (concept, feature, feature type, pf, relation, phrase), its phrasing rules
with it. tacit's own are CSLB's norms.dat (tacit.norms.cslb), McRae's workbook or an export of
its sheet (tacit.norms.mcrae) and a generic table (tacit.norms.generic); a format of your own is
one NormFormat subclass and `register_norm_format` (docs/extending.md).

Formats are asked in turn, those registered at run time first: the first that recognises a
file reads it; `format=` (`--norms-format`) names one instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from tacit.core.choices import NORMS_FORMATS
from tacit.core.registry import Registry
from tacit.norms.tables import XLSX_MAGIC, file_start, read_lines, split_header

if TYPE_CHECKING:
    from tacit.norms.normset import NormSet


@dataclass(frozen=True)
class NormSource:
    """A norms file as the readers see it: its path, the column names given for it (a generic
    table's `columns=`), and, read once on demand, its first bytes, text lines and header."""

    path: Path
    columns: Mapping[str, str] | None = None

    @cached_property
    def is_workbook(self) -> bool:
        """An .xlsx workbook (a zip), not a text table."""
        return file_start(self.path).startswith(XLSX_MAGIC)

    @cached_property
    def lines(self) -> list[str]:
        """The text lines, header first (a one-line error for a file that is not UTF-8 text)."""
        return read_lines(self.path)

    @cached_property
    def header(self) -> tuple[str, list[str]]:
        """(delimiter, column names) of a text table's first line."""
        return split_header(self.lines[0])


class NormFormat(ABC):
    """A norms file format (see the module docstring). Stateless: one instance reads every file
    of its format."""

    name: ClassVar[str]
    # how a file shows it, for the error that lists the formats when none recognises a file
    description: ClassVar[str]
    # whether `columns=` (`--norms-columns`: its header names mapped to ours) applies
    takes_columns: ClassVar[bool] = False

    @abstractmethod
    def recognises(self, source: NormSource) -> bool:
        """Is this file one of this format's (from its first bytes or header)?"""

    @abstractmethod
    def read(self, source: NormSource) -> NormSet:
        """The file's NormSet, every row checked: a one-line error naming the file, the line
        (or sheet and row), the column and the problem for anything it cannot use."""


NORM_FORMATS: Registry[NormFormat] = Registry(
    "norms format", {name: f"tacit.norms.{name}:FORMAT" for name in NORMS_FORMATS}
)


def register_norm_format(norm_format: NormFormat) -> NormFormat:
    """Add a norms format of your own under its `name`: it is asked before tacit's own."""
    return NORM_FORMATS.register(norm_format.name, norm_format)


def in_order() -> list[NormFormat]:
    """Every format, those registered at run time first."""
    builtin = NORM_FORMATS.builtin()
    added = [name for name in NORM_FORMATS.names() if name not in builtin]
    return [NORM_FORMATS.get(name) for name in (*added, *builtin)]
