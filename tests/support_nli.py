"""Small samples of IMPPRES, NOPE and IMPLI in their published formats, written by the tests,
and tiny NLI models (a masked LM that knows Yes / Maybe / No, and a sequence classifier)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import torch
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertTokenizerFast,
)

from tacit.probes.pragmeval.frozen import CLOZE_DEFAULTS

CONDITIONS = {
    "unembedded": "{s}.",
    "negated": "it is not true that {s}.",
    "interrogative": "did {s}?",
    "modal": "maybe {s}.",
    "conditional": "if {s}, it is okay.",
}
NLI_WORDS = [
    "Yes",
    "Maybe",
    "No",
    "the",
    "a",
    "cat",
    "dog",
    "John",
    "Mary",
    "left",
    "ran",
    "saw",
    "is",
    "was",
    "not",
    "true",
    "that",
    "it",
    "did",
    "maybe",
    "if",
    "okay",
    "some",
    "all",
    "teenagers",
    "run",
    "N",
    "/",
    "A",
    "used",
    "to",
    "be",
    "there",
    ".",
    ",",
    "?",
    "!",
    ":",
    ";",
    "'",
    "-",
    "idea",
    "ball",
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def imppres_presupposition(trigger: str, paradigms: int = 2) -> list[dict]:
    """IMPPRES's layout: per paradigm 15 test items (5 conditions x positive / negated /
    neutral presupposition) then 4 control items, pairIDs numbered through the file."""
    records, pair = [], 0
    for paradigm in range(paradigms):
        s = f"{['John', 'Mary'][paradigm % 2]} saw the cat"
        for condition, frame in CONDITIONS.items():
            for presupposition, gold, hypothesis in (
                ("positive", "entailment", "the cat was there."),
                ("negated", "contradiction", "the cat was not there."),
                ("neutral", "neutral", "the dog was there."),
            ):
                records.append(
                    {
                        "sentence1": frame.format(s=s),
                        "sentence2": hypothesis,
                        "trigger": condition,
                        "presupposition": presupposition,
                        "gold_label": gold,
                        "UID": trigger,
                        "pairID": f"{pair}{gold[0]}",
                        "paradigmID": paradigm,
                    }
                )
                pair += 1
        for condition in ("negated", "interrogative", "modal", "conditional"):
            gold = "contradiction" if condition == "negated" else "neutral"
            records.append(
                {
                    "sentence1": CONDITIONS[condition].format(s=s),
                    "sentence2": f"{s}.",
                    "trigger1": condition,
                    "trigger2": "unembedded",
                    "gold_label": gold,
                    "control_item": True,
                    "UID": trigger,
                    "pairID": f"{pair}{gold[0]}",
                    "paradigmID": paradigm,
                }
            )
            pair += 1
    return records


def imppres_implicature() -> list[dict]:
    rows = [
        ("some teenagers run.", "not all teenagers run.", "neutral", "entailment", "target"),
        ("some teenagers run.", "all teenagers run.", "neutral", "contradiction", "target"),
        ("all teenagers run.", "some teenagers run.", "entailment", "contradiction", "target"),
        (
            "all teenagers run.",
            "not all teenagers run.",
            "contradiction",
            "contradiction",
            "control",
        ),
    ]
    return [
        {
            "sentence1": p,
            "sentence2": h,
            "gold_label_log": log,
            "gold_label_prag": prag,
            "spec_relation": "implicature" if kind == "target" else "negation",
            "item_type": kind,
            "trigger": "quantifier",
            "lexemes": "some - all",
        }
        for p, h, log, prag, kind in rows
    ]


def write_imppres(root: Path) -> Path:
    write_jsonl(
        root / "presupposition" / "change_of_state.jsonl", imppres_presupposition("change_of_state")
    )
    write_jsonl(
        root / "presupposition" / "cleft_existence.jsonl", imppres_presupposition("cleft_existence")
    )
    write_jsonl(root / "implicature" / "quantifiers.jsonl", imppres_implicature())
    return root


def nope_record(
    uid: str,
    label: str,
    kind: str,
    *,
    adv: bool = False,
    original_negated=False,
    trigger="clefts",
    labels="EEEEN",
    ratings=(90, 80, 100, 70, 20),
) -> dict:
    premise = "John saw the cat." if kind == "original" else "John did not see the cat."
    return {
        "uid": uid,
        "premise": premise,
        "hypothesis": "the cat was there.",
        "label": label,
        "metadata": {
            "type": kind,
            "adversarial": adv,
            "original_negated": original_negated,
            "trigger_type": trigger,
            "nli_labels": list(labels),
            "ratings": list(ratings),
        },
    }


def write_nope(root: Path) -> Path:
    main = [
        nope_record("1", "E", "original"),
        nope_record("1-neg", "E", "negated"),
        nope_record("2", "E", "original", trigger="re_verbs"),
        nope_record("2-neg", "N", "negated", trigger="re_verbs", labels="NNNEC"),
        # the corpus sentence was negated: its "negated" version is the affirmative one
        nope_record("3", "N", "original", original_negated=True, labels="NNNNE"),
        nope_record("3-neg", "E", "negated", original_negated=True),
    ]
    adv = [
        nope_record("1-adv", "C", "original", adv=True, labels="CCCNN"),
        nope_record("1-neg-adv", "N", "negated", adv=True, labels="NNNCC"),
    ]
    write_jsonl(root / "nli_corpus.main.jsonl", main)
    write_jsonl(root / "nli_corpus.adv.jsonl", adv)
    return root


def write_impli(root: Path) -> Path:
    (root / "idioms").mkdir(parents=True, exist_ok=True)
    (root / "metaphors").mkdir(parents=True, exist_ok=True)
    premise = "John saw the ball."
    (root / "idioms" / "manual_e.tsv").write_text(f"{premise}\tJohn saw it.\n", encoding="utf-8")
    (root / "idioms" / "manual_ne.tsv").write_text(
        f"{premise}\tMary saw it.\n{premise}\tthe dog ran.\n", encoding="utf-8"
    )
    (root / "idioms" / "fig_context_pie_e.tsv").write_text(
        "the cat ran.\tthe cat left.\t\n", encoding="utf-8"
    )
    # cp1252, as metaphors/replacement_tsvetkov_e.tsv is published: curly quotes are 0x93/0x94
    (root / "metaphors" / "replacement_tsvetkov_e.tsv").write_bytes(
        "the \u201cidea\u201d ran.\tthe idea left.\n".encode("cp1252")
    )
    return root


def nli_tokenizer(directory: Path, words: list[str] = NLI_WORDS) -> BertTokenizerFast:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    directory.mkdir(parents=True, exist_ok=True)
    vocab = directory / "vocab.txt"
    words = list(dict.fromkeys(words))
    vocab.write_text("\n".join(specials + words) + "\n")
    tokenizer = BertTokenizerFast(vocab=str(vocab), do_lower_case=False)
    assert len(tokenizer) == len(specials) + len(words)
    return tokenizer


def _config(tokenizer, **extra) -> BertConfig:
    return BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
        **extra,
    )


def save_nli_masked_lm(directory: Path, seed: int = 0, words: list[str] = NLI_WORDS) -> str:
    tokenizer = nli_tokenizer(directory, words)
    torch.manual_seed(seed)
    BertForMaskedLM(_config(tokenizer)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def save_nli_classifier(directory: Path, id2label: dict[int, str], seed: int = 0) -> str:
    tokenizer = nli_tokenizer(directory)
    torch.manual_seed(seed)
    config = _config(
        tokenizer,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


# --- PragmEval: every configuration in its published layout, as a separable toy task ---------

PAIR = ["Emergent", "GUM", "PDTB", "STAC", "Sarcasm"] + [
    f"Persuasiveness-{d}"
    for d in ("ClaimType", "Eloquence", "PremiseType", "Relevance", "Specificity", "Strength")
]
SINGLE = (
    ["MRDA", "SwitchBoard", "Verifiability"]
    + [f"EmoBank-{d}" for d in ("Arousal", "Dominance", "Valence")]
    + [f"Squinky-{d}" for d in ("Formality", "Implicature", "Informativeness")]
)
CUES = ["good", "bad", "calm"]  # each label's rows carry one cue word: a separable toy task
VERBALIZER_WORDS = sorted({w for _, words in CLOZE_DEFAULTS.values() for w in words.values()})
PRAGMEVAL_WORDS = (
    NLI_WORDS
    + CUES
    + VERBALIZER_WORDS
    + ["This", "claim", "about", "argument", "That", "I", "feel", "The", "style", "It", "meant"]
)


def labels_of(config: str) -> list[str]:
    if config in CLOZE_DEFAULTS:
        return list(CLOZE_DEFAULTS[config][1])
    return ["Statement", "Hold Before Answer/Agreement", "Reject"]  # spaces and a slash


def write_config(root, config, sizes=(40, 20, 20), seed=0):
    rng = np.random.default_rng(seed)
    labels = labels_of(config)
    folder = root / config
    folder.mkdir(parents=True)
    (folder / "labels").write_text("\n".join(labels) + "\n")
    pair = config in PAIR
    for split, n in zip(("train", "dev", "test"), sizes):
        with open(folder / f"{split}.tsv", "w", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t")
            writer.writerow(["sentence1", "sentence2", "label"] if pair else ["sentence", "label"])
            for i in range(n):
                k = i % len(labels)
                noun = rng.choice(["cat", "dog", "idea", "ball"])
                text = f'the {noun} was {CUES[k]} , "John" said .'
                writer.writerow(
                    [text, f"the {noun} ran ."] + [labels[k]] if pair else [text, labels[k]]
                )
    return folder


def write_pragmeval(root: Path) -> Path:
    """All 20 PragmEval configurations, small, each label's rows carrying one cue word."""
    for config in PAIR + SINGLE:
        write_config(root, config)
    return root
