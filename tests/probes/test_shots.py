"""Few-shot demonstrations (`--shots K`, issue 46): which concepts are shown before a prompt
(never the concept, never one of its category), that the draw is seeded and does not depend
on the batch, that by scoring the text scored is the demonstrations and then the prompt (a
causal model's score of it equal to plain transformers'), that `--normalize pmi` baselines
are led by the same demonstrations, and that by generation each one is a question answered.

On the toy norms (tests/support.py TOY_NORMS), the `is a` rows give bear the category
`animal` and cat and dog `pet`; knife, apple, bat, coffee machine and zebra have none.
"""

from __future__ import annotations

import json

import pytest
from support import Scripted, causal_span_reference, fails_cleanly, seq2seq_reference

import tacit
from tacit.ask.shots import CATEGORY_RULE, categories
from tacit.core.options import RunOptions
from tacit.models.resolved import resolved_models
from tacit.norms import load_norms
from tacit.probes import registry

# every concept of the toy norms; those with at least 2 properties
EVERY = {"bear", "cat", "dog", "knife", "apple", "bat_(animal)", "coffee_machine", "zebra"}
TWO_OR_MORE = {"bear", "cat", "dog", "knife", "apple"}


def _shown(cell: str) -> set[str]:
    return set(cell.split(" | ")) if cell else set()


def test_a_category_is_the_is_a_answer_of_highest_pf(toy_norms_path):
    assert categories(load_norms(toy_norms_path)) == {
        "bear": {"animal"},
        "cat": {"pet"},
        "dog": {"pet"},
    }


def test_demonstrations_never_show_the_concept_or_its_category(toy_norms_path):
    """K = 6 with one and two properties. One property: every concept has a prompt, so cat
    (and dog) see the six concepts that are neither cat nor dog, a pet; bear sees six of the
    seven others; knife (no category) may see cat, dog and bear. Two properties: only five
    concepts have a prompt, so cat sees bear, knife and apple, and each of the five prompts
    gets fewer than K, counted."""
    result = tacit.retrieve(
        [Scripted({}, default="1. bear")],
        norms=toy_norms_path,
        by="generation",
        max_props=2,
        shots=6,
    )
    rows = result.prompts.set_index(["concept", "n_props"])
    assert _shown(rows.loc[("cat", 1), "shots"]) == EVERY - {"cat", "dog"}
    assert _shown(rows.loc[("dog", 1), "shots"]) == EVERY - {"cat", "dog"}
    assert _shown(rows.loc[("cat", 2), "shots"]) == {"bear", "knife", "apple"}
    assert _shown(rows.loc[("bear", 2), "shots"]) == TWO_OR_MORE - {"bear"}
    for (concept, n), row in rows.iterrows():
        shown = _shown(row["shots"])
        excluded = {"cat", "dog"} if concept in ("cat", "dog") else {concept}
        assert not shown & excluded
        assert len(shown) == min(6, len((EVERY if n == 1 else TWO_OR_MORE) - excluded))
    assert _shown(rows.loc[("knife", 2), "shots"]) == {"bear", "cat", "dog", "apple"}
    assert result.manifest["counts"]["prompts_with_fewer_shots_than_k"] == 5
    assert result.manifest["options"]["shots"] == {
        "k": 6,
        "separator": " ",
        "category": CATEGORY_RULE,
    }


@pytest.mark.slow
def test_the_draw_is_seeded_not_batched(toy_norms_path, tiny_bert):
    """The same demonstrations (and texts scored) at batch sizes 1 and 16 and on a rerun;
    another --seed draws others."""
    runs = [
        tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=3, shots=2, batch_size=b)
        for b in (1, 16, 16)
    ]
    first = runs[0].prompts
    for other in runs[1:]:
        assert list(other.prompts["shots"]) == list(first["shots"])
        assert list(other.prompts["prompt"]) == list(first["prompt"])
        assert list(other.prompts["rank"]) == list(first["rank"])
    reseeded = tacit.retrieve([tiny_bert], norms=toy_norms_path, max_props=3, shots=2, seed=1)
    assert list(reseeded.prompts["shots"]) != list(first["shots"])


def test_the_text_scored_is_the_demonstrations_then_the_prompt(toy_norms_path, tiny_bert):
    """Elicitation of `has`, one demonstration: 'Everyone knows that a bear has fur.' (bear's
    answer of highest pf: fur_hair's fur and hair tie at 20, fur first) or zebra's stripes
    (the only concepts that answer `has` besides cat and dog, both pets), before the prompt;
    every other column as without demonstrations."""
    filled = {
        "bear": "Everyone knows that a bear has fur.",
        "cat": "Everyone knows that a cat has fur.",
        "dog": "Everyone knows that a dog has fur.",
        "zebra": "Everyone knows that a zebra has stripes.",
    }
    plain = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has"]).prompts
    shown = tacit.elicit([tiny_bert], norms=toy_norms_path, relations=["has"], shots=1).prompts
    assert list(shown["concept"]) == list(plain["concept"]) == ["bear", "cat", "dog", "zebra"]
    for (_, row), base in zip(shown.iterrows(), plain["prompt"]):
        assert row["prompt"] == f"{filled[row['shots']]} {base}"
        assert row["prompt"].count("<mask>") == 1
    assert set(shown.loc[shown["concept"].isin(["cat", "dog"]), "shots"]) <= {"bear", "zebra"}
    for column in ("concept", "gold", "n_gold", "relation", "prefix"):
        assert list(shown[column]) == list(plain[column])


def test_retrieval_fills_the_blank_as_it_takes_the_concept(toy_norms_path, tiny_bert):
    """Vocabulary mode writes `A <mask>`; a demonstration reads as the concept's span does:
    'An apple is red.', 'A bat flies.', 'A coffee machine makes coffee.'"""
    prompts = tacit.retrieve(
        [tiny_bert], norms=toy_norms_path, max_props=1, shots=7, concepts=["zebra"]
    ).prompts
    text = prompts.loc[0, "prompt"]
    for sentence in ("An apple is red.", "A bat flies.", "A coffee machine makes coffee."):
        assert sentence in text
    assert text.endswith(" A <mask> has stripes.") and text.count("<mask>") == 1


def _causal_total(model, text, span):
    return causal_span_reference(model, [text], [span])[1][0, 0]


def _seq2seq_total(model, text, span):
    return seq2seq_reference(model, [text], [span])[0][0, 0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fixture", "plain"), [("tiny_gpt2", _causal_total), ("tiny_t5", _seq2seq_total)]
)
def test_the_score_is_of_the_whole_text(fixture, plain, toy_norms_path, request):
    """Over candidate spans, a causal model's score of the target in a prompt with
    demonstrations is plain transformers' log-probability of that exact text; a seq2seq
    model's, of the target infilled in it."""
    model = request.getfixturevalue(fixture)
    prompts = tacit.retrieve(
        [model],
        norms=toy_norms_path,
        candidates="concepts",
        max_props=2,
        shots=2,
        concepts=["bear", "knife"],
    ).prompts
    assert (prompts["shots"].str.count(r" \| ") == 1).all()
    for row in prompts.itertuples():
        assert row.target_score == pytest.approx(
            plain(model, row.prompt, row.target_span), abs=1e-4
        )


@pytest.mark.parametrize("probe_name", ["retrieve", "elicit"])
def test_pmi_baselines_are_led_by_the_same_demonstrations(probe_name, toy_norms_path, tiny_gpt2):
    """`--normalize pmi`: retrieval's baseline (the span alone, '<mask>.') and elicitation's
    (the prompt with 'it' for the concept) follow the prompt's own demonstrations."""
    probe = registry.get(probe_name)
    given = {"norms": str(toy_norms_path), "normalize": "pmi", "shots": 2}
    if probe_name == "retrieve":
        given |= {"candidates": "concepts", "max_props": 2}
    else:
        given |= {"candidates": "answers", "relations": ["has"]}
    run = RunOptions(quiet=True)
    plan = probe.plan(resolved_models([tiny_gpt2], run), probe.validate(given), run.planning())
    spans = plan.asked.ranked
    for prompt in plan.work.rows["prompt"]:
        baseline = spans.baseline_of(prompt)
        if probe_name == "retrieve":
            shown, _, _ = prompt.rpartition(" <mask> ")
            assert baseline == f"{shown} <mask>."
        else:
            shown, _, _ = prompt.rpartition(" Everyone knows that a")
            assert baseline == f"{shown} Everyone knows that it has <mask>."
        assert shown.endswith(".") and shown.count(".") == 2


class _Base(Scripted):
    """A base model (no chat template): it reads the plain prompt."""

    def chats(self) -> bool:
        return False

    def _generate(self, requests, sampling, progress):
        from tacit.models.answers import GenerationRequest

        return super()._generate(
            [GenerationRequest.chat([{"role": "user", "content": r.prompt}]) for r in requests],
            sampling,
            progress,
        )


def test_generation_asks_each_demonstration_as_a_question_answered(toy_norms_path, tmp_path):
    """A chat model gets a user and an assistant turn per demonstration (retrieval's answer
    the name, numbered; elicitation's the concept's answers by pf, up to --guesses) before
    the question; a base model, `Question: ...\\nAnswer: ...` blocks; messages.jsonl shows
    them as sent."""
    result = tacit.retrieve(
        [Scripted({})],
        norms=toy_norms_path,
        by="generation",
        max_props=1,
        shots=2,
        concepts=["cat"],
    )
    result.save(tmp_path / "retrieve")
    [sent] = [json.loads(line) for line in (tmp_path / "retrieve" / "messages.jsonl").open()]
    messages = sent["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    shown = result.prompts.loc[0, "shots"].split(" | ")
    names = {"apple": "apple", "coffee_machine": "coffee machine", "bat_(animal)": "bat"}
    assert [m["content"] for m in messages[1:4:2]] == [f"1. {names.get(c, c)}" for c in shown]
    assert messages[-1]["content"].startswith("Which concept has fur?")
    assert messages[0]["content"] != messages[-1]["content"]

    listing = tacit.elicit(
        [Scripted({})],
        norms=toy_norms_path,
        by="generation",
        relations=["has"],
        shots=1,
        guesses=2,
        concepts=["zebra"],
    )
    listing.save(tmp_path / "elicit")
    [sent] = [json.loads(line) for line in (tmp_path / "elicit" / "messages.jsonl").open()]
    assert listing.prompts.loc[0, "shots"] in ("bear", "cat", "dog")  # zebra: no category
    assert sent["messages"][1]["content"] == "1. fur\n2. hair"  # fur_hair, pf order, up to 2
    assert "a zebra has ___" in sent["messages"][2]["content"]

    base = _Base({})
    tacit.retrieve(
        [base],
        norms=toy_norms_path,
        by="generation",
        max_props=1,
        shots=1,
        concepts=["knife"],
    )
    [prompt] = base.asked
    demonstration, asked = prompt.split("\n\n")
    assert demonstration.startswith("Question: Which concept ")
    assert "?" in demonstration and "\nAnswer: 1. " in demonstration
    assert asked.startswith("Question: Which concept cuts?") and asked.endswith("\nAnswer:")


def test_a_negative_number_of_shots_is_one_line(toy_norms_path, tmp_path):
    fails_cleanly(
        ["retrieve", "-m", "x", "--norms", toy_norms_path, "--shots", "-1"],
        "--shots",
        tmp_path / "o",
    )
