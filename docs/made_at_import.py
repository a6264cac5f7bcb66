"""griffe extension: the API reference reads tacit from its source (griffe's static analysis),
except the functions a module makes at import, which have no source to read.

The probe functions (`tacit.api.retrieve = probe_function("retrieve")`, ...) get their
signature and docstring from each probe's declaration when tacit.api is imported. So this
extension imports that one module (cheap: it loads neither torch nor numpy) and puts griffe's
inspection of each function made there in place of the assignment the source shows. Inspecting
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
    """Put the inspected function in place of each assignment in MODULES that made one."""

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
        for name, member in list(mod.members.items()):
            made = inspected.members.get(name)
            if made is None or member.is_alias or made.is_alias:  # imported names
                continue
            if member.is_attribute and made.is_function:
                mod.set_member(name, made)
