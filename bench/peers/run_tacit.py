"""tacit on a bench_peers.py job, and its floor: the same forward passes, bare.

- causal: `CausalLMScorer.score_spans` (the sentence's log-probability, `sentence`);
- masked: `MaskedLMScorer.score_spans` with the job's `scoring` (`l2r` or `independent`; the
  span's own log-probability, `span`).

The floor (floor.py): tacit's calls to its model during the job, recorded and after the job run
again bare in the same process. `floor_s` is that replay's time; bench_peers.py subtracts it
from this process's wall time, which is otherwise the user's job alone.
"""

from __future__ import annotations

from common import read_job, timed, write_result
from floor import recording, replay

from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer


def main() -> None:
    job = read_job()
    causal = job["kind"] == "causal"
    kind = CausalLMScorer if causal else MaskedLMScorer
    scorer, load_s = timed(lambda: kind(job["model"], device="cpu", batch_size=job["batch_size"]))
    calls = recording(scorer)
    options = {} if causal else {"scoring": job.get("scoring", "l2r")}
    got, score_s = timed(
        lambda: scorer.score_spans(job["templates"], job["spans"], progress=False, **options)
    )
    floor_s = replay(scorer, calls)
    scores = got.sentence if causal else got.span
    write_result(
        "tacit",
        scores.reshape(-1).tolist(),
        load_s,
        score_s,
        floor_s=floor_s,
        calls=len(calls),
        work=dict(got.work),
    )


if __name__ == "__main__":
    main()
