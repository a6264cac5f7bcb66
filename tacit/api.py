"""The Python API: one function per probe (tacit.retrieve, tacit.elicit, ...), each made at
import from the probe's declaration (tacit.probe_api), each a call of `run_probe`. Type
checkers and IDEs read their signatures from tacit/api.pyi (written by tacit.api_stub).

A model is a hub name, a local directory or a GGUF file, with its own loading options if any
(`"EleutherAI/pythia-160m,revision=step1000"`, or a tacit.ModelSpec: tacit.core.modelspec), or a
Scorer already in memory (`tacit.MaskedLMScorer.from_model(model, tokenizer)`, a model being
trained).
"""

from __future__ import annotations

from tacit.probe_api import MODELS_HELP, Models, probe_function, run_probe
from tacit.probes import registry

__all__ = ["MODELS_HELP", "Models", "probe_function", "run_probe", *registry.builtin()]

# one function per tacit probe, so a new probe needs no line here
for _name in registry.builtin():
    globals()[_name] = probe_function(_name)
