"""The structure probe by scoring: one pass per prompt, every feature word read off its blank's
distribution, against one prompt per feature word, with the same numbers.

A roberta-base-shaped masked LM with random weights (the compute of the real one) on the real
roberta-base tokenizer; the first N CSLB concepts, every relation of elicitation's templates
with a one-word feature in the shared vocabulary. Ours: tacit.ranking.rank with every feature
word of the prompt's relation as its anchors (what `probe structure` asks). The usual way: each
(prompt, word) pair its own masked sentence, batched, its word's log-probability read from the
log-softmax at the mask. Both take turns (--repeats rounds, fastest kept); every score must agree
to 1e-4 nats.

Run: `python bench/bench_structure_scoring.py` (or `--quick`: a tiny model, 2 concepts). Writes
bench/results/structure_scoring.json, whose `table` docs/probes/structure.md renders.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from bench_retrieve import SHARED, build_model
from transformers import AutoModelForMaskedLM, AutoTokenizer

from tacit.core.options import RunOptions
from tacit.models.resolved import load_scorer
from tacit.norms import load_norms
from tacit.ranking import Question, SharedVocabulary, rank
from tacit.vocab.shared import build_vocabulary

RESULTS = Path(__file__).resolve().parent / "results" / "structure_scoring.json"


def prompts_and_words(vocab, concepts: int):
    """The probe's own prompts and words (tacit.probes.structure.scoring) for the first
    `concepts` CSLB concepts."""
    from types import SimpleNamespace

    from tacit.probes.structure.scoring import scored_features, scoring_prompts
    from tacit.templates import load_templates

    norms = load_norms(SHARED / "cslb" / "norms.dat")
    templates = load_templates()
    ask = SimpleNamespace(has=lambda word: word in vocab)
    features = scored_features(norms, templates.chosen_relations(None), ask)  # type: ignore[arg-type]
    prompts = scoring_prompts(list(norms.concepts)[:concepts], features, templates)
    return prompts, features


def ours(scorer, vocab, prompts, features):
    words = [features.words[r] for r in prompts["relation"]]
    question = Question(list(prompts["prompt"]), [[vocab.index(w) for w in ws] for ws in words], 1)
    ranking = rank(scorer, question, SharedVocabulary(vocab), progress=False)
    return [ranking.score[i, : len(ws)] for i, ws in enumerate(words)]


def usual(model, tokenizer, prompts, features, batch: int = 32):
    """Each (prompt, word) its own sentence: the pass of its prompt, again for every word."""
    pairs = [
        # the word in its in-sentence form (`Ġkeys`): the mask takes the space before it
        (p.replace(" <mask>", tokenizer.mask_token), tokenizer.convert_tokens_to_ids(f"Ġ{w}"))
        for p, r in zip(prompts["prompt"], prompts["relation"])
        for w in features.words[r]
    ]
    found = []
    with torch.inference_mode():
        for start in range(0, len(pairs), batch):
            chunk = pairs[start : start + batch]
            encoded = tokenizer([t for t, _ in chunk], return_tensors="pt", padding=True)
            logits = model(**encoded).logits
            at = (encoded["input_ids"] == tokenizer.mask_token_id).nonzero()
            logs = torch.log_softmax(logits[at[:, 0], at[:, 1]].double(), dim=-1)
            found += logs[torch.arange(len(chunk)), torch.tensor([i for _, i in chunk])].tolist()
    out, n = [], 0
    for r in prompts["relation"]:
        k = len(features.words[r])
        out.append(np.array(found[n : n + k]))
        n += k
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concepts", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a tiny model")
    args = parser.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    shape = "tiny" if args.quick else "roberta-base"
    with tempfile.TemporaryDirectory() as folder:
        path = build_model(SHARED / "tokenizers" / "roberta-base", shape, Path(folder))
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForMaskedLM.from_pretrained(path).eval()
        scorer = load_scorer(path, RunOptions(quiet=True, device="cpu"))
        vocab = build_vocabulary({path: scorer.tokenizer})
        prompts, features = prompts_and_words(vocab, args.concepts)
        best = {"ours": float("inf"), "usual": float("inf")}
        for _ in range(args.repeats):
            start = time.perf_counter()
            a = ours(scorer, vocab, prompts, features)
            best["ours"] = min(best["ours"], time.perf_counter() - start)
            start = time.perf_counter()
            b = usual(model, tokenizer, prompts, features)
            best["usual"] = min(best["usual"], time.perf_counter() - start)
        gap = max(float(np.abs(x - y).max()) for x, y in zip(a, b))
        assert gap < 1e-4, f"the two ways disagree by {gap} nats"
    words = sum(len(features.words[r]) for r in prompts["relation"])
    result = {
        "table": [
            {
                "model": f"{shape} (random weights), {args.concepts} CSLB concepts",
                "prompts": len(prompts),
                "feature words read": words,
                "one pass per prompt (s)": round(best["ours"], 3),
                "one prompt per feature word (s)": round(best["usual"], 3),
                "ratio": round(best["usual"] / best["ours"], 1),
                "largest difference (nats)": float(f"{gap:.2g}"),
            }
        ],
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), torch {torch.__version__}",
        "command": "python bench/bench_structure_scoring.py" + (" --quick" if args.quick else ""),
        "date": datetime.date.today().isoformat(),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["table"], indent=2))


if __name__ == "__main__":
    main()
