"""The items probe by generation (`--by generation`): each item asked as a multiple-choice
question, its candidates lettered (A., B., ...) in an order shuffled per item from `--seed`
and recorded (`options`, `answer_letter`), the answer read as a letter or an option's text
(tacit.matching.choice), accuracy per group and overall with intervals over items, and the
letters answered against the correct ones (letters.csv), so that a letter bias shows. An
unreadable answer (no option named, or two) is wrong, and counted apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Column
from tacit.core.cache import fingerprint
from tacit.core.labels import short_labels
from tacit.core.numbers import with_interval
from tacit.matching.choice import ChoiceMatcher, chosen, lettered, letters
from tacit.matching.parse import OK
from tacit.matching.read import DUPLICATE
from tacit.probes.base import Metric
from tacit.probes.items.reading import OVERALL
from tacit.probes.summary import Summary, count, summarise, total

SHOWN = " | "  # between the options of the `options` column, in the order shown
# accuracy by generation: its chance level is one option in n, per item
CHOICE_ACCURACY = Metric(
    "accuracy",
    "accuracy",
    True,
    "accuracy_ci_low",
    "accuracy_ci_high",
    "n_items",
    chance="accuracy_chance",
    of="correct",
    chance_of=lambda rows, _: 1.0 / rows["n_options"],
)
CHOICE_COLUMNS = ["id", "group", "text", "prompt", "options", "n_options", "answer_letter"]
UNREADABLE = "unreadable"  # the letter table's row of answers that chose no one option


def shuffled(items: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One row per item (CHOICE_COLUMNS): its candidates in an order drawn from `seed` and
    the item's id (the same whatever else the file holds), and its answers' letters.

    Examples:
        >>> items = pd.DataFrame({"id": ["x"] * 3, "group": [""] * 3, "text": ["<mask>."] * 3,
        ...     "candidate": ["a", "b", "c"], "answer": [False, True, False]})
        >>> row = shuffled(items, 0).iloc[0]
        >>> sorted(row["options"].split(" | ")), len(row["answer_letter"])
        (['a', 'b', 'c'], 1)
    """
    rows = []
    for item, of in items.groupby("id", sort=False):
        draw = int(fingerprint(seed, "items-choice", str(item))[:8], 16)
        order = np.random.default_rng(draw).permutation(len(of))
        shown = of.iloc[order]
        marks = letters(len(shown))
        right = "".join(m for m, a in zip(marks, shown["answer"]) if a)
        first = of.iloc[0]
        rows.append(
            (
                item,
                first["group"],
                first["text"],
                first["text"],
                SHOWN.join(shown["candidate"]),
                len(shown),
                right,
            )
        )
    return pd.DataFrame(rows, columns=CHOICE_COLUMNS)


def options_of(rows: pd.DataFrame) -> list[list[str]]:
    """Each row's options in the order shown."""
    return [text.split(SHOWN) for text in rows["options"]]


def fills(rows: pd.DataFrame) -> list[dict[str, str]]:
    """Each row's question placeholder `options`: its lettered lines."""
    return [{"options": lettered(shown)} for shown in options_of(rows)]


def matchers(rows: pd.DataFrame) -> list[ChoiceMatcher]:
    """Each row's matcher: its options by letter."""
    return [ChoiceMatcher.of(shown) for shown in options_of(rows)]


def choices(answered: Answered) -> pd.DataFrame:
    """Of each row, from its answers: the letter each draw chose (`chosen`, empty where
    unreadable; a draw's joined by `,`), the share of draws that chose a right letter
    (`correct`) and the draws that chose no one option (`n_unreadable`)."""
    answers: pd.DataFrame = answered["answers"]
    read = answers[answers["status"].isin([OK, DUPLICATE])]
    by_draw = read.groupby(["id", "draw"], sort=False)["matched"].agg(list)
    found = []
    for item, right in zip(answered.rows["id"], answered.rows["answer_letter"]):
        draws = sorted(set(answers.loc[answers["id"] == item, "draw"]))
        picked = [chosen(by_draw.get((item, d), [])) for d in draws]
        found.append(
            (
                ",".join(picked),
                float(np.mean([p != "" and p in right for p in picked])),
                sum(p == "" for p in picked),
            )
        )
    return pd.DataFrame(found, columns=["chosen", "correct", "n_unreadable"])


CHOICE_FIELDS = (Column(("chosen", "correct", "n_unreadable"), ("answers",), of=choices),)


def letter_table(rows: pd.DataFrame) -> pd.DataFrame:
    """letters.csv: per model and letter, how often it was answered (`chosen`), how often it
    was a right letter (`correct`), and how often answered where right (`chosen_correct`);
    then a row `unreadable`, the draws that chose no one option."""
    found = []
    for model, mine in rows.groupby("model", sort=False):
        picked = [p for cell in mine["chosen"] for p in str(cell).split(",")]
        rights = [r for cell in mine["answer_letter"] for r in cell]
        hits = [
            p
            for cell, right in zip(mine["chosen"], mine["answer_letter"])
            for p in str(cell).split(",")
            if p and p in right
        ]
        widest = letters(int(mine["n_options"].max()))
        for letter in widest:
            found.append(
                (model, letter, picked.count(letter), rights.count(letter), hits.count(letter))
            )
        found.append((model, UNREADABLE, picked.count(""), 0, 0))
    return pd.DataFrame(found, columns=["model", "letter", "chosen", "correct", "chosen_correct"])


def _parts(mine: pd.DataFrame, items: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    groups = [g for g in dict.fromkeys(items["group"]) if g]
    return [*((g, mine[mine["group"] == g]) for g in groups), (OVERALL, mine)]


CHOICE_SUMMARY = Summary(
    ("model", "group"),
    (CHOICE_ACCURACY,),
    counts=(count("n_items"),),
    by=("model",),
    parts=_parts,
    pooled="group",
    stream=lambda key, group: str(group),
    unit=None,
    after=(total("n_unreadable"),),
    templates=False,
)


def summarize_choices(rows: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """The summary of an items run by generation (CHOICE_SUMMARY)."""
    return summarise(rows, CHOICE_SUMMARY, seed=seed)


def letters_said(table: pd.DataFrame) -> Mapping[str, str]:
    """Per model, its letters in a line: `answered A 3, B 1 (right A 2, B 2); unreadable 0`."""
    said = {}
    for model, mine in table.groupby("model", sort=False):
        marks = mine[mine["letter"] != UNREADABLE]
        answered = ", ".join(f"{m} {n}" for m, n in zip(marks["letter"], marks["chosen"]))
        right = ", ".join(f"{m} {n}" for m, n in zip(marks["letter"], marks["correct"]))
        bad = int(mine.loc[mine["letter"] == UNREADABLE, "chosen"].sum())
        said[str(model)] = f"letters answered {answered} (right: {right}); unreadable {bad}"
    return said


def choice_report(summary: pd.DataFrame, table: pd.DataFrame) -> str:
    """Accuracy per group and overall, a block per model, with the chance level and the
    unreadable answers; then each model's letters answered against the right ones."""
    labels = short_labels(summary["model"])
    lines = letters_said(table)
    blocks = []
    for model, rows in summary.groupby("model", sort=False):
        frame = pd.DataFrame(
            {
                "items": rows["n_items"].to_numpy(),
                "accuracy": [
                    with_interval(v, lo, hi)
                    for v, lo, hi in zip(
                        rows["accuracy"], rows["accuracy_ci_low"], rows["accuracy_ci_high"]
                    )
                ],
                "chance": [f"{v:.3f}" for v in rows["accuracy_chance"]],
                "unreadable": rows["n_unreadable"].to_numpy(),
            },
            index=rows["group"].to_numpy(),
        )
        blocks.append(
            f"{labels[model]}: multiple choice by generation, per group and over all items "
            f"(95% bootstrap intervals over items)\n{frame.to_string()}\n{lines[str(model)]}"
        )
    return "\n\n".join(blocks)


def choice_counts(rows: pd.DataFrame) -> dict[str, Any]:
    """The manifest's counts of the answers: the draws read, and those unreadable."""
    return {
        "draws_unreadable": int(rows["n_unreadable"].sum()),
        "draws": int(sum(len(str(c).split(",")) for c in rows["chosen"])),
    }


def shuffle_record(seed: int) -> dict[str, Any]:
    """How the options were ordered, for the manifest."""
    return {
        "order": "shuffled per item: numpy default_rng(fingerprint(seed, 'items-choice', id)) "
        "permutation; the order shown in prompts.csv's `options`, the right letters in "
        "`answer_letter`",
        "seed": seed,
    }
