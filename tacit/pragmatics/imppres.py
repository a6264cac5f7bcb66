"""IMPPRES (Jeretič et al. 2020): generated NLI pairs for presuppositions and scalar implicatures.

Files as published: `presupposition/<trigger>.jsonl` (sentence1, sentence2, gold_label, UID,
pairID, paradigmID, and either trigger + presupposition, or trigger1 + trigger2 + control_item)
and `implicature/<trigger>.jsonl` (gold_label_log, gold_label_prag, spec_relation, item_type,
trigger, lexemes). Every item keeps the fields the paper's results are broken down by.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tacit.core.errors import TacitError
from tacit.pragmatics import report
from tacit.pragmatics.files import data_files, read_jsonl, relative_name, require
from tacit.pragmatics.labels import LABELS, normalize_label

CONDITIONS = ("unembedded", "negated", "interrogative", "modal", "conditional")
COLUMNS = [
    "item_id",
    "uid",
    "part",
    "trigger_type",
    "condition",
    "presupposition",
    "control",
    "paradigm",
    "gold",
    "gold_logical",
    "gold_pragmatic",
    "premise",
    "hypothesis",
    "source",
]


def load(path: str | Path) -> pd.DataFrame:
    """Every IMPPRES item under `path` (the dataset folder, one part, or one file).

    Presupposition items: gold is `gold_label`; `uid` is the pairID (repeated across trigger
    files, which is how released prediction files name them). Implicature items: gold is the
    pragmatic label; `gold_logical` and `gold_pragmatic` keep both.
    """
    items: list[dict[str, Any]] = []
    root = Path(path)
    for file in data_files(root, "*.jsonl", what="IMPPRES"):
        name = relative_name(file, root)
        for number, record in read_jsonl(file):
            where = f"{file}:{number}"
            require(record, ("sentence1", "sentence2"), where)
            if "gold_label_log" in record:
                items.append(_implicature(record, file.stem, name, number, where))
            elif "gold_label" in record:
                items.append(_presupposition(record, name, where))
            else:
                raise TacitError(f"{where}: neither gold_label nor gold_label_log: not IMPPRES")
    return pd.DataFrame(items, columns=COLUMNS)


def _presupposition(record: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    require(record, ("UID", "pairID", "paradigmID"), where)
    control = bool(record.get("control_item", False))
    require(record, ("trigger1",) if control else ("trigger", "presupposition"), where)
    gold = normalize_label(record["gold_label"], where)
    return {
        "item_id": f"{record['UID']}/{record['pairID']}",
        "uid": str(record["pairID"]),
        "part": "presupposition",
        "trigger_type": record["UID"],
        "condition": record["trigger1"] if control else record["trigger"],
        "presupposition": "" if control else record["presupposition"],
        "control": control,
        "paradigm": int(record["paradigmID"]),
        "gold": gold,
        "gold_logical": gold,
        "gold_pragmatic": gold,
        "premise": record["sentence1"],
        "hypothesis": record["sentence2"],
        "source": name,
    }


def _implicature(
    record: dict[str, Any], stem: str, name: str, number: int, where: str
) -> dict[str, Any]:
    require(record, ("gold_label_prag", "spec_relation", "item_type"), where)
    logical = normalize_label(record["gold_label_log"], where)
    pragmatic = normalize_label(record["gold_label_prag"], where)
    return {
        "item_id": f"{stem}/{number}",
        "uid": f"{stem}/{number}",
        "part": "implicature",
        "trigger_type": stem,
        "condition": record["spec_relation"],
        "presupposition": "",
        "control": record["item_type"] == "control",
        "paradigm": -1,
        "gold": pragmatic,
        "gold_logical": logical,
        "gold_pragmatic": pragmatic,
        "premise": record["sentence1"],
        "hypothesis": record["sentence2"],
        "source": name,
    }


def filtered_paradigms(presupposition: pd.DataFrame) -> pd.DataFrame:
    """Test items of the paradigms that pass the paper's filter for their condition.

    A paradigm counts for a condition only if the model gets its unembedded positive item right
    and, for an embedded condition, also the control item of that condition (which checks that
    the model reads the embedding itself correctly). Per condition, as the released
    presupposition_results_summary.csv counts them.
    """
    correct = presupposition["gold"] == presupposition["predicted"]
    key = ["trigger_type", "paradigm"]
    anchor = presupposition[
        ~presupposition["control"]
        & (presupposition["condition"] == "unembedded")
        & (presupposition["presupposition"] == "positive")
    ]
    anchor_ok = set(map(tuple, anchor.loc[correct[anchor.index], key].to_numpy()))
    controls = presupposition[presupposition["control"]]
    control_ok = set(
        map(tuple, controls.loc[correct[controls.index], key + ["condition"]].to_numpy())
    )
    tests = presupposition[~presupposition["control"]]
    keep = [
        (t, p) in anchor_ok and (c == "unembedded" or (t, p, c) in control_ok)
        for t, p, c in tests[key + ["condition"]].itertuples(index=False)
    ]
    return tests[np.asarray(keep, dtype=bool)]


def summarize(items: pd.DataFrame) -> list[dict[str, Any]]:
    """The paper's breakdowns: presupposition accuracy per trigger x condition x presupposition
    (and with the filter), control accuracy, label shares; implicature accuracy against the
    logical and the pragmatic gold label, and which reading the predictions follow."""
    out: list[dict[str, Any]] = []
    correct = {"accuracy": report.accuracy()}
    shares = {f"share_{label}": report.share(label) for label in LABELS}
    presupposition = items[items["part"] == "presupposition"]
    if len(presupposition):
        tests = presupposition[~presupposition["control"]]
        by = ["trigger_type", "condition", "presupposition"]
        out += report.rows(tests, "presupposition", by, correct, total=False)
        out += report.rows(tests, "presupposition", ["condition", "presupposition"], correct)
        out += report.rows(tests, "presupposition: label shares", ["presupposition"], shares)
        controls = presupposition[presupposition["control"]]
        out += report.rows(
            controls, "presupposition controls", ["trigger_type", "condition"], correct, total=False
        )
        out += report.rows(controls, "presupposition controls", ["condition"], correct)
        kept = filtered_paradigms(presupposition)
        out += report.rows(
            kept, "presupposition, filtered", ["condition", "presupposition"], correct
        )
    implicature = items[items["part"] == "implicature"]
    if len(implicature):
        target = implicature[~implicature["control"]]
        readings = {
            "accuracy_logical": report.accuracy("gold_logical"),
            "accuracy_pragmatic": report.accuracy("gold_pragmatic"),
            "share_pragmatic": _reading("pragmatic"),
            "share_logical": _reading("logical"),
            "share_neither": _reading("neither"),
        }
        out += report.rows(target, "implicature", ["trigger_type"], readings)
        controls = implicature[implicature["control"]]
        out += report.rows(controls, "implicature controls", ["trigger_type"], correct)
    return out


def _reading(which: str) -> report.Metric:
    """Share of target items whose prediction is the pragmatic reading only, the logical one
    only, or neither (target items' two gold labels always differ)."""

    def metric(items: pd.DataFrame) -> float:
        if not len(items):
            return np.nan
        prag = items["predicted"] == items["gold_pragmatic"]
        log = items["predicted"] == items["gold_logical"]
        chosen = {"pragmatic": prag & ~log, "logical": log & ~prag, "neither": ~prag & ~log}
        return float(chosen[which].mean())

    return metric
