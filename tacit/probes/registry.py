"""Every probe by name: with each probe's own package, the one place that names a probe.

Adding a probe is its package under tacit/probes/ (a Probe subclass: tacit.probes.base), one
line here, a docs page and its tests (docs/extending.md): the line gives it its command
(tacit.cli.probe_command) and its function (tacit.api). A probe's module is imported when it is
first asked for; its declaration imports nothing heavy, so `probe --help` lists every probe
without loading torch.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from tacit.core.errors import TacitError
from tacit.core.registry import Registry

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Probe

PROBES: Registry[type[Probe]] = Registry(
    "probe",
    {
        "retrieve": "tacit.probes.retrieve.probe:RetrieveProbe",
        "elicit": "tacit.probes.elicit.probe:ElicitProbe",
        "prince": "tacit.probes.prince.probe:PrinceProbe",
        "nli": "tacit.probes.nli.probe:NLIProbe",
        "pragmeval": "tacit.probes.pragmeval.probe:PragmevalProbe",
        "items": "tacit.probes.items.probe:ItemsProbe",
        "surprisal": "tacit.probes.surprisal.probe:SurprisalProbe",
        "structure": "tacit.probes.structure.probe:StructureProbe",
    },
)


def names() -> tuple[str, ...]:
    return PROBES.names()


def builtin() -> tuple[str, ...]:
    """tacit's own probes (the command line lists these)."""
    return PROBES.builtin()


# a probe named like a subpackage of tacit keeps the package its name: `tacit.structure` is
# the analyses (import tacit.structure), the probe's function is tacit.concept_structure (and
# tacit.api.structure, as every probe's is tacit.api.NAME)
TOP_NAMES = {"structure": "concept_structure"}


def top_name(name: str) -> str:
    """The name a probe's function has at the top of the package (tacit.NAME)."""
    return TOP_NAMES.get(name, name)


def register(probe: type[Probe]) -> type[Probe]:
    """Add a probe of your own (a Probe subclass, from any module) under its `name`, so that
    `tacit.api.run_probe(name, ...)`, results, reports, tables and the leaderboard know it.
    Usable as a class decorator. The command line lists tacit's own probes only."""
    PROBES.register(probe.name, probe)
    return probe


def get(name: str) -> Probe:
    """The probe of that name (one-line error for an unknown one)."""
    return _instance(PROBES.get(name))


@cache
def _instance(probe: type[Probe]) -> Probe:
    """Probes are stateless: one instance of each serves every run."""
    return probe()


def of_run(manifest: Manifest, where: object = "") -> Probe:
    """The probe that wrote a run (its manifest's `probe`), as that run reports
    (Probe.as_run)."""
    name = manifest.get("probe") if isinstance(manifest, dict) else None
    if not isinstance(name, str) or name not in PROBES:
        raise TacitError(f"{where}: not a run of any probe tacit knows (probe {name!r})")
    return get(name).as_run(manifest)
