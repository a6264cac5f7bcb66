"""The causal scorer (tacit.models.causal) against a plain computation: start token + the
sentence, one forward pass, log_softmax, gather, sum (support.causal_span_reference), on tiny
random GPT-2- and Llama-shaped models with GPT-2's real byte-level BPE."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from support import (
    causal_reference,
    causal_span_reference,
    causal_vocab_reference,
    fails_cleanly,
    out_of_memory_above,
    sentence_of,
    start_of,
)
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer, BertConfig, BertModel
from typer.testing import CliRunner

from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec
from tacit.models.causal import CACHE_MIN_SPANS, CausalLMScorer
from tacit.models.causal_cache import cache_layers, expanded_cache
from tacit.models.huggingface import model_kind

TEMPLATES = [
    "Everyone knows that a bear has <mask>.",
    "<mask> has fur, is big, and has claws.",
    "A knife is made of <mask>",
]
# "s" after "has " merges differently in the sentence than alone; "" is an empty span
SPANS = [
    "fur",
    "claws",
    "four legs",
    "a long tail",
    "s",
    "teeth",
    "eyes",
    "ears",
    "wings",
    "A bear",
    "An aardvark",
    "metal",
    "x!",
]


@pytest.fixture(params=["tiny_gpt2", "tiny_llama"])
def causal_model(request) -> str:
    return request.getfixturevalue(request.param)


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [1, 64])
@pytest.mark.parametrize("cache", [True, False])
def test_spans_match_plain_forward(causal_model, batch_size, cache):
    scorer = CausalLMScorer(causal_model, device="cpu", batch_size=batch_size)
    scores = scorer.score_spans(TEMPLATES, SPANS, progress=False, cache=cache)
    span, total, n = causal_span_reference(causal_model, TEMPLATES, SPANS)
    np.testing.assert_array_equal(scores.n_tokens, n)
    np.testing.assert_allclose(scores.sentence, total, rtol=0, atol=2e-4)
    np.testing.assert_allclose(scores.span, span, rtol=0, atol=2e-4)
    assert len(SPANS) >= CACHE_MIN_SPANS  # the cache is used for every template


def test_a_prefix_cache_over_a_batch_is_one_row_expanded(causal_model):
    """Each batch reuses the prefix's keys and values as views of its one row: a cache that
    copied them per row held [batch x heads x prefix x head size] per layer per batch (10 GB
    at 9 prompts x 636 concepts of a template whose blank comes last, in the peers' bench)."""
    model = AutoModelForCausalLM.from_pretrained(causal_model)
    prefix = model(input_ids=torch.tensor([[1, 2, 3, 4]]), use_cache=True).past_key_values
    layers = cache_layers(prefix)
    cache = expanded_cache(layers, 32, model.config)
    for (keys, values), (one_keys, one_values) in zip(cache_layers(cache), layers):
        assert keys.shape[0] == values.shape[0] == 32 and keys.stride(0) == values.stride(0) == 0
        assert keys.untyped_storage().nbytes() == one_keys.untyped_storage().nbytes()
        torch.testing.assert_close(values[31], one_values[0])
    assert cache.get_seq_length() == 4


@pytest.mark.parametrize("cache", [True, False])
def test_the_work_counted_is_the_tokens_fed(causal_model, cache):
    """`span_tokens` is what the model was fed (counted one row at a time, where no row has
    padding), `span_tokens_naive` what a whole-sentence loop feeds it."""
    scorer = CausalLMScorer(causal_model, device="cpu", batch_size=1)
    _, fed = counting_calls(scorer)
    scores = scorer.score_spans(TEMPLATES, SPANS, progress=False, cache=cache)
    naive = naive_tokens(scorer.tokenizer, TEMPLATES, SPANS)
    assert scores.work == {"span_tokens": fed[0], "span_tokens_naive": naive}
    assert (fed[0] < naive * 0.6) if cache else (fed[0] == naive)


def naive_tokens(tokenizer, templates, spans):
    """A whole-sentence loop's work: the start token and every token of each sentence but
    its last, one per token of the sentence."""
    sentences = [sentence_of(t, s)[0] for t in templates for s in spans]
    return sum(len(ids) for ids in tokenizer(sentences, add_special_tokens=False)["input_ids"])


def counting_calls(scorer):
    """Wrap the scorer's model: each call's input shape, and the tokens it was fed where no
    row is padded (batch size 1: pads would follow a row's tokens, and a padded row's last
    token is fed but not read). A start token begins each prefix run and each row scored
    whole, where it may be the pad token too."""
    calls, fed = [], [0]
    forward = scorer.model.forward

    def counting(**kw):
        ids = kw["input_ids"]
        calls.append(tuple(ids.shape))
        if kw.get("use_cache"):
            fed[0] += ids.numel()
        else:
            fed[0] += int((ids != scorer.pad_id).sum())
            cached = any(kw.get(k) is not None for k in ("cache", "past_key_values"))
            if not cached and scorer.start_id == scorer.pad_id:
                fed[0] += ids.shape[0]
        return forward(**kw)

    scorer.model.forward = counting
    return calls, fed


def test_a_concept_in_many_templates_is_not_a_prefix_of_its_own(tiny_gpt2):
    """9 retrieval prompts x 8 concepts: each concept begins 9 sentences, but a group that
    small, cut apart from the rest, would run them in batches of one; every sentence shares the
    run of start + "A" instead, batched across templates; scores as the plain computation."""
    templates = [f"<mask> has {n} legs." for n in range(2, 11)]
    spans = ["A bear", "A cat", "A dog", "A bee", "A cow", "A fox", "A pig", "A hen"]
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=32)
    calls, _ = counting_calls(scorer)
    scores = scorer.score_spans(templates, spans, progress=False)
    _, total, _ = causal_span_reference(tiny_gpt2, templates, spans)
    np.testing.assert_allclose(scores.sentence, total, rtol=0, atol=2e-4)
    assert calls[0] == (1, 2) and [rows for rows, _ in calls[1:]].count(1) == 0
    assert len(calls) <= 1 + 72 // 32 + 2  # the prefix, then batches (cut where rows shorten)


@pytest.mark.slow
def test_templates_that_begin_alike_share_one_prefix_run(tiny_gpt2):
    """Retrieval's prompts all begin with the blank: one run of the start token and the
    spans' shared first token ("A") serves every sentence that begins so, in every template,
    batched across templates; scores as the plain computation."""
    templates = ["<mask> has fur.", "<mask> is big and has claws.", "<mask> flies."]
    animals = ["bear", "cat", "dog", "bee", "cow", "fox", "pig", "hen", "rat", "elk", "yak"]
    spans = [f"A {a}" for a in animals] + ["An ant", "An owl", "Scissors", "Mice"]
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=8)
    calls, _ = counting_calls(scorer)
    scores = scorer.score_spans(templates, spans, progress=False)
    span, total, _ = causal_span_reference(tiny_gpt2, templates, spans)
    np.testing.assert_allclose(scores.sentence, total, rtol=0, atol=2e-4)
    np.testing.assert_allclose(scores.span, span, rtol=0, atol=2e-4)
    # start + "A" (33 sentences), start alone ("An", "Scissors", "Mice": 12), each run once
    assert calls.count((1, 1)) == calls.count((1, 2)) == 1
    assert sum(rows for rows, _ in calls) == 2 + 45
    naive = naive_tokens(scorer.tokenizer, templates, spans)
    work = {"span_tokens": naive - (33 * 2 - 2) - (12 - 1), "span_tokens_naive": naive}
    assert scores.work == work  # the loop runs start + "A" 33 times, start alone 12 times


@pytest.mark.slow
def test_out_of_memory_halves_the_batch_and_bfloat16_loads(tiny_gpt2):
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=64)
    scorer.model.forward = out_of_memory_above(scorer.model.forward, 5)
    scores = scorer.score_spans(TEMPLATES, SPANS, progress=False)
    assert scorer.batch_size == 4
    _, total, _ = causal_span_reference(tiny_gpt2, TEMPLATES, SPANS)
    np.testing.assert_allclose(scores.sentence, total, atol=2e-4)
    half = CausalLMScorer(tiny_gpt2, device="cpu", dtype="bfloat16")
    assert half.model.dtype == torch.bfloat16
    rough = half.score_spans(TEMPLATES, SPANS, progress=False).sentence
    np.testing.assert_allclose(rough, total, atol=0.5)  # bfloat16 weights, float32 softmax


@pytest.mark.slow
def test_bpe_merge_across_the_blank_is_scored_whole(tiny_gpt2):
    """A span whose first token merges with the text before the blank (no space before the
    blank: "bear<mask>" + "s" -> "bears") cannot reuse the prefix's tokens: scored whole."""
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=4)
    templates = ["Everyone knows that a bear<mask> fur."]
    spans = ["s", "skin", "'s", " has", " with", " and", " is", " got", " eats"]
    tokenizer = scorer.tokenizer
    prefix = tokenizer("Everyone knows that a bear", add_special_tokens=False)["input_ids"]
    merged = tokenizer("Everyone knows that a bears fur.", add_special_tokens=False)["input_ids"]
    assert merged[: len(prefix)] != prefix  # the case under test
    scores = scorer.score_spans(templates, spans, progress=False)
    span, total, n = causal_span_reference(tiny_gpt2, templates, spans)
    np.testing.assert_allclose(scores.sentence, total, atol=2e-4)
    np.testing.assert_allclose(scores.span, span, atol=2e-4)
    np.testing.assert_array_equal(scores.n_tokens, n)


@pytest.mark.slow
def test_repeated_templates_and_spans_keep_their_order(tiny_gpt2):
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=8)
    templates = [TEMPLATES[1], TEMPLATES[0], TEMPLATES[1]]
    spans = SPANS[::-1] + ["fur"]
    scores = scorer.score_spans(templates, spans, progress=False)
    _, total, _ = causal_span_reference(tiny_gpt2, templates, spans)
    np.testing.assert_allclose(scores.sentence, total, atol=2e-4)


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [1, 64])
def test_vocab_counts_the_text_after_the_blank(causal_model, batch_size):
    """Every word's score is log P(w | before) + log P(after | before, w), the plain way
    (support.causal_vocab_reference); a blank with nothing after it is the next token's
    log-probability. Special and punctuation tokens whose sentence tokenises otherwise keep
    their token, with the text after it tokenised alone."""
    scorer = CausalLMScorer(causal_model, device="cpu", batch_size=batch_size)
    prompts = [
        "Everyone knows that a bear has <mask>.",
        "A cat has <mask>",
        "<mask>!",
        "Everyone knows that a bear has <mask>.",
        "A knife is used for <mask> .",
    ]
    vocab_ids = np.array([4649, 15503, 10, 50260, 7, 5198])
    found = {}
    for batch in scorer.score_vocab(prompts, vocab_ids, progress=False):
        for row, at in zip(batch.rows.tolist(), batch.batch_rows.tolist()):
            found[row] = (batch.shared[at] - batch.log_z[at]).numpy()
    assert sorted(found) == list(range(len(prompts)))
    expected = causal_vocab_reference(causal_model, prompts, vocab_ids)
    for row in range(len(prompts)):
        np.testing.assert_allclose(found[row], expected[row], atol=5e-5)
    alone = _next_token_logprobs(causal_model, "A cat has")[vocab_ids].numpy()
    np.testing.assert_allclose(found[1], alone, atol=2e-5)


def test_vocab_refuses_a_blank_inside_the_sentence(tiny_gpt2):
    scorer = CausalLMScorer(tiny_gpt2, device="cpu")
    with pytest.raises(TacitError, match="--candidates concepts"):
        list(scorer.score_vocab(["A <mask> has fur."], np.array([1]), progress=False))


@pytest.mark.slow
@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_encode_pools_the_last_hidden_layer(tiny_gpt2, pooling):
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=2)
    texts = ["A bear has fur.", "Knives are sharp and made of metal.", "Yes"]
    features, cut = scorer.encode(texts, pooling=pooling, progress=False)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2).eval()
    tokenizer = scorer.tokenizer
    for row, text in enumerate(texts):
        ids = [start_of(tokenizer), *tokenizer(text, add_special_tokens=False)["input_ids"]]
        with torch.no_grad():
            hidden = model.base_model(input_ids=torch.tensor([ids])).last_hidden_state[0]
        expected = hidden[-1] if pooling == "last" else hidden[1:].mean(0)
        np.testing.assert_allclose(features[row], expected.numpy(), atol=1e-5)
    assert cut == 0
    with pytest.raises(TacitError, match="pool at a <mask>"):
        scorer.encode(texts, pooling="mask")


def test_kinds(tiny_gpt2, tiny_llama, tiny_bert, tmp_path):
    kind = lambda path: model_kind(ModelSpec(str(path)))  # noqa: E731
    assert kind(tiny_gpt2) == "causal" and kind(tiny_llama) == "causal"
    assert kind(tiny_bert) == "masked"
    encoder = tmp_path / "encoder"
    BertModel(
        BertConfig(
            vocab_size=50,
            hidden_size=8,
            num_hidden_layers=1,
            num_attention_heads=1,
            intermediate_size=8,
        )
    ).save_pretrained(encoder)
    with pytest.raises(TacitError, match="BertModel checkpoint is none of the model kinds"):
        kind(encoder)


def test_retrieve_with_a_causal_model_points_to_concepts(tiny_gpt2, toy_norms_path, tmp_path):
    fails_cleanly(
        [
            "retrieve",
            "-m",
            tiny_gpt2,
            "--norms",
            toy_norms_path,
            "--max-props",
            "2",
            "--out",
            tmp_path / "run",
            "--device",
            "cpu",
        ],
        "--candidates concepts",
        out=tmp_path / "run",
    )


def _next_token_logprobs(model_dir: str, text: str) -> torch.Tensor:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = [start_of(tokenizer), *tokenizer(text, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)


@pytest.mark.slow
def test_elicit_masked_and_causal_in_one_run(tiny_bert, tiny_gpt2, toy_norms_path, tmp_path):
    """One shared vocabulary across kinds; the causal rows are the next-token softmax."""
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "elicit",
            "-m",
            tiny_bert,
            "-m",
            tiny_gpt2,
            "--norms",
            str(toy_norms_path),
            "--relation",
            "has",
            "--out",
            str(out),
            "-q",
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert [m["kind"] for m in manifest["models"]] == ["masked", "causal"]
    prompts = pd.read_csv(out / "prompts.csv")
    assert set(prompts.model) == {tiny_bert, tiny_gpt2}
    by_model = prompts.groupby("model")
    assert by_model.size()[tiny_bert] == by_model.size()[tiny_gpt2]
    vocab = (out / "vocab.txt").read_text().split()
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    ids = [tokenizer(" " + w, add_special_tokens=False)["input_ids"][0] for w in vocab]
    row = prompts[prompts.model == tiny_gpt2].iloc[0]
    expected = torch.as_tensor(np.exp(causal_vocab_reference(tiny_gpt2, [row.prompt], ids)[0]))
    top = [item.rpartition(":") for item in row.top5.split()]
    assert [w for w, _, _ in top] == [vocab[i] for i in expected.topk(5).indices]
    np.testing.assert_allclose([float(p) for _, _, p in top], expected.topk(5).values, rtol=1e-3)
    record = manifest["models"][1]
    assert record["vocab_suffixes_naive"] == len(vocab) * by_model.size()[tiny_gpt2]
    assert 0 < record["vocab_suffixes"] <= record["vocab_suffixes_naive"]


@pytest.mark.slow
def test_words_in_place_in_one_pass_with_a_bar_of_sentences(tiny_gpt2, capsys):
    """Every prompt's words are scored in one score_spans pass (prompts that begin alike share
    their prefix's run); the bar of sentences has a total, and a caller's bar, which counts
    prompts, advances by the prompts."""
    prompts = ["A <mask> has a car.", "A <mask> has a job.", "A <mask> has a car."]
    words = ["person", "dog", "man", "woman", "house", "bear", "land", "queen", "water"]
    scorer = CausalLMScorer(tiny_gpt2, device="cpu", batch_size=4)
    calls, _ = counting_calls(scorer)
    with tqdm(total=2, unit="prompt", disable=False) as caller:
        ids = [scorer.tokenizer(" " + w)["input_ids"][0] for w in words]
        batches = list(scorer.score_words(prompts, np.array(ids), words, progress=caller))
        assert caller.n == 2
    assert calls[0] == (1, 2)  # start + "A", once for both prompts
    printed = capsys.readouterr().err
    assert "/18" in printed and "sentence" in printed  # 2 distinct prompts x 9 words
    _, total, _ = causal_span_reference(tiny_gpt2, prompts[:2], words)
    for batch in batches:
        for row in batch.rows.tolist():
            expected = total[0 if prompts[row].endswith("car.") else 1]
            np.testing.assert_allclose(batch.shared[0].numpy(), expected, atol=2e-4)
            assert batch.log_z[0].item() == pytest.approx(np.logaddexp.reduce(expected), abs=2e-4)


@pytest.mark.slow
def test_prince_masked_and_causal(real_bert, tiny_gpt2, tmp_path):
    """The person prompt's blank comes first: a causal model scores each word in place."""
    out = tmp_path / "prince"
    words = tmp_path / "words.txt"  # a small vocabulary: every word is a sentence to score
    words.write_text(
        "\n".join(
            [
                "person",
                "man",
                "woman",
                "dog",
                "leader",
                "land",
                "history",
                "water",
                "queen",
                "bear",
                "the",
                "people",
                "house",
            ]
        )
    )
    result = CliRunner().invoke(
        app,
        [
            "prince",
            "-m",
            real_bert,
            "-m",
            tiny_gpt2,
            "--vocab-file",
            str(words),
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "prompts.csv", keep_default_na=False)
    assert list(table.model) == [real_bert, real_bert, tiny_gpt2, tiny_gpt2]
    causal = table[table.model == tiny_gpt2].set_index("direction")
    vocab = (out / "vocab.txt").read_text().split()
    scorer = CausalLMScorer(tiny_gpt2, device="cpu")
    person = causal.loc["concept", "prompt"]
    sentence = scorer.score_spans([person], vocab, progress=False).sentence[0]
    rank = 1 + (sentence > sentence[vocab.index("person")]).sum()
    assert causal.loc["concept", "rank"] == rank
    share = np.exp(sentence[vocab.index("person")] - np.logaddexp.reduce(sentence))
    assert causal.loc["concept", "target_prob"] == pytest.approx(share, rel=1e-4)


@pytest.mark.slow
def test_nli_cloze_scores_the_verbalizer_words_as_spans(tiny_gpt2, tmp_path):
    """`probe nli` cloze mode with a causal model: each label's word in the blank, the label
    probabilities the softmax over the sentences' log-probabilities (words of any length)."""
    from support_nli import write_nope

    data = write_nope(tmp_path / "nope")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "nli",
            "--suite",
            "nope",
            "--data",
            str(data),
            "-m",
            tiny_gpt2,
            "--mode",
            "cloze",
            "--verbalizer",
            "Yes,Perhaps not,No",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"][0]["mode"] == "cloze"
    assert manifest["models"][0]["kind"] == "causal"
    items = pd.read_csv(out / "items.csv")
    prompts = list(items["prompt"])
    _, total, _ = causal_span_reference(tiny_gpt2, prompts, ["Yes", "Perhaps not", "No"])
    expected = np.exp(total - np.logaddexp.reduce(total, axis=1, keepdims=True))
    got = items[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_pragmeval_linear_with_a_causal_model(tiny_gpt2, tmp_path, pooling):
    from support_nli import write_pragmeval

    data = write_pragmeval(tmp_path / "pragmeval")
    out = tmp_path / "run"
    base = [
        "pragmeval",
        "--data",
        str(data),
        "-m",
        tiny_gpt2,
        "--task",
        "Sarcasm",
        "--cache-dir",
        str(tmp_path / "cache"),
        "-q",
    ]
    result = CliRunner().invoke(app, [*base, "--pooling", pooling, "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["pooling"] == pooling and manifest["models"][0]["kind"] == "causal"
    configs = pd.read_csv(out / "configs.csv")
    assert configs["test"].between(0, 1).all()
    if pooling == "last":
        fails_cleanly([*base, "--pooling", "mask"], "pool at a <mask> (use --pooling last or mean)")
        cloze = CliRunner().invoke(app, [*base, "--mode", "cloze", "--out", str(tmp_path / "c")])
        assert cloze.exit_code == 0, cloze.output
        record = json.loads((tmp_path / "c" / "manifest.json").read_text())["models"][0]
        assert record["kind"] == "causal"


@pytest.mark.slow
def test_sentencepiece_words_and_next_token(tmp_path):
    """A Llama-2-style tokenizer encodes " bear" as `▁` `▁bear`: the shared vocabulary reads a
    word inside a sentence ("a bear"), so `bear` is `▁bear`, the token that follows "... has"."""
    from support import save_tiny_llama, sentencepiece_style_tokenizer

    from tacit.vocab.shared import single_token_words, word_token_id

    tokenizer = sentencepiece_style_tokenizer()
    assert tokenizer.tokenize(" bear") == ["▁", "▁bear"]
    words = single_token_words(tokenizer)
    bear = tokenizer.convert_tokens_to_ids("▁bear")
    assert words["bear"] == bear and word_token_id(tokenizer, "fur") == words["fur"]
    model_dir = str(save_tiny_llama(tmp_path / "llama2", tokenizer))
    scorer = CausalLMScorer(model_dir, device="cpu")
    prompt = "Everyone knows that a cat has <mask>."
    chosen = np.array([bear, words["fur"]])
    (batch,) = scorer.score_vocab([prompt], chosen, progress=False)
    got = (batch.shared[0] - batch.log_z[0]).numpy()
    # "." alone is `▁.`; after a word, as the whole sentence tokenises it, `.`
    assert tokenizer.tokenize(".") == ["▁."]
    np.testing.assert_allclose(
        got, causal_vocab_reference(model_dir, [prompt], chosen)[0], atol=5e-5
    )
    sentence = scorer.score_spans([prompt], ["bear", "fur"], progress=False).sentence[0]
    prefix = causal_reference(model_dir, ["Everyone knows that a cat has"])[0].sum()
    np.testing.assert_allclose(got, sentence - prefix, atol=5e-5)


@pytest.mark.slow
def test_retrieve_over_concepts_ranks_by_the_plain_sentence_probability(
    tiny_gpt2, toy_norms_path, tmp_path
):
    """`probe retrieve --candidates concepts -m gpt2`: each concept's rank is its sentence's
    among all concepts' sentences, computed the plain way (support.causal_span_reference)."""
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "retrieve",
            "-m",
            tiny_gpt2,
            "--norms",
            str(toy_norms_path),
            "--candidates",
            "concepts",
            "--max-props",
            "2",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates.txt").read_text().splitlines()
    _, total, _ = causal_span_reference(tiny_gpt2, list(prompts["prompt"]), spans)
    targets = [spans.index(s) for s in prompts["target_span"]]
    target = total[np.arange(len(targets)), targets]
    expected = 1 + (total > target[:, None] + 1e-6).sum(axis=1)
    near = (np.abs(total - target[:, None]) <= 1e-6).sum(axis=1) > 1  # ties within float error
    np.testing.assert_array_equal(prompts["rank"][~near], expected[~near])


@pytest.mark.slow
def test_elicit_over_answers_with_a_causal_model(tiny_gpt2, tmp_path):
    from support import TOY_NORMS, write_norms

    from tacit.core.metrics import average_precision

    norms = write_norms(
        tmp_path / "norms.dat", [*TOY_NORMS, ("bear", "visual perceptual", "has four legs", 9)]
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "elicit",
            "-m",
            tiny_gpt2,
            "--norms",
            str(norms),
            "--relation",
            "has",
            "--candidates",
            "answers",
            "--out",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates-has.txt").read_text().splitlines()
    assert "four legs" in spans
    _, total, _ = causal_span_reference(tiny_gpt2, list(prompts["prompt"]), spans)
    for row, gold, ap in zip(total, prompts["gold"], prompts["ap_vocab"]):
        relevant = np.isin(spans, [item.rpartition(":")[0] for item in gold.split(" | ")])
        assert ap == pytest.approx(average_precision(row, relevant), abs=1e-4)
