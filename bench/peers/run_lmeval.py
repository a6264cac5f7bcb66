"""lm-evaluation-harness (EleutherAI) on a bench_peers.py causal job: `HFLM.loglikelihood_rolling`
over the sentences, log P(sentence) with the first token conditioned on the model's prefix token
(`<|endoftext|>` for GPT-2-style tokenizers, tacit's causal score; DESIGN.md), `batch_size`
requests a batch in the job's order, as `lm_eval --model hf` runs a task's rolling requests."""

from __future__ import annotations

from common import read_job, timed, write_result
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM


def main() -> None:
    job = read_job()
    assert job["kind"] == "causal", "lm-evaluation-harness scores causal models only"
    lm, load_s = timed(
        lambda: HFLM(pretrained=job["model"], device="cpu", batch_size=job["batch_size"])
    )
    requests = [
        Instance("loglikelihood_rolling", doc={}, arguments=(s,), idx=i)
        for i, s in enumerate(job["sentences"])
    ]
    scores, score_s = timed(lambda: lm.loglikelihood_rolling(requests, disable_tqdm=True))
    write_result("lm_eval", scores, load_s, score_s)


if __name__ == "__main__":
    main()
