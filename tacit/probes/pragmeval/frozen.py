"""PragmEval with a frozen model: linear probes on its representations, or zero-shot cloze.

Linear mode encodes each text once (the hidden state at the `<mask>` of a template, or the mean
over tokens), caches the features per model, configuration and split, and fits a scikit-learn
logistic regression whose regularisation is chosen on dev. Cloze mode asks a template with a
verbalizer per configuration (2 or 3 labels) and takes the label whose word scores highest.
Neither fine-tunes: these measure what the frozen model already encodes.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from tacit.ask import cloze
from tacit.core.cache import DiskCache, fingerprint
from tacit.core.errors import TacitError
from tacit.core.files import sha256_bytes
from tacit.core.option_names import option
from tacit.models.base import Scorer
from tacit.pragmatics.pragmeval import Config, metric_of

FEATURE_TEMPLATES = {
    ("sentence1", "sentence2"): "{sentence1} <mask> {sentence2}",
    ("sentence",): "{sentence} <mask>",
}
C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0)  # inverse regularisation strengths tried on dev

# Zero-shot cloze: a template and one single-token word per label (checked against the real
# bert-base-cased and roberta-base tokenizers). Overridable with --template / --verbalizer.
CLOZE_DEFAULTS: dict[str, tuple[str, dict[str, str]]] = {
    "Emergent": (
        "{sentence1}? <mask>, {sentence2}",
        {"for": "Yes", "observing": "Maybe", "against": "No"},
    ),
    "EmoBank-Valence": ("{sentence} I feel <mask>.", {"low": "bad", "high": "good"}),
    "EmoBank-Arousal": ("{sentence} I feel <mask>.", {"low": "calm", "high": "excited"}),
    "EmoBank-Dominance": ("{sentence} I feel <mask>.", {"low": "weak", "high": "strong"}),
    "Persuasiveness-ClaimType": (
        "{sentence1} This claim is about <mask>.",
        {"Value": "values", "Fact": "facts", "Policy": "policy"},
    ),
    "Persuasiveness-Eloquence": (
        "{sentence1} {sentence2} This argument is <mask>.",
        {"low": "poor", "high": "good"},
    ),
    "Persuasiveness-Relevance": (
        "{sentence1} {sentence2} This argument is <mask>.",
        {"low": "irrelevant", "high": "relevant"},
    ),
    "Persuasiveness-Specificity": (
        "{sentence1} {sentence2} This argument is <mask>.",
        {"low": "vague", "high": "specific"},
    ),
    "Persuasiveness-Strength": (
        "{sentence1} {sentence2} This argument is <mask>.",
        {"low": "weak", "high": "strong"},
    ),
    "Sarcasm": (
        "{sentence1} {sentence2} That was <mask>.",
        {"notsarc": "sincere", "sarc": "sarcastic"},
    ),
    "Squinky-Formality": ("{sentence} The style is <mask>.", {"low": "informal", "high": "formal"}),
    "Squinky-Implicature": (
        "{sentence} It is meant <mask>.",
        {"low": "literally", "high": "indirectly"},
    ),
    "Squinky-Informativeness": ("{sentence} This is <mask>.", {"low": "vague", "high": "clear"}),
    "Verifiability": (
        "{sentence} This is <mask>.",
        {"experiential": "personal", "unverifiable": "opinion", "non-experiential": "fact"},
    ),
}


def score(metric: str, gold: np.ndarray, predicted: np.ndarray) -> float:
    """Accuracy, or macro-F1 over the labels present in gold or predictions (sklearn's)."""
    from sklearn.metrics import f1_score

    if metric == "macro_f1":
        return float(f1_score(gold, predicted, average="macro"))
    return float(np.mean(gold == predicted))


def texts(config: Config, split: str, template: str) -> list[str]:
    """The split's rows through the template's fields."""
    table = config.splits[split]
    columns = [table[field].tolist() for field in config.fields]
    return [
        cloze.fill_template(template, dict(zip(config.fields, values))) for values in zip(*columns)
    ]


def model_fingerprint(name_or_path: str, resolved_revision: str | None) -> dict[str, Any]:
    """What identifies the weights without reading them: the hub commit, or for a local
    directory each file's name, size and modification time."""
    path = Path(name_or_path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file())
        stamps = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
        return {"path": str(path.resolve()), "files": stamps}
    return {"name": name_or_path, "revision": resolved_revision}


class FeatureCache:
    """Features on disk, one .npy entry per (model, texts, pooling, dtype), in the one cache
    home (tacit.core.cache): a damaged entry is computed again, a cache that cannot be written
    a warning (`unwritten` says why, for the run's record)."""

    def __init__(self, directory: Path, model: dict[str, Any], dtype: str, pooling: str) -> None:
        self.identity = {"model": model, "dtype": dtype, "pooling": pooling}
        self.store: DiskCache[np.ndarray] = DiskCache(
            directory / "features",
            ".npy",
            _npy,
            _features,
            what="features",
            advice=f"give {option('--cache-dir')} a writable directory",
        )

    @property
    def directory(self) -> Path:
        return self.store.directory

    @property
    def hits(self) -> int:
        return self.store.hits

    @property
    def misses(self) -> int:
        return self.store.misses

    @property
    def unwritten(self) -> str | None:
        return self.store.unwritten

    def key(self, text_list: list[str]) -> str:
        return fingerprint(self.identity, sha256_bytes("\n".join(text_list)))[:32]

    def get(self, text_list: list[str], compute: Callable[[], np.ndarray]) -> np.ndarray:
        """The texts' features, from the cache or computed (then cached)."""
        rows = len(text_list)
        return self.store.get(self.key(text_list), compute, lambda f: _usable(f, rows))


def _npy(features: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, features)
    return buffer.getvalue()


def _features(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def _usable(features: np.ndarray, rows: int) -> bool:
    """Is an entry the features of `rows` texts: a float matrix of that many rows (not one cut
    short by a crash or a full disk, damaged, or another file)?"""
    return (
        isinstance(features, np.ndarray)
        and features.ndim == 2
        and features.shape[0] == rows
        and features.dtype.kind == "f"
    )


def read_features(path: Path, rows: int) -> np.ndarray | None:
    """The features of the cache entry at `path` (None: missing or unusable)."""
    try:
        features = _features(path.read_bytes())
    except (OSError, ValueError, EOFError):
        return None
    return features if _usable(features, rows) else None


class FrozenEncoder:
    """Texts -> features through the cache; the model loads only when a feature is missing."""

    def __init__(
        self, model: Any, cache: FeatureCache, pooling: str, progress: bool | tqdm
    ) -> None:
        """`model`: the run's handle of the model (tacit.engine.runner.ModelHandle), whose
        `scorer` loads it on first use."""
        self.model, self.cache, self.pooling, self.progress = model, cache, pooling, progress
        self.cut = 0  # texts cut to fit the model

    def __call__(self, text_list: list[str]) -> np.ndarray:
        computed = False

        def compute() -> np.ndarray:
            nonlocal computed
            states, cut = self.model.scorer.encode(
                text_list, pooling=self.pooling, progress=self.progress
            )
            self.cut, computed = self.cut + cut, True
            return states

        features = self.cache.get(text_list, compute)
        if not computed and isinstance(self.progress, tqdm):
            self.progress.update(len(text_list))  # cached: counts as done at once
        return features


@dataclass(frozen=True)
class ProbeOutcome:
    """One configuration's result: scores, the chosen setting, and test predictions."""

    dev: float
    test: float
    setting: str
    n_train: int
    predicted: np.ndarray
    record: dict[str, Any]


def linear_probe(
    train: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    metric: str,
    seed: int,
) -> ProbeOutcome:
    """Standardise on train, fit a logistic regression per C in C_GRID, keep the best on dev
    (the smallest C among ties: the most regularised), report it on test."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    best: tuple[float, float, Any] | None = None
    dev_scores = {}
    for c in C_GRID:
        model = make_pipeline(
            StandardScaler(), LogisticRegression(C=c, max_iter=2000, random_state=seed)
        )
        model.fit(*train)
        dev_scores[c] = score(metric, dev[1], model.predict(dev[0]))
        if best is None or dev_scores[c] > best[0]:
            best = (dev_scores[c], c, model)
    assert best is not None
    predicted = best[2].predict(test[0])
    return ProbeOutcome(
        dev=best[0],
        test=score(metric, test[1], predicted),
        setting=f"C={best[1]:g}",
        n_train=len(train[1]),
        predicted=predicted,
        record={"dev_scores": {f"{c:g}": v for c, v in dev_scores.items()}},
    )


def texts_to_encode(config: Config, max_train: int | None) -> int:
    """How many texts linear mode encodes for a configuration (for the progress bar)."""
    train = len(config.splits["train"])
    return min(train, max_train or train) + len(config.splits["dev"]) + len(config.splits["test"])


def subsample(n: int, max_train: int | None, seed: int) -> np.ndarray:
    """Row indices of the training set to use: all, or a seeded sample of max_train."""
    if max_train is None or max_train >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=max_train, replace=False))


def linear_config(
    config: Config,
    encode: Callable[[list[str]], np.ndarray],
    template: str,
    max_train: int | None,
    seed: int,
) -> ProbeOutcome:
    """Encode (through the cache) the training rows used, dev and test; probe linearly."""
    keep = subsample(len(config.splits["train"]), max_train, seed)
    data = {}
    for split in ("train", "dev", "test"):
        rows = texts(config, split, template)
        labels = config.splits[split]["label"].to_numpy()
        if split == "train":
            rows, labels = [rows[i] for i in keep], labels[keep]
        data[split] = (encode(rows), labels)
    outcome = linear_probe(data["train"], data["dev"], data["test"], metric_of(config.name), seed)
    return outcome


def cloze_config(
    config: Config,
    scorer: Scorer,
    template: str,
    verbalizer: dict[str, str],
    progress: bool,
) -> ProbeOutcome:
    """Zero-shot: the label whose verbalizer word scores highest at the mask (a causal model:
    in the blank, see cloze.label_probs), on dev and test."""
    tokens = cloze.verbalizer_record(scorer, verbalizer)
    labels = np.asarray(list(verbalizer))
    results, cut = {}, 0
    for split in ("dev", "test"):
        rows = texts(config, split, template)
        probs, mass, cut_here = cloze.label_probs(
            scorer, rows, verbalizer, progress, cut_to_fit=True
        )
        cut += cut_here
        predicted = labels[probs.argmax(axis=1)]
        gold = config.splits[split]["label"].to_numpy()
        results[split] = (score(metric_of(config.name), gold, predicted), predicted, mass)
    return ProbeOutcome(
        dev=results["dev"][0],
        test=results["test"][0],
        setting="zero-shot",
        n_train=0,
        predicted=results["test"][1],
        record={
            "template": template,
            "verbalizer": verbalizer,
            "verbalizer_token_ids": tokens,
            "mean_verbalizer_probability": float(np.mean(results["test"][2])),
            "texts_cut_to_fit": cut,
        },
    )


def cloze_setup(config: Config, template: str | None, verbalizer: str | None) -> tuple[str, dict]:
    """The configuration's template and verbalizer: the defaults, or the user's (checked
    against its fields, of which it may leave some out, and its labels)."""
    default_template, default_words = CLOZE_DEFAULTS.get(config.name, (None, None))
    template = template or default_template
    if template is None or (verbalizer is None and default_words is None):
        raise TacitError(
            f"{config.name}: no default cloze template or verbalizer; give {option('--template')} "
            f"and {option('--verbalizer')}"
        )
    chosen = cloze.check_template(template, config.fields, every_field=False)
    if verbalizer is not None:
        return chosen, cloze.parse_verbalizer(verbalizer, list(config.labels))
    return chosen, dict(default_words or {})


def results_table(outcomes: dict[str, ProbeOutcome]) -> pd.DataFrame:
    """Per configuration: metric, dev and test scores, the chosen setting, training size."""
    return pd.DataFrame(
        [
            {
                "config": name,
                "metric": metric_of(name),
                "dev": o.dev,
                "test": o.test,
                "setting": o.setting,
                "n_train": o.n_train,
                "n_test": len(o.predicted),
            }
            for name, o in outcomes.items()
        ]
    )


def template_for(config: Config, template: str | None, pooling: str = "mask") -> str:
    """The features template of a configuration: the user's, or the default for its fields;
    mean and last-token pooling read the texts alone, joined by a space."""
    if pooling != "mask":
        return " ".join(f"{{{field}}}" for field in config.fields)
    return template or FEATURE_TEMPLATES[config.fields]
