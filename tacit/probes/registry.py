"""Every probe by name: with each probe's own package, the one place that names a probe.

Adding a probe is its package under tacit/probes/ (a Probe subclass: tacit.probes.base), one
line here, a command-line module (tacit/cli/), a docs page and its tests
(docs/extending.md). A probe's module is imported when it is first asked for; its declaration
imports nothing heavy, so `probe --help` lists every probe without loading torch.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from tacit.core.errors import TacitError

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Probe

PROBES = {
    "retrieve": "tacit.probes.retrieve:RetrieveProbe",
    "elicit": "tacit.probes.elicit:ElicitProbe",
    "prince": "tacit.probes.prince:PrinceProbe",
    "nli": "tacit.probes.nli:NLIProbe",
    "pragmeval": "tacit.probes.pragmeval:PragmevalProbe",
    "items": "tacit.probes.items:ItemsProbe",
}


_ADDED: dict[str, Probe] = {}  # probes registered at run time (register)


def names() -> tuple[str, ...]:
    return (*PROBES, *_ADDED)


def register(probe: type[Probe]) -> type[Probe]:
    """Add a probe of your own (a Probe subclass, from any module) under its `name`, so that
    `tacit.api.run_probe(name, ...)`, results, reports, tables and the leaderboard know it.
    Usable as a class decorator. The command line lists tacit's own probes only."""
    if probe.name in PROBES:
        raise TacitError(f"{probe.name!r} is the name of one of tacit's probes: pick another")
    _ADDED[probe.name] = probe()
    return probe


def get(name: str) -> Probe:
    """The probe of that name (one-line error for an unknown one)."""
    if name in _ADDED:
        return _ADDED[name]
    if name not in PROBES:
        raise TacitError(f"no probe named {name!r}: expected one of {', '.join(names())}")
    return _builtin(name)


@cache
def _builtin(name: str) -> Probe:
    module, _, cls = PROBES[name].partition(":")
    probe: Probe = getattr(importlib.import_module(module), cls)()
    return probe


def of_run(manifest: Manifest, where: object = "") -> Probe:
    """The probe that wrote a run (its manifest's `probe`)."""
    name = manifest.get("probe") if isinstance(manifest, dict) else None
    if name not in names():
        raise TacitError(f"{where}: not a run of any probe tacit knows (probe {name!r})")
    return get(name)
