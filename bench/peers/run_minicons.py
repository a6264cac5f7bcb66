"""minicons (kanishkamisra/minicons) on a bench_peers.py job, as its documentation shows it used.

- causal: `IncrementalLMScorer.sequence_score(sentences, bos_token=True)` summed over tokens:
  log P(sentence) with the first token conditioned on `<|endoftext|>`, tacit's causal score for
  GPT-2-style tokenizers (DESIGN.md); batches of `batch_size` sentences in the job's order.
- masked: `MaskedLMScorer.sequence_score(sentences)` summed: the sentence's pseudo-log-
  likelihood (PLL, minicons' default `original`: each token masked alone), a different quantity
  from tacit's span scores. minicons expands a call's sentences into one row per token in one
  forward pass, so each call gets as many sentences as make about `batch_size` rows.
"""

from __future__ import annotations

from common import read_job, timed, write_result
from minicons import scorer


def main() -> None:
    job = read_job()
    sentences, size = job["sentences"], job["batch_size"]
    if job["kind"] == "causal":
        lm, load_s = timed(lambda: scorer.IncrementalLMScorer(job["model"], device="cpu"))
        options = {"bos_token": True}
    else:
        lm, load_s = timed(lambda: scorer.MaskedLMScorer(job["model"], device="cpu"))
        options = {}
        tokens = sum(len(ids) - 2 for ids in lm.tokenizer(sentences)["input_ids"])
        size = max(1, round(size * len(sentences) / tokens))

    def score() -> list[float]:
        out: list[float] = []
        for first in range(0, len(sentences), size):
            batch = sentences[first : first + size]
            out += lm.sequence_score(batch, reduction=lambda x: x.sum(0).item(), **options)
        return out

    scores, score_s = timed(score)
    write_result("minicons", scores, load_s, score_s, sentences_per_call=size)


if __name__ == "__main__":
    main()
