"""The blank every prompt carries: a literal `<mask>` that each model family reads its own way
(a masked LM's mask token, a causal LM's text before it). Prompt builders need only this
string, so it lives where importing it loads nothing else."""

from __future__ import annotations

MASK = "<mask>"
