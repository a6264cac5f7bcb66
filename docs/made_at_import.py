"""griffe extension: the API reference reads tacit from its source (griffe's static analysis),
except the functions a module makes at import, which have no source to read.

The probe functions (`tacit.api.retrieve`, ...: one per registered probe, made in a loop) get
their signature and docstring from each probe's declaration when tacit.api is imported. So
this extension imports that one module (cheap: it loads neither torch nor numpy) and adds
griffe's inspection of each function made there, which the source does not show by name. Inspecting
the whole package instead (mkdocstrings' `force_inspection`) would import every module of tacit
and need its whole runtime (torch, transformers, numpy) to build the site.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import griffe

MODULES = ("tacit.api",)  # the modules whose functions are made at import


class MadeAtImport(griffe.Extension):
    """Add each function MODULES make at import, as inspected."""

    def on_module_members(self, *, mod: griffe.Module, agent: Any, **_: Any) -> None:
        if mod.path not in MODULES or isinstance(agent, griffe.Inspector):
            return
        try:
            inspected = griffe.inspect(
                mod.path,
                filepath=mod.filepath if isinstance(mod.filepath, Path) else None,
                import_paths=sys.path,
                docstring_parser=agent.docstring_parser,
                docstring_options=agent.docstring_options,
            )
        except ImportError as error:  # griffe would drop the module and say so only in debug
            raise RuntimeError(f"{__name__}: {error.__cause__ or error}") from error
        for name, made in inspected.members.items():
            if made.is_alias or not made.is_function or name.startswith("_"):
                continue  # imported names, the module's own helpers
            member = mod.members.get(name)
            if member is None or (member.is_attribute and not member.is_alias):
                mod.set_member(name, made)  # made at import, not written in the source
