"""What generation cost, in the model's manifest record: a probe's work that generates puts
tacit.models.answers.generation_counts in its chunks' counts, and the runner adds them up per
model, as it adds up every count (the pattern the generation probes follow); a rerun with
`--cache` counts its requests as cached and runs none."""

from __future__ import annotations

import pandas as pd
from support import with_chat_template

import tacit
from tacit.ask.base import Scored, Work
from tacit.engine.runner import run_models
from tacit.models.answers import GenerationRequest, Sampling, generation_counts
from tacit.models.base import Needs
from tacit.models.resolved import resolved_models

QUESTIONS = ["Which animal has fur?", "Name a tool.", "Hi", "Name a tool."]


def generating_work() -> Work:
    rows = pd.DataFrame({"question": QUESTIONS})

    def score(scorer, chunk: pd.DataFrame, bar) -> Scored:
        asked = [GenerationRequest.chat([{"role": "user", "content": q}]) for q in chunk.question]
        answers = scorer.generate(asked, Sampling(max_tokens=3, n=2), progress=False)
        table = chunk.assign(answer=[a[0].text for a in answers])
        return Scored(table, generation_counts(answers, asked))

    return Work(rows, "question", score, Needs.of("generate"), unit="request")


def test_the_record_counts_requests_and_tokens(tiny_gpt2, tmp_path):
    model = with_chat_template(tiny_gpt2, tmp_path / "instruct")
    options = tacit.RunOptions(quiet=True, cache=str(tmp_path / "cache"))
    models = resolved_models([model], options)
    table, (record,) = run_models(models, options, generating_work(), probe="generation test")
    assert len(table) == len(QUESTIONS)
    assert record["generation_requests"] == 3  # a repeated question is asked once
    assert record["generation_completion_tokens"] == 3 * 2 * 3
    assert record["generation_prompt_tokens"] > 0 and "generation_cached" not in record  # 0
    _, (again,) = run_models(models, options, generating_work(), probe="generation test")
    assert again["generation_cached"] == 3
    assert "generation_requests" not in again and "generation_completion_tokens" not in again
    assert again["cache"]["found"] == 3
