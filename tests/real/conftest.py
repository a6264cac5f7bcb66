"""Fixtures of the `real` tests: pretrained causal LMs from the package registry
(support_real.py says how they are fetched, checked and cached).

- `smollm2`, `gemma3`: a support_real.Checkpoint (the .gguf file, its float32 folder); a
  model not selected by $TACIT_REAL_MODELS (default: SmolLM2 alone, for CI's time budget)
  skips, saying how to select it;
- `real_checkpoint`: each selected model in turn (a test that takes it runs once per model);
- `real_scorer`: tacit's CausalLMScorer on that model's folder, loaded once per session;
- `real_plain`: the same folder loaded the plain way, (model, tokenizer), for the reference
  computations of support.py (causal_logprobs, causal_span_reference).

Every test here runs on one torch thread ($TACIT_REAL_THREADS to change it): on a small
shared machine torch's default threads ran a real model 4-8x slower than one.
"""

from __future__ import annotations

import os

import pytest
import torch
from support_real import GEMMA3, MODELS, MODELS_ENV, SMOLLM2, RealModelUnavailable, checkpoint
from support_real import selected as is_selected

THREADS_ENV = "TACIT_REAL_THREADS"


def _checkpoint(model):
    if not is_selected(model):
        pytest.skip(f"{model.name} is not selected: {MODELS_ENV}={model.name} (or all) runs it")
    try:
        return checkpoint(model)
    except RealModelUnavailable as why:
        pytest.skip(str(why))


@pytest.fixture(scope="session")
def smollm2():
    return _checkpoint(SMOLLM2)


@pytest.fixture(scope="session")
def gemma3():
    return _checkpoint(GEMMA3)


@pytest.fixture(scope="session", params=list(MODELS))
def real_checkpoint(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="session")
def real_scorer(real_checkpoint):
    from tacit.models.causal import CausalLMScorer

    return CausalLMScorer(str(real_checkpoint.directory), device="cpu")


@pytest.fixture(scope="session")
def real_plain(real_checkpoint):
    from support import plain_causal

    return plain_causal(real_checkpoint.directory)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """For each module of these tests (set before its module fixtures, which compute the
    plain references; the session's model loads come first and compute little)."""
    saved = torch.get_num_threads()
    torch.set_num_threads(int(os.environ.get(THREADS_ENV, "1")))
    yield
    torch.set_num_threads(saved)
