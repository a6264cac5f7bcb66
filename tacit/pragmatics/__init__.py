"""Pragmatic inference suites (IMPPRES, NOPE, IMPLI): loaders that keep each paper's breakdown
fields, and reports in each paper's own breakdowns. Predictions come from tacit.probes.nli."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from tacit.core.choices import SUITES as SUITE_NAMES


class Suite(NamedTuple):
    """A suite: how to load its files and how its paper breaks results down."""

    load: Callable[[str | Path], pd.DataFrame]
    summarize: Callable[[pd.DataFrame], list[dict[str, Any]]]


def _suite(name: str) -> Suite:
    """The suite whose module is tacit.pragmatics.NAME (its `load` and `summarize`)."""
    module = importlib.import_module(f"tacit.pragmatics.{name}")
    return Suite(module.load, module.summarize)


# every suite by name, one per name of the `--suite` choices (tacit.core.choices.SUITES)
SUITES: dict[str, Suite] = {name: _suite(name) for name in SUITE_NAMES}
