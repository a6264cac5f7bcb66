"""The scorer against an independent plain forward pass + softmax, and its invariances."""

import numpy as np
import pytest
from support import TOY_WORDS, out_of_memory_above, reference
from transformers import AutoTokenizer

from tacit.ask.vocabulary import vocabulary_for
from tacit.core.errors import TacitError
from tacit.models.masked import MaskedLMScorer
from tacit.ranking import rank_targets
from tacit.vocab import build_vocabulary

PROMPTS = [
    "A <mask> has fur.",
    "A <mask> has fur, is big, and has claws.",
    "A <mask> barks.",
    "A <mask> has fur.",  # repeated text: scored once, reported twice
    "Everyone knows that a cat has <mask>.",
    "<mask> cuts.",
]
TARGETS = ["bear", "bear", "dog", "cat", "fur", "knife"]


@pytest.mark.parametrize("which", ["tiny_bert", "tiny_roberta"])
def test_scores_match_plain_forward_and_softmax(which, request):
    model_dir = request.getfixturevalue(which)
    scorer = MaskedLMScorer(model_dir, device="cpu", batch_size=4)
    vocab = build_vocabulary({model_dir: scorer.tokenizer})
    ids = vocab.token_ids[model_dir]
    targets = [vocab.index(t) for t in TARGETS]
    got = rank_targets(scorer, PROMPTS, targets, ids, progress=False)
    full, shared = reference(model_dir, PROMPTS, ids)
    want_prob = shared[np.arange(len(PROMPTS)), targets]
    np.testing.assert_allclose(got.prob[:, 0], want_prob, rtol=1e-5)
    np.testing.assert_allclose(got.share[:, 0], want_prob / shared.sum(1), rtol=1e-5)
    want_rank = 1 + (shared > want_prob[:, None]).sum(1)
    np.testing.assert_array_equal(got.rank[:, 0], want_rank)
    want_top = np.argsort(-shared, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(got.top_index, want_top)
    np.testing.assert_allclose(got.top_value, np.take_along_axis(shared, want_top, 1), rtol=1e-5)


def test_batch_size_does_not_change_results(tiny_roberta):
    prompts = [f"A <mask> {'has fur, ' * k}and is big." for k in range(12)] * 2
    targets = list(range(len(prompts)))
    results = []
    for batch_size in (1, 5, 64):
        scorer = MaskedLMScorer(tiny_roberta, device="cpu", batch_size=batch_size)
        vocab = build_vocabulary({"m": scorer.tokenizer})
        got = rank_targets(scorer, prompts, targets, vocab.token_ids["m"], progress=False)
        results.append(got)
    for other in results[1:]:
        np.testing.assert_array_equal(other.rank, results[0].rank)
        np.testing.assert_allclose(other.prob[:, 0], results[0].prob[:, 0], rtol=1e-5)
        np.testing.assert_array_equal(other.top_index, results[0].top_index)


def test_identical_prompts_are_scored_once(tiny_bert):
    scorer = MaskedLMScorer(tiny_bert, device="cpu", batch_size=2)
    vocab = build_vocabulary({"m": scorer.tokenizer})
    seen = []
    scorer.model.base_model.register_forward_hook(lambda m, i, o: seen.append(i))
    calls = []
    original = scorer.encode_prompts
    scorer.encode_prompts = lambda prompts: calls.append(list(prompts)) or original(prompts)
    rank_targets(
        scorer,
        ["A <mask> barks."] * 5 + ["A <mask> purrs."],
        [0] * 6,
        vocab.token_ids["m"],
        progress=False,
    )
    assert sorted(calls[0]) == ["A <mask> barks.", "A <mask> purrs."]
    # one batch of the two distinct prompts, then the last scored alone: the check that the
    # batches are invariant (MaskedLMScorer.batches_invariant), once per scorer
    assert [len(inputs[0]) for inputs in seen] == [2, 1]


def test_roberta_mask_keeps_the_space_before_it(tiny_roberta):
    scorer = MaskedLMScorer(tiny_roberta, device="cpu")
    ids = scorer.encode_prompts(["A <mask> has fur."])[0]
    tokens = scorer.tokenizer.convert_ids_to_tokens(ids)
    assert tokens[:4] == ["<s>", "A", "<mask>", "\u0120has"]  # the mask stands for "Ġbear"
    assert scorer.tokenizer.convert_ids_to_tokens(scorer.encode_prompts(["A cat has <mask>."])[0])[
        -4:-1
    ] == [
        "\u0120has",
        "<mask>",
        ".",
    ]


def test_prompt_needs_exactly_one_mask(tiny_bert):
    scorer = MaskedLMScorer(tiny_bert, device="cpu")
    with pytest.raises(TacitError, match="exactly once"):
        scorer.encode_prompts(["A bear has fur."])
    with pytest.raises(TacitError, match="exactly once"):
        scorer.encode_prompts(["A <mask> has <mask>."])


def test_model_without_mlm_head_is_refused(tmp_path, tiny_bert):
    from transformers import BertModel

    BertModel.from_pretrained(tiny_bert).save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(tmp_path)
    with pytest.raises(TacitError, match="no trained masked-LM head"):
        MaskedLMScorer(str(tmp_path), device="cpu")


def test_bad_options(tiny_bert, tmp_path):
    with pytest.raises(TacitError, match="dtype 'float8': expected one of"):
        MaskedLMScorer(tiny_bert, device="cpu", dtype="float8")
    with pytest.raises(TacitError, match="^device 'tpu': expected auto, cpu"):
        MaskedLMScorer(tiny_bert, device="tpu")
    with pytest.raises(TacitError, match="missing: no such directory"):
        MaskedLMScorer(str(tmp_path / "missing"), device="cpu")


def test_resolved_revision_comes_from_the_hub_cache(tmp_path, monkeypatch, tiny_bert):
    import huggingface_hub.constants

    from tacit.hub.access import resolve_revision

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--someone--masked-lm"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    assert resolve_revision("someone/masked-lm", None) == commit
    assert resolve_revision("someone/other", None) is None
    assert resolve_revision(tiny_bert, None) is None  # a local directory


@pytest.mark.parametrize(("dtype", "eps"), [("bfloat16", 2.0**-8), ("float16", 2.0**-11)])
def test_half_precision_changes_ranks_only_within_its_precision(tiny_roberta, dtype, eps):
    """Half precision moves a target only past words whose float32 scores are that close."""
    prompts = [f"A <mask> {'has fur, ' * k}and is big." for k in range(8)]
    full = MaskedLMScorer(tiny_roberta, device="cpu")
    half = MaskedLMScorer(tiny_roberta, device="cpu", dtype=dtype)
    vocab = build_vocabulary({"m": full.tokenizer})
    ids = vocab.token_ids["m"]
    targets = [vocab.index(w) for w in ["bear", "cat", "dog", "fur", "knife", "tail", "pet", "big"]]

    def logits(scorer):
        out = np.empty((len(prompts), len(vocab)), dtype=np.float32)
        for batch in scorer.score_vocab(prompts, ids, progress=False):
            out[batch.rows] = batch.shared[batch.batch_rows].numpy()
        return out

    reference, approximate = logits(full), logits(half)
    error = np.abs(approximate - reference).max(axis=1)
    scale = np.abs(reference).max(axis=1)
    assert (error <= 64 * eps * scale).all()  # a few roundings per layer, nothing worse
    got = rank_targets(half, prompts, targets, ids, progress=False).rank[:, 0]
    exact = rank_targets(full, prompts, targets, ids, progress=False).rank[:, 0]
    for row, target in enumerate(targets):
        t = reference[row, target]
        surely_above = (reference[row] > t + 2 * error[row]).sum()
        maybe_above = (reference[row] > t - 2 * error[row]).sum() - 1
        assert 1 + surely_above <= got[row] <= 1 + maybe_above or got[row] == exact[row]


def test_out_of_memory_halves_the_batch_and_changes_no_score(tiny_roberta, monkeypatch):
    """On a GPU a batch too large raises OutOfMemoryError: simulated here on the CPU."""
    prompts = [f"A <mask> has {word} claws." for word in TOY_WORDS[:9]]  # of one length: a
    # CPU's batches are (MaskedLMScorer.batches_invariant)
    vocab = vocabulary_for([tiny_roberta])
    ids = vocab.token_ids[tiny_roberta]
    targets = [vocab.index("bear")] * len(prompts)
    expected = rank_targets(
        MaskedLMScorer(tiny_roberta, device="cpu", batch_size=2),
        prompts,
        targets,
        ids,
        progress=False,
    )
    scorer = MaskedLMScorer(tiny_roberta, device="cpu", batch_size=8)
    monkeypatch.setattr(scorer.model, "forward", out_of_memory_above(scorer.model.forward, 2))
    got = rank_targets(scorer, prompts, targets, ids, progress=False)
    assert scorer.batch_size == 2
    np.testing.assert_array_equal(got.rank, expected.rank)
    np.testing.assert_allclose(got.prob[:, 0], expected.prob[:, 0], rtol=1e-5)

    monkeypatch.setattr(scorer.model, "forward", out_of_memory_above(scorer.model.forward, 0))
    with pytest.raises(TacitError, match="out of memory on cpu even one item at a time"):
        rank_targets(scorer, prompts, targets, ids, progress=False)


@pytest.mark.slow
def test_compiled_encoder_gives_the_eager_scores(tiny_roberta):
    """--compile changes how the encoder runs, never what it computes (float error aside);
    the hook that hands the LM head only the mask rows still applies."""
    prompts = [f"A <mask> has {'fur, ' * n}claws." for n in range(6)]
    vocab = vocabulary_for([tiny_roberta])
    ids = vocab.token_ids[tiny_roberta]
    targets = [vocab.index("bear")] * len(prompts)
    eager = MaskedLMScorer(tiny_roberta, device="cpu", batch_size=4)
    compiled = MaskedLMScorer(tiny_roberta, device="cpu", batch_size=4, compile=True)
    assert compiled.runtime.compiled and not eager.runtime.compiled
    expected = rank_targets(eager, prompts, targets, ids, progress=False)
    got = rank_targets(compiled, prompts, targets, ids, progress=False)
    np.testing.assert_array_equal(got.rank, expected.rank)
    np.testing.assert_allclose(got.prob[:, 0], expected.prob[:, 0], rtol=1e-5)
    np.testing.assert_array_equal(got.top_index, expected.top_index)


@pytest.mark.slow
def test_a_failing_compile_is_one_clear_error(tiny_roberta, monkeypatch):
    from torch._dynamo.exc import TorchRuntimeError

    scorer = MaskedLMScorer(tiny_roberta, device="cpu", compile=True)

    def fails(*args, **kwargs):
        raise TorchRuntimeError("no C++ compiler found")

    monkeypatch.setattr(scorer.model.base_model, "forward", fails)
    vocab = vocabulary_for([tiny_roberta])
    with pytest.raises(TacitError, match="^compile: torch.compile failed .* without compile"):
        rank_targets(scorer, ["A <mask>."], [0], vocab.token_ids[tiny_roberta], progress=False)


@pytest.mark.parametrize("which", ["tiny_bert", "tiny_roberta"])
def test_last_feed_forward_block_runs_at_mask_rows_only(which, request):
    """The last layer's feed-forward block sees one row per prompt, not every position (the
    scores equal a plain forward pass: test_scores_match_plain_forward_and_softmax); a prompt
    the tie rule scores again alone (tacit.ranking.ties) is one row too."""
    model_dir = request.getfixturevalue(which)
    scorer = MaskedLMScorer(model_dir, device="cpu", batch_size=8)
    seen = []
    last = scorer.model.base_model.encoder.layer[-1]
    last.intermediate.register_forward_hook(lambda m, i, o: seen.append(tuple(i[0].shape)))
    vocab = vocabulary_for([model_dir])
    prompts = ["A <mask> has fur.", "A <mask> has claws.", "A big <mask> is."]  # one length
    rank_targets(scorer, prompts, [0, 0, 0], vocab.token_ids[model_dir], progress=False)
    assert seen[0][:2] == (1, 3)
    assert all(shape[:2] == (1, 1) for shape in seen[1:])
