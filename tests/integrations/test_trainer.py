"""ProbeCallback: a tiny masked LM and a tiny causal LM trained for a few steps on the CPU with
transformers' Trainer; at each evaluation the callback probes the model in memory, logs the
primary metric through the Trainer (its log history: what TensorBoard and W&B are handed),
leaves the model as it found it, and saves each evaluation's run directory."""

from __future__ import annotations

import json

import pytest
import torch
from support import save_tiny_gpt2, toy_gpt2_tokenizer
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

import tacit
from tacit.core.errors import TacitError
from tacit.integrations.trainer import ProbeCallback

pytest.importorskip("accelerate", reason="transformers' Trainer needs accelerate (the dev extra)")

SENTENCES = ["A bear has fur.", "A cat has a tail.", "A dog is a pet.", "A knife is sharp."] * 4


def _train(model, tokenizer, callback_args, tmp_path, *, mlm: bool):
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

    data = [dict(tokenizer(text)) for text in SENTENCES]
    args = TrainingArguments(
        output_dir=str(tmp_path / "trainer"),
        max_steps=4,
        eval_strategy="steps",
        eval_steps=2,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        learning_rate=1e-2,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=mlm, mlm_probability=0.3)
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=data,
        eval_dataset=data[:4],
        data_collator=collator,
        processing_class=tokenizer,
    )
    callback = ProbeCallback(trainer, **callback_args)
    trainer.add_callback(callback)
    trainer.train()
    return trainer, callback


def _logged(trainer, key):
    return [(entry["step"], entry[key]) for entry in trainer.state.log_history if key in entry]


def test_a_masked_lm_in_training_is_probed_at_each_evaluation(tiny_bert, toy_norms_path, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert)
    out = tmp_path / "probes"
    trainer, callback = _train(
        model,
        tokenizer,
        {"probe": "retrieve", "norms": str(toy_norms_path), "max_props": 2, "limit": 3, "out": out},
        tmp_path,
        mlm=True,
    )
    logged = _logged(trainer, "eval_tacit_retrieve_mrr")
    assert [step for step, _ in logged] == [2, 4]
    assert all(0 < value <= 1 for _, value in logged)
    assert [h["step"] for h in callback.history] == [2, 4]
    # the last value is the probe's own on the model as it ended (nothing trains after step 4)
    scorer = tacit.MaskedLMScorer.from_model(model, tokenizer, name="training")
    again = tacit.retrieve([scorer], norms=str(toy_norms_path), max_props=2, limit=3, quiet=True)
    assert logged[-1][1] == pytest.approx(again.summary["mrr"].iloc[-1], abs=1e-12)
    manifest = json.loads((out / "step-4" / "manifest.json").read_text())
    assert manifest["training"]["global_step"] == 4
    assert manifest["limit"] == {"n": 3, "of": "concepts", "by": "random", "seed": 0}
    assert (out / "step-2" / "summary.csv").is_file()


def test_a_causal_lm_in_training_is_probed_and_logged(toy_norms_path, tmp_path):
    directory = tmp_path / "gpt2"
    save_tiny_gpt2(directory, toy_gpt2_tokenizer(directory))
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory)
    trainer, callback = _train(
        model,
        tokenizer,
        {"probe": "elicit", "norms": str(toy_norms_path), "relations": ["has"], "limit": 2},
        tmp_path,
        mlm=False,
    )
    logged = _logged(trainer, "eval_tacit_elicit_map_vocab")
    assert [step for step, _ in logged] == [2, 4]
    assert all(0 <= value <= 1 for _, value in logged)


def test_the_model_goes_back_to_training_mode(tiny_bert, toy_norms_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).train()
    seen = []
    hook = model.register_forward_hook(lambda module, i, o: seen.append(module.training))
    callback = ProbeCallback(None, "retrieve", norms=str(toy_norms_path), max_props=1, limit=2)
    logs = callback.evaluate(model, tokenizer)
    hook.remove()
    assert seen and not any(seen)  # probed with dropout off
    assert model.training  # and given back as it was
    assert set(logs) == {"eval_tacit_retrieve_mrr"}
    model.eval()
    assert callback.evaluate(model, tokenizer) == logs  # the same model, the same value
    assert not model.training


def test_a_bad_option_fails_when_the_callback_is_made(toy_norms_path):
    with pytest.raises(TacitError, match="max_props 0"):
        ProbeCallback(None, "retrieve", norms=str(toy_norms_path), max_props=0)
    with pytest.raises(TacitError, match="not an option of retrieve"):
        ProbeCallback(None, "retrieve", max_prop=3)
    with pytest.raises(TacitError, match="limit 0"):
        ProbeCallback(None, "retrieve", limit=0)
    model = torch.nn.Linear(2, 2)
    with pytest.raises(TacitError, match="neither a masked nor a causal LM"):
        ProbeCallback(None, "retrieve").evaluate(model, object())
