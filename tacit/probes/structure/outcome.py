"""From the analyses of each compared matrix (tacit.structure.Structure) to a run's parts: one
summary row per matrix, every table with the matrix it is of, the figures, the matrices' files."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from tacit.structure import ConceptFeatureMatrix, Structure

# summary.csv's columns after `model`, each read from one analysis's table
SUMMARY_COLUMNS = (
    "n_concepts",
    "rsa",
    "rsa_ci_low",
    "rsa_ci_high",
    "rsa_chance",
    "mantel_p",
    "ceiling",
    "ceiling_fraction",
    "auc_own_category",
    "auc_other_categories",
    "f1_selectivity_own_category",
    "f1_selectivity_other_categories",
    "purity",
    "adjusted_rand",
    "prior_rho",
    "rsa_without_prior",
)


@dataclass
class Parts:
    """A run's summary, further tables, figures and files, made of its Structures."""

    summary: pd.DataFrame
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Callable[[], bytes]] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)


def slug(name: str) -> str:
    """A model's name as a file name: `HuggingFaceTB/SmolLM2` -> `HuggingFaceTB_SmolLM2`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def _value(table: pd.DataFrame, column: str = "value", **where: Any) -> float:
    rows = table
    for key, wanted in where.items():
        rows = rows[rows[key] == wanted]
    return float(rows[column].iloc[0]) if len(rows) else float("nan")


def summary_row(name: str, found: Structure) -> dict[str, Any]:
    """The numbers a summary row gives of one matrix's analyses (every one over all concepts)."""
    t = found.tables
    rsa, plain = t["rsa"], t["rsa_without_prior"]
    verification, categories = t["verification"], t["categories"]
    own = categories[categories["matrix"] == found.names[0]]
    return {
        "model": name,
        "n_concepts": int(_value(rsa, "n_concepts", scope="all")),
        "rsa": _value(rsa, scope="all"),
        "rsa_ci_low": _value(rsa, "ci_low", scope="all"),
        "rsa_ci_high": _value(rsa, "ci_high", scope="all"),
        "rsa_chance": _value(rsa, "chance", scope="all"),
        "mantel_p": _value(rsa, "p_value", scope="all"),
        "ceiling": float(t["ceiling"]["reliability"].iloc[0]),
        "ceiling_fraction": float(t["ceiling_fraction"]["value"].iloc[0]),
        "auc_own_category": _value(verification, negatives="own category", metric="auc"),
        "auc_other_categories": _value(verification, negatives="other categories", metric="auc"),
        "f1_selectivity_own_category": _value(
            verification, negatives="own category", metric="f1_selectivity"
        ),
        "f1_selectivity_other_categories": _value(
            verification, negatives="other categories", metric="f1_selectivity"
        ),
        "purity": _value(own, metric="purity"),
        "adjusted_rand": _value(own, metric="adjusted_rand"),
        "prior_rho": _value(t["prior"], metric="prior_rho"),
        "rsa_without_prior": _value(plain, scope="all"),
    }


def parts(compared: Sequence[tuple[str, Structure]], reference: ConceptFeatureMatrix) -> Parts:
    """The run's parts: a summary row per compared matrix; each analysis's table with a
    `model` column (NAME.csv); each one's figures (NAME.png, or NAME-SLUG.png beside others);
    each compared matrix in `matrix/SLUG/` and the reference's in `reference/`."""
    summary = pd.DataFrame(
        [summary_row(n, s) for n, s in compared], columns=["model", *SUMMARY_COLUMNS]
    )
    extra: dict[str, pd.DataFrame] = {}
    for name in dict.fromkeys(t for _, s in compared for t in s.tables):
        tables = [s.tables[name].assign(model=n) for n, s in compared if name in s.tables]
        table = pd.concat(tables, ignore_index=True)
        extra[name] = table[["model", *[c for c in table.columns if c != "model"]]]
    figures: dict[str, Callable[[], bytes]] = {}
    files: dict[str, str | bytes] = {}
    for n, found in compared:
        end = "" if len(compared) == 1 else f"-{slug(n)}"
        drawn = cache(found.figures)  # drawn once, when the run is saved
        for figure in ("rsa", "categories", "map", "prior", "verification", "reliability"):
            if figure == "verification" and found.tables["verification"].empty:
                continue
            if figure == "reliability" and "calibration" not in found.tables:
                continue
            figures[f"{figure}{end}.png"] = _drawn(drawn, figure)
        files.update({f"matrix/{slug(n)}/{k}": v for k, v in found.a.files().items()})
    files.update({f"reference/{k}": v for k, v in reference.files().items()})
    record = {n: s.record for n, s in compared}
    return Parts(summary, extra, figures, files, record)


def _drawn(drawn: Callable[[], dict[str, Any]], name: str) -> Callable[[], bytes]:
    """One figure of the analyses as a .png file's bytes."""
    from tacit.structure.figures import figure_png

    return lambda: figure_png(drawn()[name])


def finite(values: np.ndarray) -> np.ndarray:
    """Scores with a word no model can give (-inf) at the least finite score less one."""
    if np.isfinite(values).all():
        return values
    least = values[np.isfinite(values)].min() if np.isfinite(values).any() else 0.0
    return np.where(np.isfinite(values), values, least - 1.0)
