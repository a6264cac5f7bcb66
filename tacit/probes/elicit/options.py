"""Elicitation's options, declared once (tacit.core.params)."""

from __future__ import annotations

from tacit.core.params import Param, Switch
from tacit.probes.inputs import NORMS_PARAMS, SPAN_PARAMS
from tacit.probes.templates import TEMPLATES

RELATIONS_PARAM = Param(
    "relations",
    None,
    kind="list",
    flags=("--relation", "-r"),
    shown_default="every relation of the templates",
    help="Relation to ask about: one of the templates' (the paper's: is, is a, has, has a, "
    "made of). Repeatable.",
)
PREFIX = Param(
    "prefix",
    True,
    kind="bool",
    choices=(True, False, "both"),
    help="'Everyone knows that' before each prompt (a template's optional prefix, `{...}`): "
    "True, False, or `both` (the paper's Table 2 ablation in one run).",
    switches=(
        Switch("--no-prefix", False, "Drop 'Everyone knows that' (Table 2's ablation)."),
        Switch(
            "--prefix-ablation", "both", "Run with and without the prefix and print the changes."
        ),
    ),
)
CANDIDATE_SETS = ("vocab", "answers")  # what --candidates names besides a FILE
CANDIDATES = Param(
    "candidates",
    "vocab",
    kind="path",
    help="What answers are ranked among: `vocab` (the paper's: one-word answers among the "
    "shared vocabulary), `answers` (every answer people gave to the relation, of any length: "
    "'fur', 'four legs') or a FILE of spans, one a line.",
)
PARAMS = (RELATIONS_PARAM, PREFIX, *NORMS_PARAMS, CANDIDATES, *SPAN_PARAMS, TEMPLATES)
