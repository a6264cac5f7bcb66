"""Elicitation's options, declared once (tacit.core.params)."""

from __future__ import annotations

from tacit.core.choices import RELATIONS
from tacit.core.params import Param, Switch
from tacit.probes.inputs import NORMS_PARAMS, SPAN_PARAMS

RELATIONS_PARAM = Param(
    "relations", RELATIONS, kind="list", choices=RELATIONS, flags=("--relation", "-r"),
    help="Relation to ask about. Repeatable; default all five.",
)  # fmt: skip
PREFIX = Param(
    "prefix", True, kind="bool", choices=(True, False, "both"),
    help="'Everyone knows that' before each prompt: True, False, or `both` (the paper's "
    "Table 2 ablation in one run).",
    switches=(
        Switch("--no-prefix", False, "Drop 'Everyone knows that' (Table 2's ablation)."),
        Switch("--prefix-ablation", "both",
               "Run with and without the prefix and print the changes."),
    ),
)  # fmt: skip
CANDIDATES = Param(
    "candidates", "vocab", kind="path",
    help="What answers are ranked among: `vocab` (the paper's: one-word answers among the "
    "shared vocabulary), `answers` (every answer people gave to the relation, of any length: "
    "'fur', 'four legs') or a FILE of spans, one a line.",
)  # fmt: skip
PARAMS = (RELATIONS_PARAM, PREFIX, *NORMS_PARAMS, CANDIDATES, *SPAN_PARAMS)
