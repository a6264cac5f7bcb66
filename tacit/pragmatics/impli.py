"""IMPLI (Stowe et al. 2022): idioms and metaphors as NLI pairs, binary entail / non-entail.

Files as published: `idioms/*.tsv` and `metaphors/*.tsv`, no header, tab-separated premise,
hypothesis (and sometimes a score); the file name gives the subset and the gold label. One
file (metaphors/replacement_tsvetkov_e.tsv) is cp1252, not UTF-8: read as such.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.pragmatics import report
from tacit.pragmatics.files import data_files, decoded_lines, relative_name
from tacit.pragmatics.labels import ENTAILMENT, NON_ENTAILMENT, binary

COLUMNS = [
    "item_id",
    "uid",
    "figure",
    "quality",
    "subset",
    "source_corpus",
    "gold",
    "premise",
    "hypothesis",
    "source",
    "encoding",
]

# (figure, file-name pattern) -> (quality, subset, gold), the paper's breakdown of its data.
SUBSETS = [
    ("idioms", r"fig_context_(\w+)_e", ("silver", "entail", ENTAILMENT)),
    ("idioms", r"lit_context_(\w+)_ne", ("silver", "literal-context non-entail", NON_ENTAILMENT)),
    (
        "idioms",
        r"adversarial_definition_ne_(\w+)",
        ("silver", "adversarial-definition non-entail", NON_ENTAILMENT),
    ),
    ("idioms", r"manual_e", ("gold", "entail", ENTAILMENT)),
    ("idioms", r"manual_antonyms_ne", ("gold", "antonym non-entail", NON_ENTAILMENT)),
    ("idioms", r"manual_ne", ("gold", "non-entail", NON_ENTAILMENT)),
    ("metaphors", r"replacement_(\w+)_e", ("silver", "entail", ENTAILMENT)),
    ("metaphors", r"manual_e", ("gold", "entail", ENTAILMENT)),
    ("metaphors", r"manual_ne", ("gold", "non-entail", NON_ENTAILMENT)),
]


def subset_of(file: Path) -> tuple[str, str, str, str, str]:
    """(figure, quality, subset, source corpus, gold) of an IMPLI file, from its folder and
    name."""
    figure = file.parent.name
    for known_figure, pattern, (quality, subset, gold) in SUBSETS:
        match = re.fullmatch(pattern, file.stem)
        if figure == known_figure and match:
            return figure, quality, subset, match.group(1) if match.groups() else "manual", gold
    raise TacitError(
        f"{file}: not an IMPLI file name this tool knows (expected idioms/ or metaphors/ with "
        "one of the published names, e.g. idioms/manual_e.tsv)"
    )


def load(path: str | Path) -> pd.DataFrame:
    """Every IMPLI pair in the folder (or the one file given)."""
    items: list[dict[str, Any]] = []
    root = Path(path)
    for file in data_files(root, "*.tsv", what="IMPLI"):
        figure, quality, subset, corpus, gold = subset_of(file)
        lines, encoding = decoded_lines(file, ("utf-8", "cp1252"))
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                raise TacitError(f"{file}:{number}: expected premise<TAB>hypothesis")
            item_id = f"{figure}/{file.stem}/{number}"
            items.append(
                {
                    "item_id": item_id,
                    "uid": item_id,
                    "figure": figure,
                    "quality": quality,
                    "subset": subset,
                    "source_corpus": corpus,
                    "gold": gold,
                    "premise": fields[0].strip(),
                    "hypothesis": fields[1].strip(),
                    "source": relative_name(file, root),
                    "encoding": encoding,
                }
            )
    return pd.DataFrame(items, columns=COLUMNS)


def entailment_preferred(items: pd.DataFrame) -> pd.DataFrame:
    """Gold pairs of hypotheses for one premise, one entailed and one not: does the entailed one
    get the higher entailment probability? (ties count one half)."""
    gold = items[(items["quality"] == "gold")].dropna(subset=["p_entailment"])
    rows = []
    for (figure, _), group in gold.groupby(["figure", "premise"], sort=True):
        entailed = group[group["gold"] == ENTAILMENT]
        for subset, others in group[group["gold"] != ENTAILMENT].groupby("subset"):
            for p_yes in entailed["p_entailment"]:
                for p_no in others["p_entailment"]:
                    win = 1.0 if p_yes > p_no else 0.5 if p_yes == p_no else 0.0
                    rows.append({"figure": figure, "against": subset, "win": win})
    return pd.DataFrame(rows, columns=["figure", "against", "win"])


def summarize(items: pd.DataFrame) -> list[dict[str, Any]]:
    """Binary accuracy (neutral and contradiction count as non-entailment) per figure x quality x
    subset and per source file; the pairwise preference test on gold items."""
    items = items.assign(predicted_binary=items["predicted"].map(binary, na_action="ignore"))
    correct = {"binary_accuracy": report.accuracy("gold", "predicted_binary")}
    out = report.rows(items, "binary accuracy", ["figure", "quality", "subset"], correct)
    out += report.rows(items, "binary accuracy per file", ["source"], correct, total=False)
    pairs = entailment_preferred(items)
    out += report.rows(
        pairs,
        "entailed hypothesis preferred (gold pairs sharing a premise)",
        ["figure", "against"],
        {"share_preferred": lambda p: float(p["win"].mean()) if len(p) else np.nan},
    )
    return out
