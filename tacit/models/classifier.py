"""NLIClassifier: a sequence classifier trained on NLI, scoring premise-hypothesis pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.models.base import progress_bar
from tacit.models.batching import longest_first_batches
from tacit.models.hf_scorer import HFScorer
from tacit.pragmatics.labels import LABELS, normalize_label


def label_order(
    id2label: dict[int, str], name: str, label_names: Sequence[str] | None
) -> list[int]:
    """For each of LABELS, the classifier output that means it."""
    names = list(label_names) if label_names else [id2label[i] for i in sorted(id2label)]
    where = f"{option('--label-names')} of {name}" if label_names else f"{name}'s config (id2label)"
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
            f"contradiction; give them in output order with {option('--label-names')}, e.g. "
            f"{option('--label-names')} contradiction,neutral,entailment"
        ) from None
    if sorted(mapped) != sorted(LABELS):
        raise TacitError(f"{where}: labels {', '.join(names)} repeat a class")
    return [mapped.index(label) for label in LABELS]


class NLIClassifier(HFScorer):
    """A sequence classifier trained on NLI, on one device, scoring premise-hypothesis pairs
    in length-sorted batches (each distinct pair once)."""

    kind = "classifier"
    capabilities = frozenset({"classify"})
    auto_class = AutoModelForSequenceClassification
    head = "classification"

    def __init__(
        self, name_or_path: str, *, label_names: Sequence[str] | None = None, **runtime
    ) -> None:
        super().__init__(name_or_path, **runtime)
        labels = self.model.config.id2label or {}
        self.id2label = {int(i): str(label) for i, label in labels.items()}
        self.order = label_order(self.id2label, name_or_path, label_names)

    def check_tokenizer(self) -> None:
        """Any tokenizer that encodes pairs will do (every transformers tokenizer does)."""

    def _classify(
        self, premises: list[str], hypotheses: list[str], progress: bool | tqdm
    ) -> tuple[np.ndarray, np.ndarray]:
        """[pairs x LABELS] probabilities in LABELS order, and which pairs were too long for the
        model (they lose the end of their premise; the hypothesis stays whole)."""
        pairs = pd.MultiIndex.from_arrays([premises, hypotheses])
        codes, unique = pd.factorize(pairs)
        firsts = [p for p, _ in unique]
        seconds = [h for _, h in unique]
        encoded = self.tokenizer(firsts, seconds, return_length=True)
        too_long = np.asarray(encoded["length"], dtype=np.int64) > self.max_tokens
        if too_long.any():
            encoded = self.tokenizer(
                firsts,
                seconds,
                truncation="only_first",
                max_length=self.max_tokens,
                return_length=True,
            )
        probs = torch.empty((len(unique), len(LABELS)), dtype=torch.float64, device=self.device)
        columns = torch.as_tensor(self.order, device=self.device)

        def classify(chunk: np.ndarray) -> torch.Tensor:
            batch = self.tokenizer.pad(
                {key: [encoded[key][i] for i in chunk] for key in encoded if key != "length"},
                return_tensors="pt",
            )
            on_device = {k: v.to(self.device) for k, v in batch.items()}
            with self.runtime.compile_errors():
                return self.model(**on_device).logits.double()

        with (
            progress_bar(progress, len(unique), f"classifying {self.name}", "pair") as bar,
            torch.inference_mode(),
        ):
            for chunk, logits in longest_first_batches(encoded["length"], self, classify):
                probs[torch.as_tensor(chunk, device=self.device)] = torch.softmax(logits, -1)[
                    :, columns
                ]
                bar.update(len(chunk))
        return probs.cpu().numpy()[codes], too_long[codes]

    def labels_record(self) -> dict[str, str]:
        """Which of the model's outputs stands for which label, for the manifest."""
        return {label: self.id2label.get(i, str(i)) for label, i in zip(LABELS, self.order)}
