"""A run reads each model's text once (tacit.models.resolved): the device check, the control
beside it, the probe's needs, the shared vocabulary and the loading all ask that one
ResolvedModel, the tokenizer the vocabulary was built from is the scorer's, and the model's
config is read from its files once (tacit.hub.access.read_once)."""

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
    configs = count_config_reads(monkeypatch)
    run = tacit.retrieve(
        [tiny_bert, tiny_bert], norms=toy_norms_path, max_props=1, control="random-weights"
    )
    control = f"{tiny_bert} (random weights, seed 0)"
    assert list(dict.fromkeys(run.prompts["model"])) == [tiny_bert, control]
    assert read == {tiny_bert: 1, control: 1}  # the same model twice is one model
    assert tokenizers == {tiny_bert: 2}  # the model's and its control's: planned, then scored
    # its files looked up once: its kind, both tokenizers, its weights and the control's
    # architecture all read that one config (three reads of the model alone before)
    assert configs == {tiny_bert: 1}


def count_config_reads(monkeypatch) -> Counter[str]:
    """A counting stub around transformers' one reader of a model's config.json (which
    AutoTokenizer and AutoModel call too, when not handed a config)."""
    from transformers import AutoConfig

    reads: Counter[str] = Counter()
    read = AutoConfig.from_pretrained.__func__

    def counted(cls, name, *args, **kwargs):
        reads[str(name)] += 1
        return read(cls, name, *args, **kwargs)

    monkeypatch.setattr(AutoConfig, "from_pretrained", classmethod(counted))
    return reads


def test_each_of_a_models_readers_gets_its_own_copy_of_the_config_read_once(tiny_bert, monkeypatch):
    from tacit.hub.access import read_once
    from tacit.models.loading import read_config

    reads = count_config_reads(monkeypatch)
    (model,) = resolved_models([f"{tiny_bert},hidden_dropout_prob=0.25"], RunOptions(quiet=True))
    with read_once():
        first, second = read_config(model.spec), read_config(model.spec)
        model.check(Needs.of("vocab"), "retrieve")
        scorer = model.load(Needs.of("vocab"), "retrieve")
    assert reads == {tiny_bert: 1} and first is not second
    # an option that is a field of the config still sets it on the weights, and only there
    assert scorer.runtime.model.config.hidden_dropout_prob == 0.25
    assert first.hidden_dropout_prob == 0.1 == read_config(model.spec).hidden_dropout_prob
    assert reads == {tiny_bert: 2}  # outside a run's block, every call reads anew


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
