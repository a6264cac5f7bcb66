"""Loading options per model (tacit.core.modelspec, tacit.models.loading): a PEFT adapter
scores exactly as peft's own merged model, remote code runs only when trusted, the attention
kernel and the checkpoint's own precision are honoured and recorded, 8/4-bit weights are
refused off a GPU in one line, and `--batch-size auto` finds the largest batch that fits."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from support import (
    TOY_WORDS,
    out_of_memory_above,
    reference,
    save_tiny_gpt2,
    toy_gpt2_tokenizer,
)
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

import tacit
from tacit.core.errors import TacitError
from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer
from tacit.ranking import rank_targets
from tacit.vocab import build_vocabulary

PROMPTS = [
    "A <mask> has fur.",
    "A <mask> has fur, is big, and has claws.",
    "A <mask> barks.",
    "Everyone knows that a cat has <mask>.",
]
TARGETS = ["bear", "bear", "dog", "fur"]


def _lora(model_dir, out, target_modules, seed=1):
    """A LoRA adapter with random (not zero) weights, so that it changes the scores."""
    peft = pytest.importorskip(
        "peft", reason="peft is not installed (pip install 'tacit-probe[peft]')"
    )
    torch.manual_seed(seed)
    auto = AutoModelForCausalLM if "gpt2" in str(model_dir) else AutoModelForMaskedLM
    config = peft.LoraConfig(
        r=4, lora_alpha=64, target_modules=target_modules, init_lora_weights=False
    )
    peft.get_peft_model(auto.from_pretrained(model_dir), config).save_pretrained(out)
    return out


def _merged(model_dir, adapter, out, auto):
    """peft's own merged model, saved: what the adapter makes of the base model."""
    from peft import PeftModel

    merged = PeftModel.from_pretrained(auto.from_pretrained(model_dir), adapter).merge_and_unload()
    merged.save_pretrained(out)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(out)
    return str(out)


def test_a_lora_adapter_scores_as_peft_merged_model_does(tiny_bert, tmp_path):
    adapter = _lora(tiny_bert, tmp_path / "adapter", ["query", "value"])
    scorer = MaskedLMScorer(f"{tiny_bert},peft={adapter}", device="cpu")
    vocab = build_vocabulary({"m": scorer.tokenizer})
    ids, targets = vocab.token_ids["m"], [vocab.index(t) for t in TARGETS]
    got = rank_targets(scorer, PROMPTS, targets, ids, progress=False)
    merged = _merged(tiny_bert, adapter, tmp_path / "merged", AutoModelForMaskedLM)
    _, shared = reference(merged, PROMPTS, ids)
    want = shared[np.arange(len(PROMPTS)), targets]
    np.testing.assert_allclose(got.prob[:, 0], want, rtol=1e-5, atol=1e-8)
    _, base = reference(tiny_bert, PROMPTS, ids)
    assert np.abs(base[np.arange(len(PROMPTS)), targets] - want).max() > 1e-4  # it changed them
    assert scorer.record()["load"]["peft"] == str(adapter)
    assert scorer.record()["source"] == tiny_bert


def test_a_lora_adapter_on_a_causal_lm(tmp_path):
    base = tmp_path / "gpt2"
    save_tiny_gpt2(base, toy_gpt2_tokenizer(base))
    adapter = _lora(base, tmp_path / "adapter", ["c_attn"])
    merged = _merged(base, adapter, tmp_path / "merged", AutoModelForCausalLM)
    spans = ["A bear", "A dog", "A knife"]
    templates = ["<mask> has fur.", "<mask> barks."]
    got = CausalLMScorer(f"{base},peft={adapter}", device="cpu").score_spans(
        templates, spans, progress=False, cache=False
    )
    want = CausalLMScorer(merged, device="cpu").score_spans(
        templates, spans, progress=False, cache=False
    )
    np.testing.assert_allclose(got.sentence, want.sentence, rtol=1e-6, atol=1e-5)


def test_an_adapter_given_as_a_model_or_a_missing_one_is_one_line(tiny_bert, tmp_path):
    adapter = _lora(tiny_bert, tmp_path / "adapter", ["query"])
    with pytest.raises(TacitError, match="a PEFT adapter, not a model: give its base model"):
        MaskedLMScorer(str(adapter), device="cpu")
    with pytest.raises(TacitError, match="no adapter_config.json in it"):
        MaskedLMScorer(f"{tiny_bert},peft={tmp_path}", device="cpu")


def _remote_code_model(tiny_bert, directory):
    """A local model whose classes are its own code (config.json's auto_map), as on the hub."""
    shutil.copytree(tiny_bert, directory)
    (directory / "configuration_toy.py").write_text(
        "from transformers import BertConfig\n\n\nclass ToyConfig(BertConfig):\n"
        "    model_type = 'toy-bert'\n"
    )
    (directory / "modeling_toy.py").write_text(
        "from transformers import BertForMaskedLM\n\nfrom .configuration_toy import ToyConfig\n\n\n"
        "class ToyForMaskedLM(BertForMaskedLM):\n    config_class = ToyConfig\n"
    )
    config = json.loads((directory / "config.json").read_text())
    config.update(
        model_type="toy-bert",
        architectures=["ToyForMaskedLM"],
        auto_map={
            "AutoConfig": "configuration_toy.ToyConfig",
            "AutoModelForMaskedLM": "modeling_toy.ToyForMaskedLM",
        },
    )
    (directory / "config.json").write_text(json.dumps(config))
    return str(directory)


@pytest.mark.slow
def test_remote_code_runs_only_when_trusted(tiny_bert, tmp_path, monkeypatch, toy_norms_path):
    import transformers.dynamic_module_utils as modules

    monkeypatch.setattr(modules, "HF_MODULES_CACHE", str(tmp_path / "modules"))
    model = _remote_code_model(tiny_bert, tmp_path / "toy")
    with pytest.raises(TacitError, match=r"models .*toy: .*trust_remote_code"):
        tacit.retrieve([model], norms=toy_norms_path, max_props=1, device="cpu", quiet=True)
    trusted = tacit.retrieve(
        [f"{model},trust_remote_code=true"],
        norms=toy_norms_path,
        max_props=1,
        device="cpu",
        quiet=True,
    )
    plain = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=1, device="cpu", quiet=True)
    record = trusted.manifest["models"][0]
    assert record["class"] == "ToyForMaskedLM" and record["load"]["trust_remote_code"] is True
    np.testing.assert_allclose(trusted.summary["mrr"], plain.summary["mrr"])  # the same weights


def test_attention_kernel_and_the_checkpoints_own_precision(tiny_bert, tmp_path):
    eager = MaskedLMScorer(f"{tiny_bert},attn_implementation=eager", device="cpu")
    assert eager.record()["load"]["attn_implementation"] == "eager"
    with pytest.raises(TacitError, match="attn_implementation"):
        MaskedLMScorer(f"{tiny_bert},attn_implementation=nonsense", device="cpu")
    half = tmp_path / "half"
    AutoModelForMaskedLM.from_pretrained(tiny_bert).to(torch.bfloat16).save_pretrained(half)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(half)
    auto = MaskedLMScorer(f"{half},dtype=auto", device="cpu")
    assert auto.runtime.dtype == torch.bfloat16
    assert auto.record()["load"] == {
        **auto.record()["load"],
        "dtype": "bfloat16",
        "dtype_asked": "auto",
    }
    assert (
        MaskedLMScorer(str(half), device="cpu").runtime.dtype == torch.float32
    )  # as asked: float32


@pytest.mark.parametrize("bits", ["8bit", "4bit"])
def test_quantized_weights_are_refused_off_a_gpu_before_anything_loads(bits, toy_norms_path):
    with pytest.raises(TacitError, match=f"load_in_{bits} needs a CUDA GPU.*this run is on cpu"):
        tacit.retrieve([f"no/such-model,load_in_{bits}=true"], norms=toy_norms_path, device="cpu")


def test_batch_size_auto_finds_the_largest_that_fits(tiny_bert, monkeypatch):
    """As accelerate's find_executable_batch_size: from the start, 90% at a time until the
    longest batch fits (out of memory simulated above 25 texts); the scores do not change."""
    # of one length, as a CPU's batches are (MaskedLMScorer.batches_invariant)
    prompts = [f"A <mask> has {a} {b}." for a in TOY_WORDS[:8] for b in TOY_WORDS[:5]]
    scorer = MaskedLMScorer(tiny_bert, device="cpu", batch_size="auto")
    assert (scorer.batch_size, scorer.auto_batch) == (64, True)  # a CPU's start
    vocab = build_vocabulary({"m": scorer.tokenizer})
    targets = [vocab.index("bear")] * len(prompts)
    monkeypatch.setattr(scorer.model, "forward", out_of_memory_above(scorer.model.forward, 25))
    got = rank_targets(scorer, prompts, targets, vocab.token_ids["m"], progress=False)
    assert scorer.batch_size == 25  # 64, 57, 51, 45, 40, 36, 32, 28 did not fit; 25 did
    assert scorer.record()["batch_size_auto"] is True
    fixed = MaskedLMScorer(tiny_bert, device="cpu", batch_size=3)
    want = rank_targets(fixed, prompts, targets, vocab.token_ids["m"], progress=False)
    np.testing.assert_allclose(got.prob[:, 0], want.prob[:, 0], rtol=1e-5)
