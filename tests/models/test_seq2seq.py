"""Seq2seq models by T5's sentinel infilling (tacit.models.seq2seq): span scores against a plain
one-pair-at-a-time computation (support.seq2seq_reference, lm-evaluation-harness's seq2seq
loglikelihood), vocabulary mode against span mode (a one-token word: the same score and rank),
the encoder run once per template, models without sentinels refused, and the probes end to end.

Tiny random T5 models: `tiny_t5` on transformers' own T5 tokenizer (SentencePiece-style, a
made-up vocabulary) and `bpe_t5` on GPT-2's real byte-level BPE with the sentinels added.
Tolerance: float32 sums in another order (batched, padded, an expanded encoder output) against
float64 ones; measured at 2.2e-6 nats at most.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from support import fails_cleanly, seq2seq_reference, tiny_roberta_tokenizer
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, BartConfig
from transformers import BartForConditionalGeneration as Bart
from typer.testing import CliRunner

import tacit
from tacit.cli import app
from tacit.core.errors import TacitError
from tacit.core.modelspec import ModelSpec
from tacit.models.base import VOCAB_ANYWHERE
from tacit.models.huggingface import kind_of_architecture, model_kind
from tacit.models.seq2seq import Seq2SeqScorer
from tacit.vocab.shared import single_token_words

TOLERANCE = 1e-5  # nats
TEMPLATES = [
    "<mask> has fur, is big, and has claws.",  # the blank first (retrieval's)
    "A <mask> has fur.",  # inside
    "Everyone knows that a bear has <mask>.",  # last, glued to its full stop (elicitation's)
    "A knife is made of <mask>",  # last, nothing after it
]
SPANS = ["A bear", "bear", "fur", "a tail", "claws", "A coffee machine", "metal", "sharp claws"]


@pytest.fixture(params=["tiny_t5", "bpe_t5"])
def t5(request) -> str:
    return request.getfixturevalue(request.param)


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [1, 64])
@pytest.mark.parametrize("cache", [True, False])
def test_spans_equal_the_plain_computation(t5, batch_size, cache):
    """sentence: log P(<extra_id_0> SPAN <extra_id_1> | input); span: the span's tokens alone;
    n_tokens: theirs; with the encoder run once per template or once per pair."""
    scorer = Seq2SeqScorer(t5, device="cpu", batch_size=batch_size)
    got = scorer.score_spans(TEMPLATES, SPANS, progress=False, cache=cache)
    total, span, n = seq2seq_reference(t5, TEMPLATES, SPANS)
    np.testing.assert_array_equal(got.n_tokens, n)
    np.testing.assert_allclose(got.sentence, total, atol=TOLERANCE)
    np.testing.assert_allclose(got.span, span, atol=TOLERANCE)
    assert (got.sentence < got.span).all()  # the sentinels' terms are log-probabilities too


def test_repeated_templates_and_spans_keep_their_order(tiny_t5):
    scorer = Seq2SeqScorer(tiny_t5, device="cpu")
    templates, spans = [TEMPLATES[2], TEMPLATES[0], TEMPLATES[2]], ["fur", "A bear", "fur"]
    got = scorer.score_spans(templates, spans, progress=False)
    total, _, _ = seq2seq_reference(tiny_t5, templates, spans)
    np.testing.assert_allclose(got.sentence, total, atol=TOLERANCE)


def test_the_encoder_runs_once_per_template(tiny_t5):
    """Every span of a template reuses its encoder output: the encoder reads each distinct
    template once, the decoder one row per pair, and the work counts say so."""
    scorer = Seq2SeqScorer(tiny_t5, device="cpu", batch_size=64)
    encoded_rows: list[int] = []
    encoder = scorer.model.get_encoder()
    hook = encoder.register_forward_hook(
        lambda module, args, kwargs, out: encoded_rows.append(kwargs["input_ids"].shape[0]),
        with_kwargs=True,
    )
    try:
        got = scorer.score_spans(TEMPLATES, SPANS, progress=False)
    finally:
        hook.remove()
    assert sum(encoded_rows) == len(TEMPLATES)
    inputs = [len(ids) for ids in scorer.encoder_ids(TEMPLATES)]
    decoded = len(TEMPLATES) * sum(len(t) for t in scorer.targets(SPANS))
    assert got.work == {
        "span_tokens": sum(inputs) + decoded,
        "span_tokens_naive": len(SPANS) * sum(inputs) + decoded,
    }


def test_rows_of_one_template_share_its_encoder_states(tiny_t5):
    """A batch whose rows share a template decodes against its states expanded over the batch
    (a view: stride 0 over the rows), with no attention mask; mixed templates are padded."""
    scorer = Seq2SeqScorer(tiny_t5, device="cpu")
    states = [torch.randn(5, 32), torch.randn(3, 32)]
    shared, mask = scorer._batch_states(states, np.array([1, 1, 1]))
    assert shared.shape == (3, 3, 32) and shared.stride(0) == 0 and mask is None
    mixed, mask = scorer._batch_states(states, np.array([0, 1]))
    assert mixed.shape == (2, 5, 32)
    assert mask is not None and mask.tolist() == [[1] * 5, [1, 1, 1, 0, 0]]
    torch.testing.assert_close(mixed[1, :3], states[1])


@pytest.mark.slow
def test_the_sentinels_and_the_space_beside_them(tiny_t5, bpe_t5):
    """The blank is `<extra_id_0>`, a lone `▁`/`Ġ` beside it left out; a span's target is its
    tokens after a space between the two sentinels."""
    t5 = Seq2SeqScorer(tiny_t5, device="cpu")
    tokens = lambda scorer, ids: scorer.tokenizer.convert_ids_to_tokens(ids)  # noqa: E731
    assert tokens(t5, t5.encoder_ids(["Everyone knows that a bear has <mask>."])[0])[-4:] == [
        "▁has",
        "<extra_id_0>",
        ".",
        "</s>",
    ]
    assert tokens(t5, t5.targets(["A bear"])[0]) == ["<extra_id_0>", "▁A", "▁bear", "<extra_id_1>"]
    bpe = Seq2SeqScorer(bpe_t5, device="cpu")
    assert tokens(bpe, bpe.encoder_ids(["A <mask> has fur."])[0]) == [
        "A",
        "<extra_id_0>",
        "Ġhas",
        "Ġfur",
        ".",
    ]
    assert tokens(bpe, bpe.targets(["fur"])[0]) == ["<extra_id_0>", "Ġfur", "<extra_id_1>"]
    with pytest.raises(TacitError, match="exactly once"):
        t5.encoder_ids(["no blank here"])


@pytest.mark.slow
def test_vocab_scores_a_one_token_word_as_span_mode_does(t5):
    """Vocabulary mode at a blank anywhere: `shared - log_z` of every one-token word is its
    span-mode score, log P(<extra_id_0> w <extra_id_1>), so ranks agree too; repeated prompts
    are scored once."""
    scorer = Seq2SeqScorer(t5, device="cpu", batch_size=16)
    assert scorer.can(VOCAB_ANYWHERE)
    words = single_token_words(scorer.tokenizer)
    chosen = sorted(words)[:: max(1, len(words) // 60)]  # about 60 words of the vocabulary
    ids = np.array([words[w] for w in chosen])
    prompts = [*TEMPLATES[:3], TEMPLATES[0]]
    spans = scorer.score_spans(prompts, chosen, progress=False)
    np.testing.assert_array_equal(spans.n_tokens, 1)
    seen = []
    for batch in scorer.score_vocab(prompts, ids, progress=False):
        scores = (batch.shared - batch.log_z[:, None]).numpy()
        for row, at in zip(batch.rows.tolist(), batch.batch_rows.tolist()):
            np.testing.assert_allclose(scores[at], spans.sentence[row], atol=TOLERANCE)
            ranks = lambda s: (s[None, :] > s[:, None]).sum(1)  # noqa: E731
            apart = np.abs(spans.sentence[row][:, None] - spans.sentence[row][None, :]) > 1e-4
            assert (ranks(scores[at]) == ranks(spans.sentence[row]))[apart.all(1)].all()
            seen.append(row)
    assert sorted(seen) == list(range(len(prompts)))


def test_vocab_log_z_is_the_first_tokens_normaliser(tiny_t5):
    """log_z is the logsumexp of the decoder's logits after `<extra_id_0>` (the plain way)."""
    scorer = Seq2SeqScorer(tiny_t5, device="cpu")
    tokenizer = AutoTokenizer.from_pretrained(tiny_t5)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_t5).eval()
    prompt = "A <mask> has fur."
    ids = tokenizer(prompt.replace("<mask>", "<extra_id_0>"), return_tensors="pt")["input_ids"]
    decoder = torch.tensor([[0, tokenizer.convert_tokens_to_ids("<extra_id_0>")]])
    with torch.no_grad():
        logits = model(input_ids=ids, decoder_input_ids=decoder).logits[0, 1]
    (batch,) = scorer.score_vocab([prompt], np.array([5, 6]), progress=False)
    assert float(batch.log_z[0]) == pytest.approx(float(torch.logsumexp(logits, -1)), abs=1e-5)


def test_encode_at_the_sentinel_or_the_mean(tiny_t5):
    scorer = Seq2SeqScorer(tiny_t5, device="cpu")
    tokenizer = AutoTokenizer.from_pretrained(tiny_t5)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_t5).eval()
    texts = ["A <mask> has fur.", "Everyone knows that a bear has <mask>."]
    at_blank, cut = scorer.encode(texts, progress=False)
    assert cut == 0
    for text, row in zip(texts, at_blank):
        ids = scorer.encoder_ids([text])[0]
        with torch.no_grad():
            hidden = model.get_encoder()(input_ids=torch.tensor([ids])).last_hidden_state[0]
        blank = ids.index(tokenizer.convert_tokens_to_ids("<extra_id_0>"))
        np.testing.assert_allclose(row, hidden[blank].numpy(), atol=1e-5)
    mean, _ = scorer.encode(["A bear has fur."], pooling="mean", progress=False)
    ids = tokenizer(["A bear has fur."], return_tensors="pt")["input_ids"]
    with torch.no_grad():
        hidden = model.get_encoder()(input_ids=ids).last_hidden_state[0]
    np.testing.assert_allclose(mean[0], hidden.mean(0).numpy(), atol=1e-5)
    with pytest.raises(TacitError, match="pool at the last token"):
        scorer.encode(texts, pooling="last", progress=False)


def test_a_prompt_too_long_is_cut_around_its_blank_or_refused(tiny_t5):
    scorer = Seq2SeqScorer(tiny_t5, device="cpu")
    scorer.runtime.max_tokens = 6
    long = "Everyone knows that a bear has <mask> and a tail and claws and fur."
    (batch,) = scorer.score_vocab([long], np.array([5]), progress=False, cut_to_fit=True)
    assert batch.cut == 1
    (ids,), cut = scorer._fitted([long], cut_to_fit=True)
    assert len(ids) == 6 and cut.tolist() == [True]
    assert scorer.tokenizer.convert_tokens_to_ids("<extra_id_0>") in ids and ids[-1] == 1
    with pytest.raises(TacitError, match="longer than"):
        scorer.score_spans([long], ["fur"], progress=False)


@pytest.fixture(scope="module")
def tiny_bart(tmp_path_factory) -> str:
    """A random BART (whole-sentence denoising, a `<mask>` and no sentinels)."""
    directory = tmp_path_factory.mktemp("tiny-bart")
    tokenizer = tiny_roberta_tokenizer(directory)
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=16,
        decoder_ffn_dim=16,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    Bart(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def test_kinds_and_a_model_without_sentinels(tiny_t5, tiny_bart, toy_norms_path, tmp_path):
    """T5 loads as seq2seq; BART is an encoder-decoder too, refused in one line (no sentinels)
    before its weights load, from the API and the command line."""
    assert model_kind(ModelSpec(tiny_t5)) == "seq2seq"
    assert model_kind(ModelSpec(tiny_bart)) == "seq2seq"
    assert kind_of_architecture("MT5ForConditionalGeneration") == "seq2seq"
    assert kind_of_architecture("LlavaForConditionalGeneration") is None  # not a seq2seq LM
    with pytest.raises(TacitError, match="no <extra_id_0> sentinel") as refused:
        Seq2SeqScorer(tiny_bart, device="cpu")
    assert "\n" not in str(refused.value) and "BART" in str(refused.value)
    args = ["retrieve", "-m", tiny_bart, "--norms", toy_norms_path, "--candidates", "concepts"]
    fails_cleanly([*args, "--out", tmp_path / "run"], "sentinel", out=tmp_path / "run")


def test_the_manifest_records_the_infilling(tiny_t5, toy_norms_path):
    result = tacit.retrieve(
        [tiny_t5], norms=toy_norms_path, max_props=2, candidates="concepts", quiet=True
    )
    (record,) = result.manifest["models"]
    assert record["kind"] == "seq2seq" and record["class"] == "T5ForConditionalGeneration"
    assert record["mask_token"] == "<extra_id_0>"
    assert record["infilling"]["target"] == "<extra_id_0> SPAN <extra_id_1>"
    assert record["infilling"]["decoder_start"] == "<pad>"
    work = result.manifest["span_work"]
    assert 0 < work["span_tokens"] < work["span_tokens_naive"]


def _cli(args: list) -> None:
    result = CliRunner().invoke(app, [str(a) for a in [*args, "-q", "--device", "cpu"]])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_retrieve_over_concepts_ranks_by_the_plain_target_probability(
    tiny_t5, toy_norms_path, tmp_path
):
    """`probe retrieve --candidates concepts`: each concept's rank is its target's among all
    concepts' targets, computed the plain way."""
    out = tmp_path / "run"
    _cli(
        ["retrieve", "-m", tiny_t5, "--norms", toy_norms_path, "--candidates", "concepts"]
        + ["--max-props", "2", "--out", out]
    )
    prompts = pd.read_csv(out / "prompts.csv")
    spans = (out / "candidates.txt").read_text().splitlines()
    total, _, _ = seq2seq_reference(tiny_t5, list(prompts["prompt"]), spans)
    target = total[np.arange(len(prompts)), [spans.index(s) for s in prompts["target_span"]]]
    expected = 1 + (total > target[:, None] + 1e-6).sum(axis=1)
    near = (np.abs(total - target[:, None]) <= 1e-6).sum(axis=1) > 1  # ties within float error
    np.testing.assert_array_equal(prompts["rank"][~near], expected[~near])


@pytest.mark.slow
def test_elicit_over_the_vocabulary_is_the_one_token_target(tiny_t5, toy_norms_path, tmp_path):
    """`probe elicit` (vocabulary mode): each prompt's top words and their probabilities are
    those of P(<extra_id_0> w <extra_id_1>) over the shared vocabulary, the plain way."""
    out = tmp_path / "run"
    _cli(["elicit", "-m", tiny_t5, "--norms", toy_norms_path, "--relation", "has", "--out", out])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"][0]["kind"] == "seq2seq"
    prompts = pd.read_csv(out / "prompts.csv")
    vocab = (out / "vocab.txt").read_text().split()
    row = prompts.iloc[0]
    total, _, n = seq2seq_reference(tiny_t5, [row.prompt], vocab)
    assert (n == 1).all()
    expected = np.exp(total[0])
    best = np.argsort(-expected, kind="stable")[:5]
    top = [item.rpartition(":") for item in row.top5.split()]
    assert [w for w, _, _ in top] == [vocab[i] for i in best]
    np.testing.assert_allclose([float(p) for _, _, p in top], expected[best], rtol=1e-3)


@pytest.mark.slow
def test_retrieve_over_the_vocabulary_reads_a_blank_anywhere(tiny_t5, toy_norms_path, tmp_path):
    """The paper's retrieval (its blank comes first) in vocabulary mode: no --candidates
    needed, as for a masked LM; ranks are among the shared vocabulary's targets."""
    out = tmp_path / "run"
    _cli(["retrieve", "-m", tiny_t5, "--norms", toy_norms_path, "--max-props", "2", "--out", out])
    prompts = pd.read_csv(out / "prompts.csv")
    vocab = (out / "vocab.txt").read_text().split()
    row = prompts.iloc[0]
    total, _, _ = seq2seq_reference(tiny_t5, [row.prompt], vocab)
    target = total[0, vocab.index(row.target)]
    assert row["rank"] == 1 + (total[0] > target + 1e-6).sum()


@pytest.mark.slow
def test_items_with_a_seq2seq_model(tiny_t5, tmp_path):
    """`probe items`: each candidate's score is its target's log-probability (--normalize
    sum), the plain way, and its rank among the item's candidates follows."""
    items = tmp_path / "items.jsonl"
    rows = [
        {"text": "[Y] has fur.", "candidates": ["A bear", "A knife"], "answer": "A bear"},
        {"text": "A zebra has [Y].", "candidates": ["stripes", "a handle", "fur"], "answer": "fur"},
    ]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    _cli(["items", items, "-m", tiny_t5, "--out", out])
    scored = pd.read_csv(out / "prompts.csv")
    for item in rows:
        template = item["text"].replace("[Y]", "<mask>")
        (total,), _, _ = seq2seq_reference(tiny_t5, [template], item["candidates"])
        mine = scored[scored["text"] == template].set_index("candidate").loc[item["candidates"]]
        np.testing.assert_allclose(mine["score"], total, atol=1e-4)
        ranks = [1 + (total > score + 1e-6).sum() for score in total]
        assert mine["rank"].tolist() == ranks
        assert mine["answer"].tolist() == [c == item["answer"] for c in item["candidates"]]
