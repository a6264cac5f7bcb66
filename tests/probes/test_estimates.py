"""Each probe's estimate of its prompts (what `probe sweep --dry-run` prints) honours every
option (issue 31): with candidate spans nothing is dropped for the vocabulary, so the estimate
is exactly the number of prompts the probe's plan builds; over the vocabulary it is an upper
bound."""

from __future__ import annotations

import pytest

from tacit.core.options import RunOptions
from tacit.models.resolved import resolved_models
from tacit.probes import registry

RETRIEVE = [
    {},
    {"concepts": ["bear", "cat"]},
    {"category": "visual"},
    {"category": "functional", "concepts": ["apple", "bear"]},
    {"ablation": "ordering"},
    {"ablation": "category", "max_props": 2},
    {"selection": "random", "order": "increasing"},
    {"max_props": 2, "concepts": ["dog", "zebra", "knife"]},
]
ELICIT = [
    {},
    {"concepts": ["bear", "cat"]},
    {"relations": ["has"]},
    {"prefix": "both"},
    {"prefix": False, "relations": ["is", "is a"], "concepts": ["knife", "dog"]},
]


def planned(name: str, given: dict, models: list) -> tuple[int | None, int]:
    probe = registry.get(name)
    values = probe.validate(given)
    run = RunOptions(quiet=True)
    plan = probe.plan(resolved_models(models, run), values, run.planning())
    return probe.estimate(values), len(plan.work.rows)


@pytest.mark.parametrize("options", RETRIEVE)
def test_retrieval_estimates_its_prompts(toy_norms_path, options):
    estimate, built = planned(
        "retrieve", {"norms": str(toy_norms_path), "candidates": "concepts", **options}, []
    )
    assert estimate == built


@pytest.mark.parametrize("options", ELICIT)
def test_elicitation_estimates_its_prompts(toy_norms_path, options):
    estimate, built = planned(
        "elicit", {"norms": str(toy_norms_path), "candidates": "answers", **options}, []
    )
    assert estimate == built


@pytest.mark.parametrize(("name", "options"), [("retrieve", RETRIEVE[1]), ("elicit", ELICIT[4])])
def test_over_the_vocabulary_the_estimate_is_an_upper_bound(
    tiny_bert, toy_norms_path, name, options
):
    given = {"norms": str(toy_norms_path), **options}
    estimate, built = planned(name, given, [tiny_bert])
    assert estimate is not None and 0 < built <= estimate
