"""The pragmatics suites: loaders, the three ways to get predictions, the papers' breakdowns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from support import SHARED_DATA, fails_cleanly, out_of_memory_above
from support_nli import (
    save_nli_classifier,
    save_nli_masked_lm,
    write_impli,
    write_imppres,
    write_jsonl,
    write_nope,
)
from transformers import AutoModelForMaskedLM, AutoModelForSequenceClassification, AutoTokenizer
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.models.classifier import label_order
from tacit.pragmatics import SUITES, impli, imppres, nope
from tacit.probes.nli.predict import fill_template, parse_verbalizer

PRAGMATICS = SHARED_DATA / "pragmatics"
needs_pragmatics = pytest.mark.skipif(
    not (PRAGMATICS / "nope" / "nli_corpus.main.jsonl").is_file(),
    reason=f"../shared/data/pragmatics (IMPPRES, NOPE, IMPLI) not found at {PRAGMATICS}",
)
NLI_ORDER = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}  # roberta-large-mnli's order


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("pragmatics")
    return {
        "imppres": write_imppres(root / "imppres"),
        "nope": write_nope(root / "nope"),
        "impli": write_impli(root / "impli"),
    }


@pytest.fixture(scope="module")
def nli_mlm(tmp_path_factory) -> str:
    return save_nli_masked_lm(tmp_path_factory.mktemp("nli-mlm"))


@pytest.fixture(scope="module")
def nli_classifier(tmp_path_factory) -> str:
    return save_nli_classifier(tmp_path_factory.mktemp("nli-clf"), NLI_ORDER)


# --- loaders ------------------------------------------------------------------------------------


def test_loaders_keep_each_papers_breakdown_fields(data):
    items = imppres.load(data["imppres"])
    assert len(items) == 2 * 2 * 19 + 4
    presupposition = items[items["part"] == "presupposition"]
    assert presupposition["control"].sum() == 2 * 2 * 4
    assert set(presupposition["condition"]) == set(imppres.CONDITIONS)
    assert presupposition["uid"].value_counts().max() == 2  # pairIDs repeat across files
    implicature = items[items["part"] == "implicature"]
    assert list(implicature["gold_logical"])[:2] == ["neutral", "neutral"]
    assert list(implicature["gold_pragmatic"])[:2] == ["entailment", "contradiction"]

    items = nope.load(data["nope"])
    assert sorted(items["split"].value_counts().items()) == [("adv", 2), ("main", 6)]
    row = items.set_index("uid").loc["2-neg"]
    assert row["human_labels"] == "NNNEC" and row["human_agreement"] == pytest.approx(0.6)
    assert row["mean_rating"] == pytest.approx(72.0) and row["pair"] == "2"
    assert items.set_index("uid").loc["1-neg-adv", "pair"] == "1-adv"

    items = impli.load(data["impli"])
    assert len(items) == 5
    metaphor = items[items["figure"] == "metaphors"].iloc[0]
    assert metaphor["encoding"] == "cp1252" and "\u201cidea\u201d" in metaphor["premise"]
    assert metaphor["quality"] == "silver" and metaphor["gold"] == "entailment"
    assert set(items[items["subset"] == "non-entail"]["gold"]) == {"non-entailment"}


@pytest.mark.parametrize(
    ("suite", "relative", "content", "message"),
    [
        ("nope", "nli_corpus.main.jsonl", '{"uid": "1", "premise": "p"}\n', ":1: missing field"),
        ("nope", "nli_corpus.main.jsonl", "{not json\n", ":1: not a JSON object"),
        ("imppres", "p/x.jsonl", '{"sentence1": "a", "sentence2": "b"}\n', "not IMPPRES"),
        (
            "imppres",
            "p/x.jsonl",
            '{"sentence1": "a", "sentence2": "b", "gold_label": "maybe", "UID": "x", '
            '"pairID": "0", "paradigmID": 0, "trigger": "t", "presupposition": "positive"}\n',
            "unknown NLI label 'maybe'",
        ),
        ("impli", "idioms/manual_e.tsv", "only a premise\n", ":1: expected premise<TAB>"),
        ("impli", "idioms/new_file.tsv", "a\tb\n", "not an IMPLI file name"),
        # bytes that cp1252 leaves undefined, on line 2
        ("impli", "idioms/manual_e.tsv", b"a\tb\n\x81\x8d\tx\n", ":2: not utf-8 or cp1252"),
    ],
)
def test_bad_suite_files_fail_with_file_and_line(tmp_path, suite, relative, content, message):
    path = tmp_path / suite / relative
    path.parent.mkdir(parents=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(TacitError, match=message.replace("(", r"\(")):
        SUITES[suite].load(tmp_path / suite)
    fails_cleanly(
        ["nli", "--suite", suite, "--data", tmp_path / suite, "--predictions", path],
        message,
        out=tmp_path / "run",
    )


def test_empty_or_missing_data(tmp_path):
    fails_cleanly(["nli", "--suite", "nope", "--data", tmp_path / "none", "-m", "x"], "no such")
    (tmp_path / "empty").mkdir()
    fails_cleanly(["nli", "--suite", "nope", "--data", tmp_path / "empty", "-m", "x"], "no nli_")


# --- cloze mode ---------------------------------------------------------------------------------


def test_template_filling_and_verbalizer_parsing():
    assert fill_template("{premise}? <mask>, {hypothesis}", "He left.", "She {stayed}.") == (
        "He left? <mask>, She {stayed}."
    )
    assert fill_template('"{hypothesis}" <mask> "{premise}"', "a.", "b.") == '"b." <mask> "a."'
    # a text holding a field's name stays text
    assert (
        fill_template("{premise} <mask> {hypothesis}", "{hypothesis}", "x")
        == "{hypothesis} <mask> x"
    )
    assert parse_verbalizer("Yes,Maybe,No") == parse_verbalizer(
        "contradiction=No, entailment=Yes, neutral=Maybe"
    )
    for bad in ("Yes,No", "entailment=Yes,neutral=Yes,contradiction=No", "e=Yes,x=No,c=No"):
        with pytest.raises(TacitError):
            parse_verbalizer(bad)


def _plain_cloze(model_dir: str, prompts: list[str], words: list[str]) -> np.ndarray:
    """The independent computation: full forward pass, logits at [MASK], softmax over the
    verbalizer words."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    ids = tokenizer.convert_tokens_to_ids(words)
    out = []
    with torch.no_grad():
        for prompt in prompts:
            enc = tokenizer(prompt.replace("<mask>", tokenizer.mask_token), return_tensors="pt")
            at = enc["input_ids"][0].tolist().index(tokenizer.mask_token_id)
            logits = model(**enc).logits[0, at, ids].double()
            out.append(torch.softmax(logits, -1).numpy())
    return np.array(out)


@pytest.mark.slow
def test_cloze_probabilities_equal_a_plain_forward_pass(data, nli_mlm):
    result = tacit.nli("nope", data["nope"], [nli_mlm], batch_size=3, quiet=True)
    rows = result.prompts
    assert rows["prompt"].iloc[0].startswith("John saw the cat? <mask>, the cat was there.")
    expected = _plain_cloze(nli_mlm, list(rows["prompt"]), ["Yes", "Maybe", "No"])
    got = rows[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    labels = np.array(["entailment", "neutral", "contradiction"])[expected.argmax(axis=1)]
    assert list(rows["predicted"]) == list(labels)
    assert result.manifest["models"][0]["mode"] == "cloze"
    one = tacit.nli("nope", data["nope"], [nli_mlm], batch_size=1, quiet=True).prompts
    np.testing.assert_allclose(one[["p_entailment"]].to_numpy(), rows[["p_entailment"]], rtol=1e-5)


@pytest.mark.slow
def test_calibration_divides_by_the_content_free_distribution(data, nli_mlm):
    from tacit.probes.nli.predict import ClozeSetup

    plain = tacit.nli("impli", data["impli"], [nli_mlm], quiet=True)
    calibrated = tacit.nli(
        "impli", data["impli"], [nli_mlm], cloze=ClozeSetup(calibrate=True), quiet=True
    )
    record = calibrated.manifest["models"][0]
    assert record["content_free_inputs"] == ["N/A? <mask>, N/A", "? <mask>, "]
    free = _plain_cloze(nli_mlm, record["content_free_inputs"], ["Yes", "Maybe", "No"]).mean(0)
    raw = plain.prompts[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy() / free
    expected = raw / raw.sum(axis=1, keepdims=True)
    got = calibrated.prompts[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.slow
def test_cloze_refuses_a_verbalizer_word_that_is_not_one_token(data, nli_mlm, tmp_path):
    fails_cleanly(
        [
            "nli",
            "--suite",
            "impli",
            "--data",
            data["impli"],
            "-m",
            nli_mlm,
            "--verbalizer",
            "Yes,Perhaps,No",
            "--out",
            tmp_path / "run",
            "-q",
        ],
        "'Perhaps' (neutral) is not one token",
        out=tmp_path / "run",
    )
    fails_cleanly(
        [
            "nli",
            "--suite",
            "impli",
            "--data",
            data["impli"],
            "-m",
            nli_mlm,
            "--template",
            "{premise} {hypothesis}",
            "-q",
        ],
        "must contain <mask> exactly once",
    )


@pytest.mark.slow
def test_prompts_too_long_for_the_model_are_cut_around_the_mask(tmp_path, nli_mlm):
    root = tmp_path / "impli"
    (root / "idioms").mkdir(parents=True)
    long = " ".join(["the cat ran"] * 30) + "."
    (root / "idioms" / "manual_e.tsv").write_text(f"{long}\tthe cat ran.\nJohn ran.\tMary ran.\n")
    result = tacit.nli("impli", root, [nli_mlm], quiet=True)
    assert len(result.prompts) == 2 and result.manifest["models"][0]["prompts_cut_to_fit"] == 1
    assert np.isfinite(result.prompts["p_entailment"]).all()
    assert result.manifest["dropped"]["without_prediction"] == []


# --- classifier mode ----------------------------------------------------------------------------


@pytest.mark.slow
def test_classifier_probabilities_equal_a_plain_forward_pass(data, nli_classifier):
    result = tacit.nli("nope", data["nope"], [nli_classifier], batch_size=2, quiet=True)
    assert result.manifest["models"][0]["mode"] == "classifier"
    tokenizer = AutoTokenizer.from_pretrained(nli_classifier)
    model = AutoModelForSequenceClassification.from_pretrained(nli_classifier).eval()
    rows = result.prompts
    with torch.no_grad():
        enc = tokenizer(
            list(rows["premise"]), list(rows["hypothesis"]), padding=True, return_tensors="pt"
        )
        probs = torch.softmax(model(**enc).logits.double(), -1).numpy()
    expected = probs[:, [2, 1, 0]]  # the config says 0 = contradiction, 2 = entailment
    got = rows[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.slow
def test_classifier_goes_to_its_device_and_compiles(monkeypatch, data, nli_classifier):
    import tacit.models.runtime
    from tacit.models.classifier import NLIClassifier

    monkeypatch.setattr(tacit.models.runtime, "resolve_device", lambda device: torch.device("meta"))
    on_meta = NLIClassifier(nli_classifier, device="cuda")
    assert next(on_meta.model.parameters()).device.type == "meta"
    monkeypatch.undo()
    items = SUITES["nope"].load(data["nope"])
    pairs = (list(items["premise"]), list(items["hypothesis"]))
    eager, _ = NLIClassifier(nli_classifier, device="cpu").label_probabilities(
        *pairs, progress=False
    )
    compiled, _ = NLIClassifier(nli_classifier, device="cpu", compile=True).label_probabilities(
        *pairs, progress=False
    )
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)


def test_classifier_halves_its_batch_on_out_of_memory(data, nli_classifier, monkeypatch):
    """The classifier batches like the scorer: out of device memory, it halves the batch and
    runs it again, and the probabilities do not change (simulated here on the CPU)."""
    from tacit.models.classifier import NLIClassifier

    items = SUITES["imppres"].load(data["imppres"])
    assert len(items[["premise", "hypothesis"]].drop_duplicates()) > 4  # several batches of 2
    pairs = (list(items["premise"]), list(items["hypothesis"]))
    expected, _ = NLIClassifier(nli_classifier, device="cpu", batch_size=2).label_probabilities(
        *pairs, progress=False
    )
    classifier = NLIClassifier(nli_classifier, device="cpu", batch_size=8)
    monkeypatch.setattr(
        classifier.model, "forward", out_of_memory_above(classifier.model.forward, 2)
    )
    got, _ = classifier.label_probabilities(*pairs, progress=False)
    assert classifier.batch_size == 2
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.slow
def test_classifier_labels_must_map_to_nli(tmp_path, data, nli_mlm):
    generic = save_nli_classifier(tmp_path / "generic", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    fails_cleanly(
        ["nli", "--suite", "nope", "--data", data["nope"], "-m", generic, "-q"],
        "give them in output order with --label-names",
    )
    result = tacit.nli("nope", data["nope"], [generic], label_names=["c", "n", "e"], quiet=True)
    assert result.manifest["models"][0]["labels"] == {
        "entailment": "LABEL_2",
        "neutral": "LABEL_1",
        "contradiction": "LABEL_0",
    }
    with pytest.raises(TacitError, match="is a masked model: it cannot classify premise-hyp"):
        tacit.nli("nope", data["nope"], [nli_mlm], mode="classifier", quiet=True)
    with pytest.raises(TacitError, match="2 labels"):
        label_order({0: "entailment", 1: "not_entailment"}, "m", None)
    with pytest.raises(TacitError, match="repeat a class"):
        label_order({0: "entailment", 1: "entailment", 2: "neutral"}, "m", None)


# --- released predictions -----------------------------------------------------------------------


def _write_seed(folder, uids, logits):
    write_jsonl(
        folder / "nope_main.jsonl", [{"uid": u, "logits": list(z)} for u, z in zip(uids, logits)]
    )


def test_prediction_seeds_are_averaged_with_their_spread(tmp_path, data):
    items = nope.load(data["nope"])
    uids = list(items["uid"])
    gold = {"entailment": 0, "neutral": 1, "contradiction": 2}
    right = [np.eye(3)[gold[g]] * 5 for g in items["gold"]]
    wrong_first = [
        np.eye(3)[(gold[g] + 1) % 3] * 5 if i == 0 else z
        for i, (g, z) in enumerate(zip(items["gold"], right))
    ]
    _write_seed(tmp_path / "preds" / "1", uids, right)
    _write_seed(tmp_path / "preds" / "2", uids, wrong_first)
    result = tacit.nli("nope", data["nope"], predictions=tmp_path / "preds", quiet=True)
    assert sorted(result.prompts["seed"].unique()) == ["1", "2"]
    summary = result.summary.set_index(["section", "group", "metric"])
    first_split = items["split"].iloc[0]
    n = (items["split"] == first_split).sum()
    row = summary.loc[("accuracy", first_split, "accuracy")]
    assert row["value"] == pytest.approx((1 + (n - 1) / n) / 2)
    assert row["sd"] == pytest.approx(np.std([1, (n - 1) / n], ddof=1))
    assert row["n_seeds"] == 2
    by_seed = result.extra["summary_by_seed"]
    assert set(by_seed["seed"]) == {"1", "2"}


def test_repeated_uids_match_by_occurrence_in_file_order(tmp_path, data):
    items = imppres.load(data["imppres"])
    presupposition = items[items["part"] == "presupposition"]
    # one file for both trigger files, as `cat presupposition/*.jsonl` makes it
    records = [
        {"uid": u, "predicted_label": "e" if t == "change_of_state" else "c"}
        for u, t in zip(presupposition["uid"], presupposition["trigger_type"])
    ]
    write_jsonl(tmp_path / "imppres_all.jsonl", records)
    result = tacit.nli(
        "imppres", data["imppres"], predictions=tmp_path / "imppres_all.jsonl", quiet=True
    )
    rows = result.prompts
    assert set(rows[rows["trigger_type"] == "change_of_state"]["predicted"]) == {"entailment"}
    assert set(rows[rows["trigger_type"] == "cleft_existence"]["predicted"]) == {"contradiction"}
    assert rows["p_entailment"].isna().all()  # labels only: no probabilities
    dropped = result.manifest["dropped"]["without_prediction"]
    assert dropped[0]["items"] == 4  # the implicature items have no prediction


def test_bad_prediction_files(tmp_path, data):
    write_jsonl(tmp_path / "a.jsonl", [{"uid": "1", "logits": [1, 2]}])
    fails_cleanly(
        ["nli", "--suite", "nope", "--data", data["nope"], "--predictions", tmp_path / "a.jsonl"],
        "a.jsonl:1: logits must be 3 numbers",
    )
    write_jsonl(tmp_path / "b.jsonl", [{"uid": "nothing-like-it", "predicted_label": "e"}])
    fails_cleanly(
        ["nli", "--suite", "nope", "--data", data["nope"], "--predictions", tmp_path / "b.jsonl"],
        "none of its 1 uids names an item",
    )
    fails_cleanly(["nli", "--suite", "nope", "--data", data["nope"]], "not both or neither")
    fails_cleanly(["nli", "--suite", "snli", "--data", data["nope"], "-m", "x"], "--suite 'snli'")


# --- the papers' breakdowns ---------------------------------------------------------------------


def _with_predictions(items: pd.DataFrame, predicted) -> pd.DataFrame:
    return items.assign(predicted=list(predicted), p_entailment=np.nan)


def test_imppres_filter_needs_the_unembedded_positive_and_that_conditions_control(data):
    items = imppres.load(data["imppres"])
    items = items[items["part"] == "presupposition"]
    predicted = items["gold"].copy()
    # paradigm 0 of change_of_state: unembedded positive wrong -> out of every condition
    first = items.index[(items["trigger_type"] == "change_of_state") & (items["paradigm"] == 0)]
    anchor = first[0]
    predicted[anchor] = "neutral"
    # paradigm 1 of change_of_state: modal control wrong -> out of the modal condition only
    second = items[(items["trigger_type"] == "change_of_state") & (items["paradigm"] == 1)]
    control = second.index[second["control"] & (second["condition"] == "modal")][0]
    predicted[control] = "contradiction"
    kept = imppres.filtered_paradigms(_with_predictions(items, predicted))
    per_condition = kept.groupby("condition")["paradigm"].size() // 3
    assert per_condition["unembedded"] == 3 and per_condition["negated"] == 3
    assert per_condition["modal"] == 2


def test_imppres_implicature_readings(data):
    items = imppres.load(data["imppres"])
    items = items[items["part"] == "implicature"]
    summary = pd.DataFrame(imppres.summarize(_with_predictions(items, items["gold_logical"])))
    values = summary[summary["group"] == "all"].set_index("metric")["value"]
    assert values["accuracy_logical"] == 1 and values["accuracy_pragmatic"] == 0
    assert values["share_logical"] == 1 and values["share_neither"] == 0


def test_nope_table4_pairs_swap_where_the_original_was_negated(data):
    items = nope.load(data["nope"])
    pairs = nope.projection_pairs(_with_predictions(items, items["gold"]))
    assert sorted(pairs["subset"]) == ["E->E", "E->{N,C}", "E->{N,C}", "{N,C}->{N,C}"]
    assert pairs["correct_unembedded"].all() and pairs["correct_negated"].all()


def test_impli_pairwise_preference_counts_ties_as_half(data):
    items = impli.load(data["impli"])
    p = {"John saw it.": 0.9, "Mary saw it.": 0.9, "the dog ran.": 0.1}
    items = items.assign(
        predicted="entailment", p_entailment=[p.get(h, 0.5) for h in items["hypothesis"]]
    )
    pairs = impli.entailment_preferred(items)
    assert sorted(pairs["win"]) == [0.5, 1.0]
    summary = pd.DataFrame(impli.summarize(items))
    accuracy = summary[summary["metric"] == "binary_accuracy"].set_index("group")["value"]
    assert accuracy["all"] == pytest.approx(3 / 5)  # everything predicted entailment


def test_items_table_counts_neutral_and_contradiction_right_for_non_entailment(tmp_path, data):
    items = impli.load(data["impli"])
    write_jsonl(tmp_path / "p.jsonl", [{"uid": u, "predicted_label": "c"} for u in items["uid"]])
    rows = tacit.nli("impli", data["impli"], predictions=tmp_path / "p.jsonl").prompts
    assert list(rows["correct"]) == list(rows["gold"] == "non-entailment")


# --- the command line ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["imppres", "nope", "impli"])
def test_cli_runs_every_suite_in_cloze_and_classifier_mode(
    tmp_path, data, nli_mlm, nli_classifier, suite
):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "nli",
            "--suite",
            suite,
            "--data",
            str(data[suite]),
            "-m",
            nli_mlm,
            "-m",
            nli_classifier,
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "items.csv",
        "manifest.json",
        "nli.png",
        "result.json",
        "summary.csv",
        "summary_by_seed.csv",
    ]
    rows = pd.read_csv(out / "items.csv")
    assert set(rows["model"]) == {nli_mlm, nli_classifier}
    assert len(rows) == 2 * len(SUITES[suite].load(data[suite]))
    manifest = json.loads((out / "manifest.json").read_text())
    assert [m["mode"] for m in manifest["models"]] == ["cloze", "classifier"]
    assert manifest["data"]["files"]
    assert all(len(f["sha256"]) == 64 for f in manifest["data"]["files"])
    summary = pd.read_csv(out / "summary.csv")
    assert {"section", "breakdown", "group", "metric", "value", "sd", "n", "n_seeds"} <= set(
        summary.columns
    )
    assert "== " in result.output and "written to" in result.output

    # the third mode: a predictions file naming every item by uid, here all "neutral"
    items = SUITES[suite].load(data[suite])
    write_jsonl(tmp_path / "preds.jsonl", [{"uid": u, "logits": [0, 1, 0]} for u in items["uid"]])
    result = CliRunner().invoke(
        app,
        [
            "nli",
            "--suite",
            suite,
            "--data",
            str(data[suite]),
            "--predictions",
            str(tmp_path / "preds.jsonl"),
            "--out",
            str(tmp_path / "run2"),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(tmp_path / "run2" / "items.csv")
    assert len(rows) == len(items) and set(rows["predicted"]) == {"neutral"}


@pytest.mark.slow
def test_max_items_samples_reproducibly(data, nli_mlm):
    first = tacit.nli("imppres", data["imppres"], [nli_mlm], max_items=10, seed=3, quiet=True)
    again = tacit.nli("imppres", data["imppres"], [nli_mlm], max_items=10, seed=3, quiet=True)
    assert len(first.prompts) == 10
    assert list(first.prompts["item_id"]) == list(again.prompts["item_id"])
    assert first.manifest["dropped"]["not_sampled"] == len(imppres.load(data["imppres"])) - 10


# --- the real files -----------------------------------------------------------------------------


@needs_pragmatics
def test_real_suites_load_whole():
    assert len(imppres.load(PRAGMATICS / "imppres")) == 25_500
    assert len(nope.load(PRAGMATICS / "nope")) == 2_386 + 346
    items = impli.load(PRAGMATICS / "impli")
    assert len(items) == 26_124
    assert set(items.loc[items["encoding"] == "cp1252", "source"]) == {
        "metaphors/replacement_tsvetkov_e.tsv"
    }


@pytest.mark.slow
@needs_pragmatics
def test_real_tokenizers_hold_the_default_verbalizer_and_score_real_items(real_bert, real_roberta):
    data = PRAGMATICS / "impli" / "idioms" / "manual_e.tsv"
    result = tacit.nli("impli", data, [real_bert, real_roberta], max_items=12, quiet=True)
    words = [m["verbalizer_token_ids"] for m in result.manifest["models"]]
    for record, model in zip(words, (real_bert, real_roberta)):
        tokenizer = AutoTokenizer.from_pretrained(model)
        spelled = tokenizer.convert_ids_to_tokens(list(record.values()))
        assert [t.lstrip("\u0120") for t in spelled] == ["Yes", "Maybe", "No"], spelled
    probs = result.prompts[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-9)
    assert len(result.prompts) == 24  # prompts longer than the fixtures' 128 tokens are cut


@pytest.mark.slow
@needs_pragmatics
def test_nope_released_predictions_reproduce_the_paper():
    runs = PRAGMATICS / "nope" / "reference_predictions" / "RoBERTa-large" / "mnli-snli-anli-fever"
    result = tacit.nli("nope", PRAGMATICS / "nope", predictions=runs, quiet=True)
    summary = result.summary.dropna(subset=["paper_value"])
    assert len(summary) == 8
    np.testing.assert_allclose(summary["value"], summary["paper_value"], atol=0.0005)
    assert set(summary["n_seeds"]) == {5}


def test_nli_figure_draws_every_breakdown_with_the_paper(tmp_path):
    """nli.png: one panel per breakdown of percent metrics (correlations stay in the table),
    the paper's numbers drawn where the summary has them; too many groups -> left out, said."""
    from tacit.probes.nli.figures import MAX_BARS, nli_figure, nli_panels

    rows = [
        ("accuracy", "split", "main", "accuracy", 0.78, 0.01, 0.785),
        ("accuracy", "split", "adv", "accuracy", 0.56, 0.02, None),
        ("rho", "split", "main", "spearman_rho", 0.42, 0.01, None),
    ] + [
        ("paradigms", "paradigm", f"p{i}", "accuracy", 0.5, None, None) for i in range(MAX_BARS + 1)
    ]
    summary = pd.DataFrame(
        rows, columns=["section", "breakdown", "group", "metric", "value", "sd", "paper_value"]
    ).assign(model="m", n=10, n_seeds=1)
    drawn, left_out = nli_panels(summary)
    assert [title for title, _ in drawn] == ["accuracy [split]"]
    assert left_out == ["paradigms [paradigm]"]
    assert nli_figure(summary).startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="no accuracy"):
        nli_figure(summary[summary["section"] == "rho"])
