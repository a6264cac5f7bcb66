"""PragmEval: the loader, linear probes on frozen features, zero-shot cloze, the task table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from support import SHARED_DATA, fails_cleanly, real_bert_tokenizer, real_roberta_tokenizer
from support_nli import write_config
from transformers import AutoModelForMaskedLM, AutoTokenizer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.models.masked import MaskedLMScorer
from tacit.pragmatics.pragmeval import configs_in, load_config, select_configs, task_of
from tacit.probes.pragmeval.frozen import CLOZE_DEFAULTS
from tacit.probes.pragmeval.report import read_reference, summarize_pragmeval
from tacit.vocab.shared import word_token_id

PRAGMEVAL = SHARED_DATA / "pragmatics" / "pragmeval"
needs_pragmeval = pytest.mark.skipif(
    not (PRAGMEVAL / "Sarcasm" / "train.tsv").is_file(),
    reason=f"../shared/data/pragmatics/pragmeval not found at {PRAGMEVAL}",
)


# --- the loader ---------------------------------------------------------------------------------


def test_loader_reads_every_configuration_and_groups_tasks(pragmeval_data):
    assert len(configs_in(pragmeval_data)) == 20
    assert len({task_of(c) for c in configs_in(pragmeval_data)}) == 11
    config = load_config(pragmeval_data, "SwitchBoard")
    assert config.fields == ("sentence",) and "Hold Before Answer/Agreement" in config.labels
    assert config.splits["train"]["sentence"].iloc[0].endswith('"John" said .')  # CSV quoting
    assert select_configs(pragmeval_data, ["persuasiveness", "EmoBank-Valence"]) == [
        f"Persuasiveness-{d}"
        for d in ("ClaimType", "Eloquence", "PremiseType", "Relevance", "Specificity", "Strength")
    ] + ["EmoBank-Valence"]
    with pytest.raises(TacitError, match="^tasks 'Irony': not in .* it has Emergent, EmoBank"):
        select_configs(pragmeval_data, ["Irony"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("text\tlabel\nhello\tsarc\n", ":1: header ['text', 'label']"),
        ("sentence1\tsentence2\tlabel\na\tb\tironic\n", ":2: label 'ironic' is not in the labels"),
        ("sentence1\tsentence2\tlabel\na\tsarc\n", ":2: 2 fields, expected 3"),
        ("", "empty file"),
    ],
)
def test_bad_pragmeval_files_fail_with_file_and_line(tmp_path, mlm, content, message):
    write_config(tmp_path, "Sarcasm")
    (tmp_path / "Sarcasm" / "dev.tsv").write_text(content)
    with pytest.raises(TacitError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(tmp_path, "Sarcasm")
    fails_cleanly(
        ["pragmeval", "--data", tmp_path, "-m", mlm, "--out", tmp_path / "run"],
        message,
        out=tmp_path / "run",
    )


def test_missing_pieces(tmp_path, mlm):
    fails_cleanly(["pragmeval", "--data", tmp_path / "none", "-m", mlm], "no such folder")
    fails_cleanly(["pragmeval", "--data", tmp_path, "-m", mlm], "not a PragmEval folder")
    write_config(tmp_path, "Sarcasm")
    (tmp_path / "Sarcasm" / "labels").unlink()
    fails_cleanly(["pragmeval", "--data", tmp_path, "-m", mlm], "labels: missing")


# --- linear mode --------------------------------------------------------------------------------


def test_features_equal_a_plain_forward_pass(mlm):
    scorer = MaskedLMScorer(mlm, device="cpu", batch_size=2)
    texts = ["the cat was good <mask>", "the dog ran <mask> , John said ."]
    tokenizer = AutoTokenizer.from_pretrained(mlm)
    model = AutoModelForMaskedLM.from_pretrained(mlm).eval()
    with torch.no_grad():
        for pooling in ("mask", "mean"):
            states, cut = scorer.encode(
                texts if pooling == "mask" else [t.replace(" <mask>", "") for t in texts],
                pooling=pooling,
                progress=False,
            )
            assert cut == 0
            for text, got in zip(texts, states):
                if pooling == "mask":
                    enc = tokenizer(text.replace("<mask>", "[MASK]"), return_tensors="pt")
                    hidden = model.base_model(**enc).last_hidden_state[0]
                    expected = hidden[enc["input_ids"][0].tolist().index(tokenizer.mask_token_id)]
                else:
                    enc = tokenizer(text.replace(" <mask>", ""), return_tensors="pt")
                    expected = model.base_model(**enc).last_hidden_state[0].mean(0)
                np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-5)


def test_long_texts_are_cut_around_the_mask(mlm):
    scorer = MaskedLMScorer(mlm, device="cpu")
    long = " ".join(["the cat ran"] * 40) + " <mask> the end ."
    states, cut = scorer.encode([long, "the cat <mask>"], progress=False)
    assert cut == 1 and np.isfinite(states).all()


@pytest.mark.slow
def test_linear_probe_learns_a_separable_task_and_caches_features(pragmeval_data, mlm, tmp_path):
    first = tacit.pragmeval(
        pragmeval_data,
        [mlm],
        tasks=["Sarcasm", "SwitchBoard"],
        cache_dir=tmp_path / "cache",
        quiet=True,
    )
    configs = first.prompts.set_index("config")
    assert configs.loc["Sarcasm", "test"] >= 0.9  # the cue word decides the label
    assert configs.loc["SwitchBoard", "metric"] == "macro_f1"
    from sklearn.metrics import f1_score

    switchboard = first.extra["predictions"].query("config == 'SwitchBoard'")
    assert configs.loc["SwitchBoard", "test"] == pytest.approx(
        f1_score(switchboard["label"], switchboard["predicted"], average="macro")
    )
    cache = first.manifest["models"][0]["feature_cache"]
    assert (cache["hits"], cache["misses"]) == (0, 6)
    again = tacit.pragmeval(
        pragmeval_data,
        [mlm],
        tasks=["Sarcasm", "SwitchBoard"],
        cache_dir=tmp_path / "cache",
        quiet=True,
    )
    cache = again.manifest["models"][0]["feature_cache"]
    assert (cache["hits"], cache["misses"]) == (6, 0)
    assert again.manifest["models"][0]["device"] is None  # nothing to encode: no model loaded
    pd.testing.assert_frame_equal(first.prompts, again.prompts)
    mean = tacit.pragmeval(
        pragmeval_data,
        [mlm],
        tasks=["Sarcasm"],
        pooling="mean",
        cache_dir=tmp_path / "cache",
        quiet=True,
    )
    assert mean.manifest["models"][0]["feature_cache"]["misses"] == 3  # another key


@pytest.mark.slow
def test_max_train_subsamples_reproducibly(pragmeval_data, mlm, tmp_path):
    runs = [
        tacit.pragmeval(
            pragmeval_data,
            [mlm],
            tasks=["Sarcasm"],
            max_train=10,
            seed=seed,
            cache_dir=tmp_path,
            quiet=True,
        ).prompts
        for seed in (1, 1, 2)
    ]
    assert list(runs[0]["n_train"]) == [10]
    pd.testing.assert_frame_equal(runs[0], runs[1])


# --- cloze mode ---------------------------------------------------------------------------------


def test_cloze_predicts_the_best_verbalizer_word(pragmeval_data, mlm):
    result = tacit.pragmeval(pragmeval_data, [mlm], tasks=["Sarcasm"], mode="cloze", quiet=True)
    template, words = CLOZE_DEFAULTS["Sarcasm"]
    tokenizer = AutoTokenizer.from_pretrained(mlm)
    model = AutoModelForMaskedLM.from_pretrained(mlm).eval()
    test = load_config(pragmeval_data, "Sarcasm").splits["test"]
    ids = tokenizer.convert_tokens_to_ids(list(words.values()))
    expected = []
    with torch.no_grad():
        for s1, s2 in zip(test["sentence1"], test["sentence2"]):
            text = template.format(sentence1=s1, sentence2=s2).replace("<mask>", "[MASK]")
            enc = tokenizer(text, return_tensors="pt")
            at = enc["input_ids"][0].tolist().index(tokenizer.mask_token_id)
            expected.append(list(words)[int(model(**enc).logits[0, at, ids].argmax())])
    assert list(result.extra["predictions"]["predicted"]) == expected
    assert result.prompts["setting"].iloc[0] == "zero-shot"


@pytest.mark.slow
def test_cloze_skips_many_label_tasks_and_checks_overrides(pragmeval_data, mlm, tmp_path):
    result = tacit.pragmeval(pragmeval_data, [mlm], mode="cloze", quiet=True)
    assert set(result.manifest["skipped_configs"]) == {
        "GUM",
        "MRDA",
        "PDTB",
        "STAC",
        "SwitchBoard",
        "Persuasiveness-PremiseType",
    }
    assert len(result.prompts) == 14
    fails_cleanly(
        ["pragmeval", "--data", pragmeval_data, "-m", mlm, "--mode", "cloze", "--task", "PDTB"],
        "PDTB: 3 labels: no default cloze template",
    )
    fails_cleanly(
        [
            "pragmeval",
            "--data",
            pragmeval_data,
            "-m",
            mlm,
            "--mode",
            "cloze",
            "--task",
            "Sarcasm",
            "--verbalizer",
            "sarc=Yes",
        ],
        "expected one word for each of notsarc, sarc",
    )
    custom = tacit.pragmeval(
        pragmeval_data,
        [mlm],
        tasks=["PDTB"],
        mode="cloze",
        template="{sentence1} <mask> {sentence2}",
        verbalizer="Statement=good,Hold Before Answer/Agreement=calm,Reject=bad",
        quiet=True,
    )
    assert custom.manifest["models"][0]["configs"]["PDTB"]["verbalizer"]["Reject"] == "bad"


# --- the table ----------------------------------------------------------------------------------


def test_tasks_average_their_configurations_and_the_paper_average_needs_all_tasks(tmp_path):
    configs = pd.DataFrame(
        {
            "model": "m",
            "config": ["Persuasiveness-Strength", "Persuasiveness-Relevance", "Sarcasm"],
            "metric": "accuracy",
            "dev": [0.5, 0.7, 0.9],
            "test": [0.6, 0.8, 0.5],
        }
    )
    reference = tmp_path / "ref.csv"
    reference.write_text("task,bert,human\nSarcasm,70.1,\nPersuasiveness,60,80\n")
    summary = summarize_pragmeval(configs, read_reference(reference))
    rows = summary.set_index("task")
    assert rows.loc["Persuasiveness", "score"] == pytest.approx(70.0)
    assert rows.loc["average", "score"] == pytest.approx(60.0)
    assert rows.loc["Sarcasm", "paper_bert"] == 70.1 and rows.loc["Persuasiveness", "human"] == 80
    assert np.isnan(rows.loc["average", "paper_bert"])  # 2 tasks of 11: no comparison
    reference.write_text("task,bert,human\nSarcasm,high,\n")
    fails_cleanly(
        ["pragmeval", "--data", tmp_path, "-m", "x", "--reference", reference],
        "ref.csv:2: bert is not a number",
    )


@pytest.mark.slow
def test_cli_runs_every_task_in_linear_mode(pragmeval_data, mlm, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "pragmeval",
            "--data",
            str(pragmeval_data),
            "-m",
            mlm,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "configs.csv",
        "manifest.json",
        "pragmeval.png",
        "predictions.csv",
        "result.json",
        "summary.csv",
    ]
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 12  # 11 tasks and the average
    assert summary.set_index("task").loc["average", "paper_bert"] == 61.8
    assert (out / "pragmeval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "NOT fine-tuning" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["data"]["files"]) == 60 and manifest["c_grid"]


# --- the real files -----------------------------------------------------------------------------


@needs_pragmeval
def test_real_files_load_whole():
    total = sum(
        len(split)
        for c in configs_in(PRAGMEVAL)
        for split in load_config(PRAGMEVAL, c).splits.values()
    )
    assert len(configs_in(PRAGMEVAL)) == 20 and total == 130_405


@needs_pragmeval
def test_cloze_defaults_fit_the_real_labels_and_tokenizers():
    tokenizers = [real_bert_tokenizer(), real_roberta_tokenizer()]
    for config, (_, words) in CLOZE_DEFAULTS.items():
        loaded = load_config(PRAGMEVAL, config)
        assert sorted(words) == sorted(loaded.labels), config
        for tokenizer in tokenizers:
            assert all(word_token_id(tokenizer, w) is not None for w in words.values()), config
    two_or_three = {c for c in configs_in(PRAGMEVAL) if len(load_config(PRAGMEVAL, c).labels) <= 3}
    assert two_or_three == set(CLOZE_DEFAULTS)
