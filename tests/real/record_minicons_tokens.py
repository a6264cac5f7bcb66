"""Record minicons' per-token and per-word scores of the real models, for
tests/real/test_real_surprisal.py.

    pip install minicons
    TACIT_REAL_MODELS=all python tests/real/record_minicons_tokens.py

writes tests/real/minicons_tokens.json: for each selected real model (support_real, fetched and
cached as the tests do), minicons' `IncrementalLMScorer(folder, device="cpu")` run on
support_real.TEXTS:

- `token_score(texts, bos_token=...)`: each text's (token, log-probability) pairs as minicons
  returns them, its first (the start token, which it does not score: 0.0) included;
- `word_score_tokenized(texts, tokenize_function=str.split, bos_token=...)`: each text's
  (word, log-probability) pairs;

with the versions that made it. `bos_token` as record_minicons.py sets it (DESIGN.md's rule:
True where the tokenizer adds no start token of its own). Models already in the file and not
selected keep their entry.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "minicons_tokens.json"


def minicons_runs(directory: Path, bos_token: bool) -> tuple[list, list]:
    """minicons' (token, score) and (word, score) pairs of each text of TEXTS."""
    from minicons import scorer
    from support_real import TEXTS

    lm = scorer.IncrementalLMScorer(str(directory), device="cpu")
    tokens = lm.token_score(TEXTS, bos_token=bos_token)
    words = lm.word_score_tokenized(TEXTS, tokenize_function=str.split, bos_token=bos_token)
    as_lists = [[[str(unit), float(score)] for unit, score in text] for text in tokens]
    return as_lists, [[[str(w), float(score)] for w, score in text] for text in words]


def main() -> None:
    import torch
    from record_minicons import adds_its_own_start
    from support_real import MODELS, TEXTS, checkpoint, selected

    torch.set_num_threads(1)
    record = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {"models": {}}
    record.update(
        made_by="python tests/real/record_minicons_tokens.py",
        versions={p: version(p) for p in ("minicons", "transformers", "torch")},
        texts=TEXTS,
    )
    for model in MODELS.values():
        if not selected(model):
            continue
        real = checkpoint(model)
        bos_token = not adds_its_own_start(real.directory)
        tokens, words = minicons_runs(real.directory, bos_token)
        record["models"][model.name] = {
            "gguf": model.gguf_name,
            "gguf_sha256": model.sha256,
            "bos_token": bos_token,
            "token_call": f"token_score(texts, bos_token={bos_token})",
            "word_call": (
                f"word_score_tokenized(texts, tokenize_function=str.split, bos_token={bos_token})"
            ),
            "tokens": tokens,
            "words": words,
        }
        print(f"{model.name}: {len(TEXTS)} texts, bos_token={bos_token}")
    OUT.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path[:0] = [str(HERE.parent), str(HERE)]  # tests/: support.py, support_real.py
    main()
