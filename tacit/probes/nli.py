"""NLI predictions for the pragmatics suites, three ways, all giving one table per run:
`item_id, predicted, p_entailment, p_neutral, p_contradiction`.

- cloze: any masked LM, PET-style. A template puts `<mask>` between premise and hypothesis; a
  verbalizer names one word per label (Yes / Maybe / No); the label probabilities are the
  softmax over those words' logits at the mask, optionally calibrated (Zhao et al. 2021).
- classifier: any sequence classifier trained on NLI, labels read from its config's id2label.
- predictions: released prediction files (uid + logits or a predicted label), one folder per
  seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification

from tacit.errors import TacitError, first_line
from tacit.pragmatics.files import read_jsonl
from tacit.pragmatics.labels import LABELS, PROB_COLUMNS, normalize_label
from tacit.probes import cloze
from tacit.scorer import (
    MaskedLMScorer,
    compile_encoder,
    compile_errors_explained,
    load_with_head,
    longest_first_batches,
    max_tokens,
    resolve_device,
    resolve_dtype,
)
from tacit.vocab.shared import load_tokenizer, quiet_transformers

DEFAULT_TEMPLATE = "{premise}? <mask>, {hypothesis}"
DEFAULT_VERBALIZER = "entailment=Yes,neutral=Maybe,contradiction=No"
CONTENT_FREE = ("N/A", "")  # Zhao et al. (2021)'s content-free inputs, averaged
PREDICTION_COLUMNS = ["item_id", "predicted", *PROB_COLUMNS]


# --- cloze mode -------------------------------------------------------------------------------


FIELDS = ("premise", "hypothesis")


def check_template(template: str) -> str:
    """A template has `{premise}`, `{hypothesis}` and `<mask>` once each, and no other field."""
    return cloze.check_template(template, FIELDS)


def parse_verbalizer(value: str) -> dict[str, str]:
    """`entailment=Yes,neutral=Maybe,contradiction=No` (or E=, N=, C=), or `Yes,Maybe,No` in
    that label order."""
    return cloze.parse_verbalizer(
        value, LABELS, label_of=lambda key: normalize_label(key, "--verbalizer")
    )


def fill_template(template: str, premise: str, hypothesis: str) -> str:
    """The template with premise and hypothesis in place (see cloze.fill_template)."""
    return cloze.fill_template(template, {"premise": premise, "hypothesis": hypothesis})


@dataclass(frozen=True)
class ClozeSetup:
    """How a masked LM is asked: the template, the verbalizer and whether to calibrate."""

    template: str = DEFAULT_TEMPLATE
    verbalizer: str = DEFAULT_VERBALIZER
    calibrate: bool = False


def cloze_predictions(
    scorer: MaskedLMScorer, items: pd.DataFrame, setup: ClozeSetup, *, progress: bool = True
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Label probabilities of each item from the verbalizer words' logits at the mask.

    Returns the predictions and a record for the manifest: the verbalizer's token ids, the
    content-free label distribution when calibrating, how much of the whole-vocabulary
    probability the verbalizer words hold on average, and how many prompts were too long for
    the model (cut to a window around the mask: the premise loses its start).
    """
    template = check_template(setup.template)
    words = parse_verbalizer(setup.verbalizer)
    vocab_ids = cloze.verbalizer_token_ids(scorer, words)
    prompts = [fill_template(template, p, h) for p, h in zip(items["premise"], items["hypothesis"])]
    probs, mass = cloze.verbalizer_probs(scorer, prompts, vocab_ids, progress, cut_to_fit=True)
    record: dict[str, Any] = {
        "template": template,
        "verbalizer": words,
        "verbalizer_token_ids": dict(zip(LABELS, map(int, vocab_ids))),
        "mean_verbalizer_probability": float(np.mean(mass)) if len(mass) else None,
        "prompts_cut_to_fit": scorer.last_cut,
        "max_tokens": int(scorer.max_tokens),
    }
    if setup.calibrate:
        free = [fill_template(template, text, text) for text in CONTENT_FREE]
        content_free, _ = cloze.verbalizer_probs(scorer, free, vocab_ids, False)
        prior = content_free.mean(axis=0)
        probs = probs / prior
        probs = probs / probs.sum(axis=1, keepdims=True)
        record["content_free_inputs"] = free
        record["content_free_distribution"] = dict(zip(LABELS, map(float, prior)))
    table = _prediction_table(items["item_id"], probs)
    table["prompt"] = prompts
    return table, record


def _prediction_table(item_ids: Sequence[str], probs: np.ndarray) -> pd.DataFrame:
    """item_id, predicted (the most probable label; empty where there are no probabilities)
    and the p_* columns."""
    known = ~np.isnan(probs).any(axis=1)
    predicted = np.full(len(probs), None, dtype=object)
    predicted[known] = np.asarray(LABELS, dtype=object)[probs[known].argmax(axis=1)]
    table = pd.DataFrame({"item_id": list(item_ids), "predicted": predicted})
    for column, values in zip(PROB_COLUMNS, probs.T):
        table[column] = values
    return table


# --- classifier mode --------------------------------------------------------------------------


def label_order(
    id2label: dict[int, str], name: str, label_names: Sequence[str] | None
) -> list[int]:
    """For each of LABELS, the classifier output that means it."""
    names = list(label_names) if label_names else [id2label[i] for i in sorted(id2label)]
    where = f"--label-names of {name}" if label_names else f"{name}'s config (id2label)"
    if len(names) != len(LABELS):
        raise TacitError(
            f"{where}: {len(names)} labels ({', '.join(map(str, names))}); an NLI classifier "
            f"here needs the three {', '.join(LABELS)}"
        )
    try:
        mapped = [normalize_label(n, where) for n in names]
    except TacitError:
        raise TacitError(
            f"{where}: labels {', '.join(map(str, names))} do not name entailment, neutral and "
            "contradiction; give them in output order with --label-names, e.g. "
            "--label-names contradiction,neutral,entailment"
        ) from None
    if sorted(mapped) != sorted(LABELS):
        raise TacitError(f"{where}: labels {', '.join(names)} repeat a class")
    return [mapped.index(label) for label in LABELS]


class NLIClassifier:
    """A sequence classifier trained on NLI, on one device, scoring premise-hypothesis pairs
    in length-sorted batches (each distinct pair once)."""

    def __init__(
        self,
        name_or_path: str,
        *,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "float32",
        batch_size: int = 32,
        label_names: Sequence[str] | None = None,
        compile: bool = False,
    ) -> None:
        self.name = name_or_path
        self.revision = revision
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.tokenizer = load_tokenizer(name_or_path, revision=revision)
        self.model = load_with_head(
            AutoModelForSequenceClassification,
            name_or_path,
            revision,
            resolve_dtype(dtype),
            what="NLI classifier",
            head="classification",
        ).to(self.device)
        self.compiled = compile
        if compile:
            compile_encoder(self.model)
        self.order = label_order(self.model.config.id2label, name_or_path, label_names)
        self.max_tokens = max_tokens(self.model, self.tokenizer)

    def predictions(
        self, items: pd.DataFrame, *, progress: bool = True
    ) -> tuple[pd.DataFrame, dict[str, Any]]:
        """Label probabilities of each item. A pair too long for the model loses the end of its
        premise (the hypothesis stays whole); such pairs are counted."""
        pairs = pd.MultiIndex.from_arrays([items["premise"], items["hypothesis"]])
        codes, unique = pd.factorize(pairs)
        premises = [p for p, _ in unique]
        hypotheses = [h for _, h in unique]
        encoded = self.tokenizer(premises, hypotheses, return_length=True)
        too_long = np.asarray(encoded["length"], dtype=np.int64) > self.max_tokens
        if too_long.any():
            encoded = self.tokenizer(
                premises, hypotheses, truncation="only_first", max_length=self.max_tokens,
                return_length=True,
            )  # fmt: skip
        probs = torch.empty((len(unique), len(LABELS)), dtype=torch.float64, device=self.device)
        columns = torch.as_tensor(self.order, device=self.device)

        def classify(chunk: np.ndarray) -> torch.Tensor:
            batch = self.tokenizer.pad(
                {key: [encoded[key][i] for i in chunk] for key in encoded if key != "length"},
                return_tensors="pt",
            )
            batch = {k: v.to(self.device) for k, v in batch.items()}
            with compile_errors_explained(self.compiled, self.name, self.device):
                return self.model(**batch).logits.double()

        with (
            torch.inference_mode(),
            tqdm(total=len(unique), desc=f"classifying {self.name}", unit="pair",
                 disable=not progress) as bar,
        ):  # fmt: skip
            for chunk, logits in longest_first_batches(encoded["length"], self, classify):
                probs[torch.as_tensor(chunk, device=self.device)] = torch.softmax(logits, -1)[
                    :, columns
                ]
                bar.update(len(chunk))
        table = _prediction_table(items["item_id"], probs.cpu().numpy()[codes])
        record = {
            "labels": {label: self.model.config.id2label.get(i, str(i))
                       for label, i in zip(LABELS, self.order)},
            "truncated_pairs": int(too_long[codes].sum()),
            "max_tokens": int(self.max_tokens),
        }  # fmt: skip
        return table, record


def model_kind(name_or_path: str, revision: str | None = None) -> str:
    """`classifier` for a sequence-classification checkpoint, else `cloze` (a masked LM)."""
    from transformers import AutoConfig

    try:
        with quiet_transformers():
            config = AutoConfig.from_pretrained(name_or_path, revision=revision)
    except (OSError, ValueError) as err:
        raise TacitError(f"cannot load {name_or_path!r}: {first_line(err)}") from err
    architectures = getattr(config, "architectures", None) or []
    if any(a.endswith("ForSequenceClassification") for a in architectures):
        return "classifier"
    return "cloze"


# --- released predictions ---------------------------------------------------------------------


def prediction_runs(path: str | Path, suite: str) -> list[tuple[str, list[Path]]]:
    """(seed name, files) for a predictions file, a folder of files, or a folder of seed
    folders. In a folder, the files named after the suite (`nope_*.jsonl`) are taken, or every
    `.jsonl` file when none is."""
    path = Path(path)
    if path.is_file():
        return [(path.stem, [path])]
    if not path.is_dir():
        raise TacitError(f"--predictions {path}: no such file or folder")

    def files_in(folder: Path) -> list[Path]:
        files = sorted(folder.glob("*.jsonl"))
        named = [f for f in files if f.name.lower().startswith(suite)]
        return named or files

    if files_in(path):
        return [(path.name, files_in(path))]
    seeds = [(d.name, files_in(d)) for d in sorted(path.iterdir()) if d.is_dir() and files_in(d)]
    if not seeds:
        raise TacitError(f"--predictions {path}: no .jsonl prediction files in it or its folders")
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
        raise TacitError(f"{names}: none of its {records} uids names an item in --data")
    table = _prediction_table(items["item_id"], probs)
    table["predicted"] = predicted
    return table, {
        "files": [str(f) for f in files],
        "records": records,
        "records_not_in_data": unmatched,
    }
