"""lm-pub-quiz (lm-pub-quiz/lm-pub-quiz) on a bench_peers.py job: `Evaluator.from_model` and
`evaluate_instance` per template (`[Y]` in the blank, every span an answer), summed, batches of
`batch_size` rows, as its multiple-choice evaluation scores a relation's answer space.

- masked: its default `within_word_l2r` pseudo-log-likelihood of the whole sentence (each token
  masked with the rest of its word), a different quantity from tacit's span scores;
- causal: log P(sentence) after the BOS it makes sure of (`<|endoftext|>` here), tacit's score.
"""

from __future__ import annotations

from common import BLANK, read_job, timed, write_result
from lm_pub_quiz import Evaluator


def main() -> None:
    job = read_job()
    model_type = "CLM" if job["kind"] == "causal" else "MLM"
    evaluator, load_s = timed(
        lambda: Evaluator.from_model(job["model"], model_type=model_type, device="cpu")
    )

    def score() -> list[float]:
        out: list[float] = []
        for template in job["templates"]:
            out += evaluator.evaluate_instance(
                template=template.replace(BLANK, "[Y]"),
                answers=job["spans"],
                reduction="sum",
                batch_size=job["batch_size"],
            )
        return out

    scores, score_s = timed(score)
    write_result("lm-pub-quiz", scores, load_s, score_s)


if __name__ == "__main__":
    main()
