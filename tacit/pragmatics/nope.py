"""NOPE (Parrish et al. 2021): naturally occurring presuppositions with human judgements.

Files as published: `nli_corpus.main.jsonl` and `nli_corpus.adv.jsonl`, one object a line with
uid, premise, hypothesis, label (E/N/C, the annotators' majority) and metadata (type original /
negated, adversarial, original_negated, trigger_type, nli_labels and ratings of 5 annotators).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tacit.pragmatics import report
from tacit.pragmatics.files import data_files, read_jsonl, relative_name, require
from tacit.pragmatics.labels import ENTAILMENT, NEUTRAL, normalize_label

COLUMNS = [
    "item_id",
    "uid",
    "split",
    "trigger_type",
    "premise_type",
    "original_negated",
    "pair",
    "gold",
    "human_labels",
    "human_agreement",
    "mean_rating",
    "premise",
    "hypothesis",
    "source",
]

# What the paper reports for RoBERTa-large fine-tuned on MNLI+SNLI+ANLI+FEVER (mean of 5 seeds;
# figures and Table 4), printed beside ours: (section, group, metric) -> percent.
PAPER_ROBERTA_LARGE = {
    ("accuracy", "main", "accuracy"): 78.5,
    ("accuracy", "adv", "accuracy"): 56.5,
    ("Table 4 subsets (main)", "E->E", "accuracy_unembedded"): 89.9,
    ("Table 4 subsets (main)", "E->E", "accuracy_negated"): 89.2,
    ("Table 4 subsets (main)", "E->{N,C}", "accuracy_unembedded"): 80.6,
    ("Table 4 subsets (main)", "E->{N,C}", "accuracy_negated"): 32.7,
    ("Table 4 subsets (main)", "{N,C}->E", "accuracy_unembedded"): 35.1,
    ("Table 4 subsets (main)", "{N,C}->E", "accuracy_negated"): 68.4,
}
PAPER_LABEL = "Parrish et al. 2021, RoBERTa-large fine-tuned on MNLI+SNLI+ANLI+FEVER, 5 seeds"


def load(path: str | Path) -> pd.DataFrame:
    """Every NOPE item in the file or folder (main and adversarial corpora)."""
    items = []
    root = Path(path)
    for file in data_files(root, "nli_corpus*.jsonl", what="NOPE"):
        for number, record in read_jsonl(file):
            where = f"{file}:{number}"
            require(record, ("uid", "premise", "hypothesis", "label", "metadata"), where)
            meta = record["metadata"]
            require(meta, ("type", "adversarial", "trigger_type", "nli_labels", "ratings"), where)
            gold = normalize_label(record["label"], where)
            humans = [normalize_label(label, where) for label in meta["nli_labels"]]
            uid = str(record["uid"])
            items.append(
                {
                    "item_id": uid,
                    "uid": uid,
                    "split": "adv" if meta["adversarial"] else "main",
                    "trigger_type": meta["trigger_type"],
                    "premise_type": meta["type"],
                    "original_negated": bool(meta.get("original_negated", False)),
                    "pair": re.sub(r"-neg(?=-|$)", "", uid),
                    "gold": gold,
                    "human_labels": "".join(label[0].upper() for label in humans),
                    "human_agreement": float(np.mean([h == gold for h in humans])),
                    "mean_rating": float(np.mean(meta["ratings"])),
                    "premise": record["premise"],
                    "hypothesis": record["hypothesis"],
                    "source": relative_name(file, root),
                }
            )
    return pd.DataFrame(items, columns=COLUMNS)


def projection_pairs(items: pd.DataFrame) -> pd.DataFrame:
    """Each original/negated pair as one row: which is the unembedded (affirmative) premise,
    its gold and correctness, and the negated one's.

    Where the corpus's original sentence was itself negated (`original_negated`), its
    'negated' version is the affirmative one: the roles swap, as in the paper's Table 4.
    """
    columns = ["split", "subset", "correct_unembedded", "correct_negated"]
    pairs = items.groupby(["split", "pair"])["premise_type"]
    complete = (pairs.transform("size") == 2) & (pairs.transform("nunique") == 2)
    items = items[complete]
    if items.empty:
        return pd.DataFrame(columns=columns)
    swapped = items.groupby(["split", "pair"])["original_negated"].transform("any")
    role = np.where((items["premise_type"] == "original") ^ swapped, "unembedded", "negated")
    wide = (
        items.assign(role=role, correct=items["gold"] == items["predicted"])
        .set_index(["split", "pair", "role"])[["gold", "correct"]]
        .unstack("role")
    )
    return pd.DataFrame(
        {
            "split": wide.index.get_level_values("split"),
            "subset": [
                f"{_side(u)}->{_side(n)}"
                for u, n in zip(wide["gold"]["unembedded"], wide["gold"]["negated"])
            ],
            "correct_unembedded": wide["correct"]["unembedded"].astype(bool).to_numpy(),
            "correct_negated": wide["correct"]["negated"].astype(bool).to_numpy(),
        },
        columns=columns,
    )


def _side(label: str) -> str:
    return "E" if label == ENTAILMENT else "{N,C}"


def summarize(items: pd.DataFrame) -> list[dict[str, Any]]:
    """Accuracy on main and adversarial sets, per trigger type, on original vs negated premises,
    on the Table 4 subsets, on the neutral items; the human-agreement ceiling; Spearman's rho
    between the model's entailment probability and the mean human rating."""
    correct = {"accuracy": report.accuracy()}
    out = report.rows(items, "accuracy", ["split"], correct, total=False)
    out += report.rows(items, "per trigger type", ["split", "trigger_type"], correct, total=False)
    out += report.rows(
        items, "original vs negated premise", ["split", "premise_type"], correct, total=False
    )
    for split in ("main", "adv"):
        pairs = projection_pairs(items[items["split"] == split])
        out += report.rows(
            pairs,
            f"Table 4 subsets ({split})",
            ["subset"],
            {
                "accuracy_unembedded": lambda p: float(p["correct_unembedded"].mean()),
                "accuracy_negated": lambda p: float(p["correct_negated"].mean()),
            },
            total=False,
        )
    neutral = items[items["gold"] == NEUTRAL]
    out += report.rows(neutral, "neutral items", ["split"], correct, total=False)
    out += report.rows(
        items,
        "human agreement (ceiling)",
        ["split"],
        {"annotators_agreeing_with_gold": lambda g: float(g["human_agreement"].mean())},
        total=False,
    )
    out += report.rows(
        items,
        "entailment probability vs human rating",
        ["split"],
        {"spearman_rho": _rating_rho},
        total=False,
    )
    return out


def _rating_rho(items: pd.DataFrame) -> float:
    """Spearman's rho between p_entailment and the mean human rating (NaN without
    probabilities, e.g. from a predictions file that has only labels, or without variance)."""
    known = items.dropna(subset=["p_entailment"])
    if len(known) < 2 or known["p_entailment"].nunique() < 2 or known["mean_rating"].nunique() < 2:
        return np.nan  # undefined without variance
    from scipy.stats import spearmanr  # scipy loads slowly; only reports need it

    return float(spearmanr(known["p_entailment"], known["mean_rating"]).statistic)
