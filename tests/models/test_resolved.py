"""A run reads each model's text once (tacit.models.resolved): the device check, the control
beside it, the probe's needs, the shared vocabulary and the loading all ask that one
ResolvedModel, and the tokenizer the vocabulary was built from is the scorer's."""

from __future__ import annotations

from collections import Counter

import pytest

import tacit
from tacit.core.errors import TacitError
from tacit.core.options import RunOptions
from tacit.models import resolved
from tacit.models.base import Needs
from tacit.models.resolved import ResolvedModel, resolved_models


def test_a_runs_models_are_read_once_and_their_tokenizers_loaded_once(
    tiny_bert, toy_norms_path, monkeypatch
):
    import tacit.hub.model_files as model_files

    read: Counter[str] = Counter()
    tokenizers: Counter[str] = Counter()
    resolve, load_tokenizer = resolved.resolve, model_files.load_tokenizer

    def counted_resolve(text, defaults, **kwargs):
        read[text] += 1
        return resolve(text, defaults, **kwargs)

    def counted_tokenizer(name, **kwargs):
        tokenizers[name] += 1
        return load_tokenizer(name, **kwargs)

    monkeypatch.setattr(resolved, "resolve", counted_resolve)
    monkeypatch.setattr(model_files, "load_tokenizer", counted_tokenizer)
    run = tacit.retrieve(
        [tiny_bert, tiny_bert], norms=toy_norms_path, max_props=1, control="random-weights"
    )
    control = f"{tiny_bert} (random weights, seed 0)"
    assert list(dict.fromkeys(run.prompts["model"])) == [tiny_bert, control]
    assert read == {tiny_bert: 1, control: 1}  # the same model twice is one model
    assert tokenizers == {tiny_bert: 2}  # the model's and its control's: planned, then scored


def test_a_scorer_in_memory_is_a_model_as_it_is(tiny_gpt2):
    run = RunOptions(quiet=True)
    scorer = tacit.models.load_scorer(tiny_gpt2, run)
    (model,) = resolved_models([scorer, scorer], run)
    assert model.name == scorer.name and model.spec is None
    assert model.tokenizer is scorer.tokenizer and model.load() is scorer
    with pytest.raises(TacitError, match="cannot .* which nli asks of it"):
        model.check(Needs.of("classify"), "nli")


def test_a_models_text_is_checked_when_it_is_read():
    # an option of the in-process family on a served model: refused before anything loads
    with pytest.raises(TacitError, match="'peft' is not a loading option of an OpenAI-comp"):
        ResolvedModel("x,base_url=http://localhost:9/v1,peft=adapter", RunOptions())
