"""NLI predictions for the pragmatics suites, three ways, one table per run
(`item_id, predicted, p_entailment, p_neutral, p_contradiction`): cloze (any masked LM,
PET-style: a template puts `<mask>` between premise and hypothesis, a verbalizer names a word
per label, optionally calibrated as Zhao et al. 2021; a causal LM scores each word in the
blank: tacit.ask.cloze), classifier (an NLI sequence classifier, labels from its id2label:
tacit.models.classifier), and predictions (released files, one folder per seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask import cloze
from tacit.ask.base import Scored
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.pragmatics.files import read_jsonl
from tacit.pragmatics.labels import LABELS, PROB_COLUMNS, normalize_label
from tacit.probes.nli.options import ClozeSetup, check_template, parse_verbalizer

if TYPE_CHECKING:
    from tacit.models.base import Scorer

CONTENT_FREE = ("N/A", "")  # Zhao et al. (2021)'s content-free inputs, averaged
PREDICTION_COLUMNS = ["item_id", "predicted", *PROB_COLUMNS]


# --- cloze mode -------------------------------------------------------------------------------


def fill_template(template: str, premise: str, hypothesis: str) -> str:
    """The template with premise and hypothesis in place (see cloze.fill_template)."""
    return cloze.fill_template(template, {"premise": premise, "hypothesis": hypothesis})


def cloze_prompts(items: pd.DataFrame, setup: ClozeSetup) -> list[str]:
    """Each item's premise and hypothesis in the template."""
    template = check_template(setup.template)
    return [fill_template(template, p, h) for p, h in zip(items["premise"], items["hypothesis"])]


def cloze_scores(scorer: Scorer, rows: pd.DataFrame, setup: ClozeSetup, progress: Any) -> Scored:
    """Label probabilities of the rows' prompts from the verbalizer words' logits at the mask
    (uncalibrated: `cloze_finish` calibrates once all of a model's rows are in), the words'
    share of the whole-vocabulary probability, and how many prompts were too long for the model
    (cut to a window around the mask: the premise loses its start)."""
    words = parse_verbalizer(setup.verbalizer)
    prompts = list(rows["prompt"])
    probs, mass, cut = cloze.label_probs(scorer, prompts, words, progress, cut_to_fit=True)
    table = _prediction_table(rows["item_id"], probs, rows.index)
    table["prompt"], table["verbalizer_mass"] = prompts, mass
    table.insert(0, "model", scorer.name)
    return Scored(table, {"prompts_cut_to_fit": cut})


def cloze_finish(
    scorer: Scorer, table: pd.DataFrame, setup: ClozeSetup
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Calibrate (when asked: each item's distribution divided by that of the content-free
    inputs, renormalised) and describe the setup for the manifest: the verbalizer's token ids,
    the content-free distribution, the words' mean share of the probability."""
    words = parse_verbalizer(setup.verbalizer)
    mass = table.pop("verbalizer_mass")
    record: dict[str, Any] = {
        "template": setup.template,
        "verbalizer": words,
        "verbalizer_token_ids": cloze.verbalizer_record(scorer, words),
        "mean_verbalizer_probability": float(np.mean(mass)) if len(mass) else None,
        "max_tokens": int(scorer.max_tokens),
    }
    if setup.calibrate:
        free = [fill_template(setup.template, text, text) for text in CONTENT_FREE]
        content_free, _, _ = cloze.label_probs(scorer, free, words, False)
        prior = content_free.mean(axis=0)
        probs = table[list(PROB_COLUMNS)].to_numpy() / prior
        probs = probs / probs.sum(axis=1, keepdims=True)
        calibrated = _prediction_table(table["item_id"], probs, table.index)
        table = calibrated.assign(**{c: table[c] for c in table if c not in calibrated})
        record["content_free_inputs"] = free
        record["content_free_distribution"] = dict(zip(LABELS, map(float, prior)))
    return table, record


def classifier_scores(scorer: Scorer, rows: pd.DataFrame, progress: Any) -> Scored:
    """Label probabilities of the rows' pairs from an NLI classifier; pairs too long for the
    model lose the end of their premise (counted)."""
    probs, too_long = scorer.label_probabilities(
        list(rows["premise"]), list(rows["hypothesis"]), progress=progress
    )
    table = _prediction_table(rows["item_id"], probs, rows.index)
    table.insert(0, "model", scorer.name)
    return Scored(table, {"truncated_pairs": int(too_long.sum())})


def _prediction_table(
    item_ids: Sequence[str], probs: np.ndarray, index: pd.Index | None = None
) -> pd.DataFrame:
    """item_id, predicted (the most probable label; empty where there are no probabilities)
    and the p_* columns."""
    known = ~np.isnan(probs).any(axis=1)
    predicted = np.full(len(probs), None, dtype=object)
    predicted[known] = np.asarray(LABELS, dtype=object)[probs[known].argmax(axis=1)]
    table = pd.DataFrame({"item_id": list(item_ids), "predicted": predicted}, index=index)
    for column, values in zip(PROB_COLUMNS, probs.T):
        table[column] = values
    return table


# --- released predictions ---------------------------------------------------------------------


def prediction_runs(path: str | Path, suite: str) -> list[tuple[str, list[Path]]]:
    """(seed name, files) for a predictions file, a folder of files, or a folder of seed
    folders. In a folder, the files named after the suite (`nope_*.jsonl`) are taken, or every
    `.jsonl` file when none is."""
    path = Path(path)
    if path.is_file():
        return [(path.stem, [path])]
    if not path.is_dir():
        raise TacitError(f"{option('--predictions')} {path}: no such file or folder")

    def files_in(folder: Path) -> list[Path]:
        files = sorted(folder.glob("*.jsonl"))
        named = [f for f in files if f.name.lower().startswith(suite)]
        return named or files

    if files_in(path):
        return [(path.name, files_in(path))]
    seeds = [(d.name, files_in(d)) for d in sorted(path.iterdir()) if d.is_dir() and files_in(d)]
    if not seeds:
        raise TacitError(
            f"{option('--predictions')} {path}: no .jsonl prediction files in it or its folders"
        )
    return seeds


def read_predictions(files: Sequence[Path], items: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Match prediction records to items by uid.

    Records: `uid` and `logits` (entailment, neutral, contradiction order) or `predicted_label`.
    A uid that several items share (IMPPRES's pairIDs repeat across trigger files) is matched by
    occurrence: its k-th record goes to its k-th item in the data's file order, which is how
    `cat presupposition/*.jsonl` concatenates them.
    """
    slots: dict[tuple[str, int], int] = {}
    seen: dict[str, int] = {}
    for position, uid in enumerate(items["uid"]):
        slots[(uid, seen.get(uid, 0))] = position
        seen[uid] = seen.get(uid, 0) + 1
    probs = np.full((len(items), len(LABELS)), np.nan)
    predicted = np.full(len(items), None, dtype=object)
    count: dict[str, int] = {}
    unmatched = records = 0
    for file in files:
        for number, record in read_jsonl(file):
            where = f"{file}:{number}"
            if "uid" not in record:
                raise TacitError(f"{where}: missing field 'uid'")
            uid = str(record["uid"])
            slot = slots.get((uid, count.get(uid, 0)))
            count[uid] = count.get(uid, 0) + 1
            records += 1
            if slot is None:
                unmatched += 1
                continue
            if "logits" in record:
                logits = record["logits"]
                if (
                    not isinstance(logits, list)
                    or len(logits) != len(LABELS)
                    or not all(isinstance(x, int | float) for x in logits)
                ):
                    raise TacitError(f"{where}: logits must be 3 numbers (E, N, C), got {logits!r}")
                z = np.asarray(logits, dtype=np.float64)
                probs[slot] = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
                predicted[slot] = LABELS[int(z.argmax())]
            if "predicted_label" in record:
                predicted[slot] = normalize_label(record["predicted_label"], where)
            if predicted[slot] is None:
                raise TacitError(f"{where}: neither 'logits' nor 'predicted_label'")
    if records and unmatched == records:
        names = ", ".join(str(f) for f in files)
        raise TacitError(f"{names}: none of its {records} uids names an item in {option('--data')}")
    table = _prediction_table(items["item_id"], probs)
    table["predicted"] = predicted
    return table, {
        "files": [str(f) for f in files],
        "records": records,
        "records_not_in_data": unmatched,
    }
