"""Models behind one plain scorer contract (tacit.models.base.Scorer), run by families
(tacit.models.families): in-process Hugging Face models (tacit.models.huggingface: masked,
causal and NLI classifiers, from a hub id, a local directory or a GGUF file), and any family
registered at run time. A family claims a model by its text before anything loads; probes ask
for capabilities (tacit.models.base.Needs), never for a family or a kind.
"""

from __future__ import annotations

from tacit.models.families import FAMILIES, Family, register_family
from tacit.models.resolved import load_scorer

__all__ = ["FAMILIES", "Family", "load_scorer", "register_family"]
