"""PragmEval (Sileo et al. 2022): 11 pragmatics classification tasks in 20 configurations.

Files as published: `<Config>/{train,dev,test}.tsv` (tab-separated with CSV quoting, header
`sentence1, sentence2, label` or `sentence, label`) and `<Config>/labels` (one label a line).
Tasks with several configurations (Persuasiveness, EmoBank, Squinky) are averaged into one task
score, as the paper does; SwitchBoard and MRDA are scored by macro-F1, the rest by accuracy.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.pragmatics.files import decoded_lines, read_text

SPLITS = ("train", "dev", "test")
MACRO_F1 = frozenset({"SwitchBoard", "MRDA"})
GROUPED = ("Persuasiveness", "EmoBank", "Squinky")
PAPER_BERT_AVERAGE = 61.8  # the paper's fine-tuned BERT-base, averaged over the 11 tasks
HEADERS = (["sentence1", "sentence2", "label"], ["sentence", "label"])


def task_of(config: str) -> str:
    """`Persuasiveness-Strength` -> `Persuasiveness`; a single-configuration task is itself."""
    head = config.split("-", 1)[0]
    return head if head in GROUPED else config


def metric_of(config: str) -> str:
    return "macro_f1" if task_of(config) in MACRO_F1 else "accuracy"


@dataclass(frozen=True)
class Config:
    """One configuration: its labels (file order), fields and splits (`text` columns and
    `label`)."""

    name: str
    labels: tuple[str, ...]
    fields: tuple[str, ...]  # ("sentence1", "sentence2") or ("sentence",)
    splits: dict[str, pd.DataFrame]
    files: dict[str, Path]


def configs_in(root: str | Path) -> list[str]:
    """The configurations under a PragmEval folder: its subfolders that hold a train.tsv."""
    root = Path(root)
    if not root.is_dir():
        raise TacitError(f"{option('--data')} {root}: no such folder")
    names = sorted(p.parent.name for p in root.glob("*/train.tsv"))
    if not names:
        raise TacitError(
            f"{option('--data')} {root}: no <Task>/train.tsv in it: not a PragmEval folder"
        )
    return names


def select_configs(root: str | Path, tasks: list[str] | None) -> list[str]:
    """Configurations for `--task` names: a task (`Persuasiveness`: all of its configurations)
    or one configuration (`EmoBank-Valence`), case-insensitive; all without `--task`."""
    available = configs_in(root)
    if not tasks:
        return available
    chosen: list[str] = []
    for task in tasks:
        wanted = task.strip().lower()
        matches = [c for c in available if c.lower() == wanted or task_of(c).lower() == wanted]
        if not matches:
            raise TacitError(
                f"{option('--task')} {task!r}: not in {root}; it has "
                + ", ".join(sorted({task_of(c) for c in available}))
            )
        chosen += [m for m in matches if m not in chosen]
    return chosen


def load_config(root: str | Path, name: str) -> Config:
    """Read one configuration's three splits and labels, checking every row."""
    folder = Path(root) / name
    labels_file = folder / "labels"
    if not labels_file.is_file():
        raise TacitError(f"{labels_file}: missing (one label a line)")
    labels = tuple(line.strip() for line in decoded_lines(labels_file)[0] if line.strip())
    if len(labels) < 2:
        raise TacitError(f"{labels_file}: fewer than 2 labels")
    splits, files, fields = {}, {}, None
    for split in SPLITS:
        path = folder / f"{split}.tsv"
        if not path.is_file():
            raise TacitError(f"{path}: missing")
        table = _read_split(path, set(labels))
        if fields is None:
            fields = tuple(c for c in table.columns if c != "label")
        elif tuple(c for c in table.columns if c != "label") != fields:
            raise TacitError(f"{path}: its columns differ from those of {name}/train.tsv")
        splits[split], files[split] = table, path
    return Config(name, labels, fields or (), splits, files)


def _read_split(path: Path, labels: set[str]) -> pd.DataFrame:
    text, _ = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    header = [h.strip() for h in next(reader, [])]
    if not header:
        raise TacitError(f"{path}: empty file")
    if header not in HEADERS:
        raise TacitError(
            f"{path}:1: header {header}; expected sentence1, sentence2, label or sentence, label"
        )
    records = []
    for row in reader:
        if len(row) != len(header):
            raise TacitError(f"{path}:{reader.line_num}: {len(row)} fields, expected {len(header)}")
        if row[-1] not in labels:
            raise TacitError(
                f"{path}:{reader.line_num}: label {row[-1]!r} is not in the labels file"
            )
        records.append(row)
    if not records:
        raise TacitError(f"{path}: no rows after the header")
    return pd.DataFrame(records, columns=header)
