"""The items probe's options, declared once (tacit.core.params)."""

from __future__ import annotations

from tacit.core.params import Param
from tacit.probes.inputs import SPAN_PARAMS

ITEMS = Param(
    "items",
    None,
    kind="path",
    positional=True,
    help="The items file: JSON lines or CSV, one cloze item a line (text with one [Y], its "
    "candidates, the answer or answers, optional group and id).",
)
K = Param(
    "k",
    5,
    kind="int",
    minimum=1,
    help="Report P@k: the share of items with an answer among the k best candidates.",
)
PARAMS = (ITEMS, K, *SPAN_PARAMS)
