"""tacit: probe language models for the tacit assumptions people hold about concepts.

Importing tacit is cheap: the names below are loaded on first use (PEP 562), so `import tacit`
and `probe --help` load neither torch nor transformers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it
_EXPORTS = {
    "RetrievalResult": "tacit.results.result",
    "ProbeResult": "tacit.results.result",
    "RunOptions": "tacit.core.options",
    "ClozeSetup": "tacit.probes.nli.predict",
    "TacitError": "tacit.core.errors",
    "TemplateSet": "tacit.templates",
    "load_templates": "tacit.templates",
    "NormSet": "tacit.norms",
    "feature_to_phrase": "tacit.norms",
    "install_norms": "tacit.norms",
    "load_norms": "tacit.norms",
    "read_norms": "tacit.norms",
    "MASK": "tacit.core.blank",
    "Scorer": "tacit.models.base",
    "MaskedLMScorer": "tacit.models.masked",
    "CausalLMScorer": "tacit.models.causal",
    "FakeScorer": "tacit.models.fake",
    "run_probe": "tacit.api",
    "NLIClassifier": "tacit.models.classifier",
    "load_scorer": "tacit.models",
    "Vocabulary": "tacit.vocab",
    "build_vocabulary": "tacit.vocab",
    "vocabulary_for": "tacit.ask.vocabulary",
    "Needs": "tacit.models.base",
    "Family": "tacit.models.families",
    "register_family": "tacit.models.families",
    "plot": "tacit.results.plots",
    "list_runs": "tacit.results.runs",
    "load": "tacit.results.reading",
    "export": "tacit.results.export",
    "run_sweep": "tacit.sweep",
    "leaderboard": "tacit.results.leaderboard",
    "compare": "tacit.results.comparisons",
    "table": "tacit.results.tables",
    "ModelSpec": "tacit.core.modelspec",
    "ProbeCallback": "tacit.integrations.trainer",
    "convert_mlama": "tacit.probes.items.mlama",
    "mlama_items": "tacit.probes.items.mlama",
}

if TYPE_CHECKING:
    # the probe functions (tacit.retrieve, ...) as tacit/api.pyi types them
    from tacit.api import *  # noqa: F403
    from tacit.api import run_probe
    from tacit.api import structure as concept_structure  # registry.TOP_NAMES
    from tacit.ask.vocabulary import vocabulary_for
    from tacit.core.blank import MASK
    from tacit.core.errors import TacitError
    from tacit.core.modelspec import ModelSpec
    from tacit.core.options import RunOptions
    from tacit.integrations.trainer import ProbeCallback
    from tacit.models import load_scorer
    from tacit.models.base import Needs, Scorer
    from tacit.models.causal import CausalLMScorer
    from tacit.models.classifier import NLIClassifier
    from tacit.models.fake import FakeScorer
    from tacit.models.families import Family, register_family
    from tacit.models.masked import MaskedLMScorer
    from tacit.norms import NormSet, feature_to_phrase, install_norms, load_norms, read_norms
    from tacit.probes.items.mlama import convert_mlama, mlama_items
    from tacit.probes.nli.predict import ClozeSetup
    from tacit.results.comparisons import compare
    from tacit.results.export import export
    from tacit.results.leaderboard import leaderboard
    from tacit.results.plots import plot
    from tacit.results.reading import load
    from tacit.results.result import ProbeResult, RetrievalResult
    from tacit.results.runs import list_runs
    from tacit.results.tables import table
    from tacit.sweep import run_sweep
    from tacit.templates import TemplateSet, load_templates
    from tacit.vocab import Vocabulary, build_vocabulary


def _probes() -> tuple[str, ...]:
    """tacit's probes: each is a function of tacit.api (tacit.retrieve, tacit.elicit, ...),
    at the top under its name (tacit.probes.registry.top_name)."""
    from tacit.probes.registry import builtin, top_name

    return tuple(top_name(name) for name in builtin())


__all__ = sorted([*_EXPORTS, *_probes()])


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        from tacit.core.manifest import DISTRIBUTION

        try:
            return version(DISTRIBUTION)
        except PackageNotFoundError:  # running from a source tree that was not installed
            return "0.0.0"
    if name not in _EXPORTS and name not in _probes():
        raise AttributeError(f"module 'tacit' has no attribute {name!r}")
    from tacit.probes.registry import TOP_NAMES

    probe = {top: name for name, top in TOP_NAMES.items()}.get(name, name)
    value = getattr(importlib.import_module(_EXPORTS.get(name, "tacit.api")), probe)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    """The public names only (not the helpers this module itself imports)."""
    return sorted([*_EXPORTS, *_probes(), "__version__"])
