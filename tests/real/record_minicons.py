"""Record minicons' sentence scores of the real models, for tests/real/test_real_spans.py.

    pip install minicons
    TACIT_REAL_MODELS=all python tests/real/record_minicons.py

writes tests/real/minicons.json: for each selected real model (support_real, fetched and
cached as the tests do), minicons' `IncrementalLMScorer(folder, device="cpu")
.sequence_score(sentences, bos_token=..., reduction=sum)` of each span of support_real.SPANS in
each template of support_real.TEMPLATES, with the versions that made it. `bos_token` follows
DESIGN.md's rule for comparing with minicons: True where the tokenizer adds no start token of
its own (minicons then puts the tokenizer's BOS first, as tacit does), False where it adds its
BOS itself (minicons' default then starts from it). Models already in the file and not
selected keep their entry.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "minicons.json"
BATCH = 8


def minicons_scores(directory: Path, bos_token: bool) -> list[float]:
    """minicons' log-probability of each sentence (TEMPLATES x SPANS, row by row)."""
    from minicons import scorer
    from support import sentence_of
    from support_real import SPANS, TEMPLATES

    lm = scorer.IncrementalLMScorer(str(directory), device="cpu")
    sentences = [sentence_of(t, s)[0] for t in TEMPLATES for s in SPANS]
    out: list[float] = []
    for first in range(0, len(sentences), BATCH):
        batch = sentences[first : first + BATCH]
        out += lm.sequence_score(batch, bos_token=bos_token, reduction=lambda x: x.sum(0).item())
    return out


def adds_its_own_start(directory: Path) -> bool:
    """Does the tokenizer put its BOS before a text by itself?"""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    ids = tokenizer("A bear")["input_ids"]
    return tokenizer.bos_token_id is not None and ids[0] == tokenizer.bos_token_id


def main() -> None:
    import torch
    from support import sentence_of
    from support_real import MODELS, SPANS, TEMPLATES, checkpoint, selected

    torch.set_num_threads(1)
    record = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {"models": {}}
    record.update(
        made_by="python tests/real/record_minicons.py",
        versions={p: version(p) for p in ("minicons", "transformers", "torch")},
        sentences=[sentence_of(t, s)[0] for t in TEMPLATES for s in SPANS],
    )
    for model in MODELS.values():
        if not selected(model):
            continue
        real = checkpoint(model)
        bos_token = not adds_its_own_start(real.directory)
        record["models"][model.name] = {
            "gguf": model.gguf_name,
            "gguf_sha256": model.sha256,
            "call": f"sequence_score(sentences, bos_token={bos_token}, reduction=sum)",
            "bos_token": bos_token,
            "scores": minicons_scores(real.directory, bos_token),
        }
        print(f"{model.name}: {len(record['sentences'])} sentences, bos_token={bos_token}")
    OUT.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path[:0] = [str(HERE.parent)]  # tests/: support.py, support_real.py
    main()
