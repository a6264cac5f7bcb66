"""`probe table`: one table across runs, elicitation's Table 1 or retrieval's MRR."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tacit.core.errors import TacitError
from tacit.results.labels import short_labels
from tacit.results.plots import read_summary

KINDS = {"elicitation": {"model", "relation", "prefix", "map_vocab"},
         "retrieval": {"model", "selection", "order", "category", "n_props", "mrr"}}  # fmt: skip


def run_kind(summary: pd.DataFrame, run: Path) -> str:
    for kind, columns in KINDS.items():
        if columns <= set(summary.columns):
            return kind
    raise TacitError(f"{run}: neither an elicitation nor a retrieval run")


def _labelled(frames: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    """The runs' rows with short model labels; where two runs hold the same row key (a run and
    its prefix ablation, the same model twice), the model's label carries the run's name."""
    table = pd.concat(frames, ignore_index=True)
    labels = short_labels(table["model"])
    table["model"] = table["model"].map(labels)
    clash = table.duplicated(keys, keep=False)
    table.loc[clash, "model"] = table.loc[clash, "model"] + " (" + table.loc[clash, "run"] + ")"
    if table.duplicated(keys).any():
        raise TacitError("two runs with the same directory name hold the same rows: rename one")
    return table


def runs_table(runs: Sequence[Path], n_props: str = "1,5,10") -> str:
    """The table `probe table` prints (see its help)."""
    from tacit.probes.elicit import PAPER_PROMPTS
    from tacit.results.summary import format_elicitation_table

    if not runs:
        raise TacitError("no run directory given")
    frames = [read_summary(run, required=set()) for run in runs]
    kinds = {run_kind(f, Path(r)) for f, r in zip(frames, runs)}
    if len(kinds) > 1:
        raise TacitError("these runs mix elicitation and retrieval: one table takes one kind")
    if kinds == {"elicitation"}:
        table = _labelled(frames, ["model", "relation", "prefix"]).drop(columns="run")
        return format_elicitation_table(table, PAPER_PROMPTS)
    try:
        wanted = [int(n) for n in n_props.split(",")]
    except ValueError:
        raise TacitError(f"--n-props {n_props!r}: numbers separated by commas") from None
    table = _labelled(frames, ["model", "selection", "order", "category", "n_props"])
    table = table[table["n_props"].isin(wanted)]
    if table.empty:
        raise TacitError(f"--n-props {n_props}: no run has prompts with that many properties")
    table["condition"] = table[["selection", "order", "category"]].astype(str).agg("/".join, axis=1)
    pivot = table.pivot(index=["model", "condition"], columns="n_props", values="mrr")
    pivot.columns = [f"MRR@{n}" for n in pivot.columns]
    return pivot.to_string(float_format=lambda x: f"{x:.4f}")
