"""Ranks and top-k lists do not depend on the batch size (issue 42; the tie rule,
tacit.ranking.ties). Before, float near ties were ordered by the batch's rounding, so a rank
or a top five could differ between `--batch-size 1` and 64.

A near tie is built into a tiny model (two words read alike: one embedding row, so everything
after either word is the same, and logits `DELTA` apart), and batch noise is put on it: at a
batch size above 1 the two logits move `EPSILON` apart the other way, as float rounding does
(EPSILON is a fifth of the float32 tolerance at these tiny models' scale, so within what the
rule assumes). Every batch size must then give the ranks, top-k lists and average precisions
of `--batch-size 1`, in vocabulary and span mode, masked and causal, single templates and
ensembles. Real batch noise, with no tie built in, is checked on many words where ../shared
has the real tokenizers.

A masked LM's batches on a CPU are the prompts alone bit for bit (tacit.models.invariant): the
noise built in here is what the scorer's check on its first batch is for, so these runs warn
once and settle their near ties alone, as on any other device."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from support import REAL_NORMS, needs_shared, save_tiny_gpt2, toy_gpt2_tokenizer

import tacit
from tacit.core.errors import TacitWarning
from tacit.models.causal import CausalLMScorer
from tacit.models.masked import MaskedLMScorer
from tacit.ranking.ties import RELATIVE_TOLERANCE, near, ranks, top

pytestmark = pytest.mark.filterwarnings("ignore:.*differs from it scored alone:UserWarning")

SIZES = [1, 7, "auto"]  # auto starts at 64 on a CPU: a batch of 64, of 7 and its remainder
DELTA = 1e-6  # the built tie: the second word's logit above the first's
EPSILON = RELATIVE_TOLERANCE["float32"] / 5  # the noise at batch sizes above 1, the other way
SCORE = r":-?[0-9.]+(?:e[-+]?[0-9]+)?"  # a top list's ":score" after each word
RANKED = ["rank", "top5", "top1", "ap_vocab", "ap_sens", "spearman", "gold_ranks", "top10"]


def with_near_tie(scorer, first: str, second: str):
    """The scorer's model with `second` reading as `first` (their input embeddings one row)
    and scoring DELTA above it, both a nat above the rest (a tie at the top); then, at a batch
    size above 1, `first` EPSILON up and `second` EPSILON down: noise that turns the tie."""
    tokenizer = scorer.tokenizer
    leading = scorer.kind == "causal" or "roberta" in type(tokenizer).__name__.lower()
    a, b = (tokenizer.convert_tokens_to_ids(("Ġ" if leading else "") + w) for w in (first, second))
    assert a != tokenizer.unk_token_id and b != tokenizer.unk_token_id
    with torch.no_grad():
        rows = scorer.model.get_input_embeddings().weight
        rows[b] = rows[a]

    def tie(module, inputs, output):
        output = output.clone()
        output[..., a] += 1
        output[..., b] = output[..., a] + DELTA
        if scorer.batch_size > 1:
            output[..., a] += EPSILON
            output[..., b] -= EPSILON
        return output

    scorer.model.get_output_embeddings().register_forward_hook(tie)
    return scorer


def scorers(model_dir: str, family, first: str, second: str) -> dict:
    return {
        size: with_near_tie(family(model_dir, device="cpu", batch_size=size), first, second)
        for size in SIZES
    }


def ranked(table: pd.DataFrame) -> pd.DataFrame:
    """The columns a batch could reorder, as text; the top lists' words in order without their
    scores (the scores themselves may differ within the noise: 5.27e-05 against 5.271e-05)."""
    out = table[[c for c in RANKED if c in table]].astype(str).reset_index(drop=True)
    for column in {"top5", "top10"} & set(out):
        out[column] = out[column].str.replace(SCORE, "", regex=True)
    return out


def same_at_every_batch_size(results: dict) -> pd.DataFrame:
    one = ranked(results[1].prompts)
    for size, result in results.items():
        pd.testing.assert_frame_equal(ranked(result.prompts), one, obj=f"batch size {size}")
    return results[1].prompts


@pytest.fixture(scope="module")
def toy_gpt2(tmp_path_factory) -> str:
    """A tiny GPT-2 on the toy BPE: a causal model that needs nothing from ../shared."""
    directory = tmp_path_factory.mktemp("toy-gpt2")
    return str(save_tiny_gpt2(directory, toy_gpt2_tokenizer(directory / "tokenizer")))


@pytest.fixture
def two_threads():
    """Two CPU threads, as a user's run has on two cores: the tie rule's referee then runs the
    prompts it settles side by side (Referee.prepare; a test worker has one thread of its own)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
@pytest.mark.parametrize("candidates", ["vocab", "concepts"])
@pytest.mark.parametrize("templates", ["paper", "paraphrases"])
def test_retrieval_ranks_with_a_near_tie_at_every_batch_size(
    tiny_bert, toy_norms_path, candidates, templates, two_threads
):
    results = {
        size: tacit.retrieve(
            [scorer],
            norms=toy_norms_path,
            max_props=2,
            candidates=candidates,
            templates=templates,
            quiet=True,
        )
        for size, scorer in scorers(tiny_bert, MaskedLMScorer, "bear", "cat").items()
    }
    prompts = same_at_every_batch_size(results)
    # settled as scored alone: cat DELTA above bear, both above the rest
    top1 = prompts["top5"].str.split(" ").str[0].str.split(":").str[0]
    if candidates == "vocab":
        assert (top1 == "cat").all()
        assert (prompts.loc[prompts["target"] == "bear", "rank"] == 2).all()
    else:
        assert prompts["top5"].str.match("(A|a) cat:").all()  # paraphrases: "a cat" too
    record = results["auto"].manifest["models"][0]
    assert record["tie_rows"] >= len(prompts) and record.get("tie_noisy", 0) == 0
    assert results["auto"].manifest["ties"]["relative_tolerance"] == RELATIVE_TOLERANCE
    # what the rule cost (issue 47): the prompt texts scored alone, each counted once, and the
    # time it took
    assert 0 < record["tie_prompts"] <= prompts["prompt"].nunique()
    assert record["timing"]["tie_seconds"] > 0  # how long, not what: beside scoring_seconds
    assert "tie_milliseconds" not in record


@pytest.mark.parametrize("candidates", ["vocab", "answers"])
def test_elicitation_ranks_with_a_near_tie_at_every_batch_size(
    tiny_bert, toy_norms_path, candidates, two_threads
):
    results = {
        size: tacit.elicit(
            [scorer], norms=toy_norms_path, relations=["has"], candidates=candidates, quiet=True
        )
        for size, scorer in scorers(tiny_bert, MaskedLMScorer, "fur", "claws").items()
    }
    prompts = same_at_every_batch_size(results)
    assert prompts["top5"].str.match(r"claws:[^ |]+( | \| )fur:").all()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("probe", "candidates"), [("retrieve", "concepts"), ("elicit", "vocab"), ("elicit", "answers")]
)
def test_causal_ranks_with_a_near_tie_at_every_batch_size(
    toy_gpt2, toy_norms_path, probe, candidates
):
    first, second = ("bear", "cat") if probe == "retrieve" else ("fur", "claws")
    run = getattr(tacit, probe)
    extra = {"max_props": 2} if probe == "retrieve" else {"relations": ["has"]}
    results = {
        size: run([scorer], norms=toy_norms_path, candidates=candidates, quiet=True, **extra)
        for size, scorer in scorers(toy_gpt2, CausalLMScorer, first, second).items()
    }
    prompts = same_at_every_batch_size(results)
    assert results["auto"].manifest["models"][0]["tie_rows"] > 0
    assert prompts["top5"].str.contains(second).all()


def test_items_ranks_with_a_near_tie_at_every_batch_size(tiny_bert, tmp_path):
    path = tmp_path / "items.jsonl"
    items = [
        {"text": "[Y] has fur.", "candidates": ["A bear", "A cat", "A knife"], "answer": "A bear"},
        {"text": "[Y] is big.", "candidates": ["A cat", "A bear"], "answer": "A cat"},
    ]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    results = {
        size: tacit.items(path, [scorer], quiet=True)
        for size, scorer in scorers(tiny_bert, MaskedLMScorer, "bear", "cat").items()
    }
    one = results[1].prompts[["id", "candidate", "rank"]].reset_index(drop=True)
    for size, result in results.items():
        got = result.prompts[["id", "candidate", "rank"]].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, one, obj=f"batch size {size}")
    assert one.set_index("candidate")["rank"].to_dict() == {"A cat": 1, "A bear": 2, "A knife": 3}


def test_the_total_order_and_what_is_near():
    scores = torch.tensor([[0.5, 0.9, 0.5, 0.1, 0.9 + 1e-6]], dtype=torch.float64)
    # equal scores by position: the 0.5 at 0 before the one at 2
    assert ranks(scores, torch.tensor([[0, 2, 1, 4, 3]])).tolist() == [[3, 4, 2, 1, 5]]
    values, positions = top(torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0]]), 3)
    assert positions.tolist() == [[1, 2, 4]] and values.tolist() == [[3.0, 3.0, 3.0]]
    # within 1e-5 of the anchor (0.5 at 0) or of the top two (0.9, 0.9 + 1e-6)
    found = near(scores, torch.tensor([[0]]), torch.tensor([[True]]), 2, torch.tensor([1e-5]))
    assert found.tolist() == [[True, True, True, False, True]]
    alone = near(scores, torch.tensor([[3]]), torch.tensor([[True]]), 1, torch.tensor([1e-7]))
    assert not alone.any()


def test_many_positions_are_ranked_by_one_sort_in_the_same_order(monkeypatch):
    """Past SORTED_RANKS positions a row, one stable sort: the same ranks, exact ties and
    -inf included, as a pass per position."""
    from tacit.ranking import ties

    generator = torch.Generator().manual_seed(0)
    scores = torch.randint(0, 20, (6, 300), generator=generator).double()
    scores[0] = -float("inf")
    positions = torch.stack([torch.randperm(300, generator=generator)[:80] for _ in range(6)])
    sorted_ranks = ranks(scores, positions)
    monkeypatch.setattr(ties, "SORTED_RANKS", 10**9)
    assert torch.equal(sorted_ranks, ranks(scores, positions))
    assert positions.shape[1] > 32


@pytest.mark.slow
@needs_shared
@pytest.mark.parametrize(
    ("model", "probe"),
    [("real_bert", "retrieve"), ("real_roberta", "elicit"), ("tiny_gpt2", "elicit")],
)
def test_real_batch_noise_on_many_words(request, model, probe, tmp_path):
    """No tie built in: 22,000-33,000 words whose tiny random logits lie within a nat, so near
    ties abound. The causal model's templates end at the blank: with text after it, each word's
    suffix is a forward pass of its own, 30,000 a prompt one at a time at batch size 1 (half an
    hour here), and a flat random model prunes none of them (tests/models/test_causal_vocab.py
    covers the suffixes)."""
    family = CausalLMScorer if model == "tiny_gpt2" else MaskedLMScorer
    model_dir = request.getfixturevalue(model)
    run = getattr(tacit, probe)
    extra: dict[str, object] = (
        {"max_props": 10} if probe == "retrieve" else {"relations": ["has", "is"]}
    )
    if family is CausalLMScorer:
        templates = tmp_path / "blank-last.jsonl"
        templates.write_text(
            '{"relation": "has", "template": "{Everyone knows that} [a X] has [Y]"}\n'
            '{"relation": "is", "template": "{Everyone knows that} [a X] is [Y]"}\n'
        )
        extra["templates"] = str(templates)
    results = {
        size: run(
            [family(model_dir, device="cpu", batch_size=size)],
            norms=REAL_NORMS,
            limit=15,
            quiet=True,
            **extra,
        )
        for size in (1, 64)
    }
    same_at_every_batch_size(results)
    if probe == "retrieve":  # the probabilities themselves within the noise
        got = [results[size].prompts["target_prob"].to_numpy(float) for size in (1, 64)]
        np.testing.assert_allclose(got[0], got[1], rtol=1e-5)


def test_canonical_scores_run_alone_on_one_thread(tiny_bert):
    """The tie rule's canonical pass (issue 47): a batch of one on one CPU thread, whatever the
    threads and batch size outside (a kernel's sums can follow its threads), then both as they
    were."""
    from tacit.ranking.vocabulary import Referee

    scorer = MaskedLMScorer(tiny_bert, device="cpu", batch_size=8)
    seen = []
    scorer.model.register_forward_pre_hook(
        lambda module, inputs: seen.append(torch.get_num_threads())
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        referee = Referee(scorer, ["A <mask> has fur.", "A <mask> can fly."], np.arange(5, 15))
        first = referee.canonical(0, [0, 3])
        referee.canonical(1, [1])
        assert seen == [1, 1] and torch.get_num_threads() == 2 and scorer.batch_size == 8
        assert torch.equal(referee.canonical(0, [3, 0]), first.flip(0))  # kept, not run again
        assert seen == [1, 1] and referee.settled.prompts == 2
    finally:
        torch.set_num_threads(threads)


def test_canonical_scores_side_by_side_are_those_alone(tiny_bert):
    """Settling a batch's rows (issue 47): at two threads the referee runs the prompts alone two
    at a time, each a batch of one on one thread: the same computation, so the same values
    as one after another, each prompt counted once; then the threads, the batch size and the
    mask-rows hook as they were."""
    import threading

    from tacit.ranking.vocabulary import Referee

    prompts = ["A <mask> has fur.", "A <mask> can fly.", "A <mask> is red.", "The <mask> barks."]
    requests = [(0, [0, 3]), (1, [1]), (2, [2, 4]), (3, [0]), (0, [5])]
    scorer = MaskedLMScorer(tiny_bert, device="cpu", batch_size=8)
    seen = []
    scorer.model.register_forward_pre_hook(
        lambda module, inputs: seen.append((torch.get_num_threads(), threading.get_ident()))
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        in_turn = Referee(scorer, prompts, np.arange(5, 15))
        expected = [in_turn.canonical(row, at) for row, at in requests]
        assert {ident for _, ident in seen} == {threading.get_ident()}
        seen.clear()
        side_by_side = Referee(scorer, prompts, np.arange(5, 15))
        side_by_side.prepare(requests)
        assert len(seen) == len(prompts) and {n for n, _ in seen} == {1}
        assert threading.get_ident() not in {ident for _, ident in seen}  # the workers ran them
        for (row, at), values in zip(requests, expected):
            assert torch.equal(side_by_side.canonical(row, at), values)
        assert len(seen) == len(prompts) and side_by_side.settled.prompts == len(prompts)
        assert torch.get_num_threads() == 2 and scorer.batch_size == 8
        assert scorer._hooked == 0 and not any(m._forward_hooks for m in scorer.model.modules())
    finally:
        torch.set_num_threads(threads)


def test_tiled_linear_rows_are_the_same_in_any_tile():
    """A row of a tiled product is the same bits whatever the rows around it and however many
    there are (tacit.models.invariant), and equals the plain product within float error."""
    from tacit.models.invariant import TILE_ROWS, tiled_linear

    torch.manual_seed(0)
    layer = torch.nn.Linear(48, 80)
    rows = torch.randn(3 * TILE_ROWS + 5, 48)
    whole = tiled_linear(layer, rows)
    torch.testing.assert_close(whole, layer(rows))
    for first, count in [(0, 1), (7, 3), (TILE_ROWS - 1, 2), (40, TILE_ROWS + 9)]:
        part = tiled_linear(layer, rows[first : first + count].unsqueeze(0))
        assert torch.equal(part[0], whole[first : first + count])


@pytest.fixture(scope="module")
def wide_heads_roberta(tmp_path_factory) -> str:
    """A small RoBERTa with roberta-base's attention heads (64 wide): the tiny models' 16-wide
    heads give the same bits padded or not, where a real model's do not."""
    from support import save_tiny_roberta, tiny_roberta_tokenizer

    directory = tmp_path_factory.mktemp("wide-heads-roberta")
    tokenizer = tiny_roberta_tokenizer(directory)
    save_tiny_roberta(directory, tokenizer, hidden_size=128, intermediate_size=256)
    return str(directory)


@pytest.mark.parametrize("which", ["tiny_bert", "tiny_roberta", "wide_heads_roberta"])
def test_invariant_batches_are_the_prompts_alone(which, request, two_threads):
    """On a CPU a masked LM's batches are of one token length with tiled linear layers
    (MaskedLMScorer.batches_invariant): each prompt's scores are those of the prompt scored
    alone on one thread, bit for bit, at any batch size, so the tie rule leaves them as they
    are (ScoredBatch.fixed)."""
    from tacit.models.batching import one_at_a_time

    model_dir = request.getfixturevalue(which)
    prompts = [f"A <mask> has {w}." for w in ("fur", "claws", "a tail")] + [
        "The <mask> is big and has fur.",
        "A big <mask> has claws, fur and a tail.",
        "A <mask> barks.",
    ]
    ids = np.arange(5, 40)
    alone = MaskedLMScorer(model_dir, device="cpu")
    with one_at_a_time(alone):
        expected = [next(alone.score_vocab([p], ids, progress=False)).shared[0] for p in prompts]
    for size in (1, 2, 7):
        scorer = MaskedLMScorer(model_dir, device="cpu", batch_size=size)
        for batch in scorer.score_vocab(prompts, ids, progress=False):
            assert batch.fixed is not None and batch.fixed.all()
            assert batch.work == {"tie_invariant_texts": len(batch.shared)}
            for row, at in zip(batch.rows, batch.batch_rows):
                assert torch.equal(batch.shared[at], expected[row]), (size, prompts[row])
        assert scorer.batches_invariant()


def test_retrieval_settles_nothing_in_invariant_batches(tiny_roberta, toy_norms_path, two_threads):
    """No noise built in: the batches are the prompts alone, so no near tie needs settling, and
    the manifest says how many texts were scored that way; ensembles of paraphrases too."""
    for templates in ("paper", "paraphrases"):
        scorer = MaskedLMScorer(tiny_roberta, device="cpu", batch_size=4)
        result = tacit.retrieve(
            [scorer], norms=toy_norms_path, max_props=2, templates=templates, quiet=True
        )
        record = result.manifest["models"][0]
        asked = result.prompts["prompt"]
        assert record["tie_invariant_texts"] == asked[asked.str.contains("<mask>")].nunique()
        assert "tie_prompts" not in record or record["tie_prompts"] == 0, templates


def test_batches_that_differ_from_alone_fall_back_to_settling(tiny_bert, toy_norms_path):
    """Where a machine's kernels make a batch differ from the prompt alone (here: noise built in
    above batch size 1), the first batch's check says so in one warning, and every near tie is
    settled on the prompt alone as before: the ranks stay those of batch size 1."""
    scorer = scorers(tiny_bert, MaskedLMScorer, "bear", "cat")[7]
    with pytest.warns(TacitWarning, match="differs from it scored alone on this machine"):
        result = tacit.retrieve([scorer], norms=toy_norms_path, max_props=2, quiet=True)
    record = result.manifest["models"][0]
    assert not scorer.batches_invariant() and "tie_invariant_texts" not in record
    assert record["tie_prompts"] > 0
    assert (result.prompts.loc[result.prompts["target"] == "bear", "rank"] == 2).all()
