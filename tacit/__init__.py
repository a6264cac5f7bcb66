"""tacit: probe language models for the tacit assumptions people hold about concepts.

Importing tacit is cheap: the names below are loaded on first use (PEP 562), so `import tacit`
and `probe --help` load neither torch nor transformers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it
_EXPORTS = {
    "retrieve": "tacit.api",
    "elicit": "tacit.api",
    "prince": "tacit.api",
    "RetrievalResult": "tacit.api",
    "nli": "tacit.api_nli",
    "pragmeval": "tacit.api_pragmeval",
    "ProbeResult": "tacit.results.result",
    "RunOptions": "tacit.core.options",
    "ClozeSetup": "tacit.probes.nli",
    "TacitError": "tacit.core.errors",
    "NormSet": "tacit.norms",
    "feature_to_phrase": "tacit.norms",
    "install_norms": "tacit.norms",
    "load_norms": "tacit.norms",
    "read_norms": "tacit.norms",
    "MASK": "tacit.models.base",
    "Scorer": "tacit.models.base",
    "MaskedLMScorer": "tacit.models.masked",
    "NLIClassifier": "tacit.models.classifier",
    "load_scorer": "tacit.models",
    "Vocabulary": "tacit.vocab",
    "build_vocabulary": "tacit.vocab",
    "vocabulary_for": "tacit.vocab",
    "plot": "tacit.results.plots",
    "list_runs": "tacit.results.runs",
    "run_sweep": "tacit.sweep",
    "leaderboard": "tacit.sweep",
}

if TYPE_CHECKING:
    from tacit.api import RetrievalResult, elicit, prince, retrieve
    from tacit.api_nli import nli
    from tacit.api_pragmeval import pragmeval
    from tacit.core.errors import TacitError
    from tacit.core.options import RunOptions
    from tacit.models import load_scorer
    from tacit.models.base import MASK, Scorer
    from tacit.models.classifier import NLIClassifier
    from tacit.models.masked import MaskedLMScorer
    from tacit.norms import NormSet, feature_to_phrase, install_norms, load_norms, read_norms
    from tacit.probes.nli import ClozeSetup
    from tacit.results.plots import plot
    from tacit.results.result import ProbeResult
    from tacit.results.runs import list_runs
    from tacit.sweep import leaderboard, run_sweep
    from tacit.vocab import Vocabulary, build_vocabulary, vocabulary_for

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tacit")
        except PackageNotFoundError:  # running from a source tree that was not installed
            return "0.0.0"
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tacit' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
