"""The retrieve probe (RetrieveProbe): its declaration and how it plans and finishes a run
(tacit.probes.retrieve says what the probe is)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.core.numbers import counted
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe, Work
from tacit.probes.manifest_keys import RankedOrAskedManifest, RankingCounts
from tacit.probes.retrieve.options import RetrieveOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.ask.candidates import Candidates
    from tacit.ask.shots import Demonstrations
    from tacit.core.manifest import Manifest
    from tacit.core.options import RunOptions
    from tacit.matching.match import Matcher
    from tacit.models.answers import Sampling
    from tacit.models.base import Needs, RunModel
    from tacit.probes.retrieve.prompts import PromptSet
    from tacit.probes.retrieve.scoring import Targets
    from tacit.templates import TemplateSet

MAIN_CONDITION = ("top", "decreasing", "all")  # what a leaderboard shows of an ablation


def _main_condition(frame: pd.DataFrame, n_props: int | None) -> tuple[tuple[str, ...], int]:
    """The main condition of a run's summary or prompts (top/decreasing/all where the run has
    several, else its only one) and its largest number of properties (up to `n_props`)."""
    conditions = list(
        dict.fromkeys(frame[["selection", "order", "category"]].itertuples(index=False, name=None))
    )
    main = MAIN_CONDITION if MAIN_CONDITION in conditions or len(conditions) != 1 else conditions[0]
    rows = frame[(frame[["selection", "order", "category"]] == main).all(axis=1)]
    if n_props is not None:
        rows = rows[rows["n_props"] <= n_props]
    if rows.empty:
        raise TacitError(
            f"no prompts of the main condition ({'/'.join(main)})"
            + (f" with at most {counted(n_props, 'property', 'properties')}" if n_props else "")
        )
    return main, int(rows["n_props"].max())


@dataclass
class State:
    norms: Any
    conditions: list[Any]
    prompt_set: PromptSet
    candidates: Candidates | None  # None: by generation
    templates: TemplateSet
    asked: tuple[Sampling, Matcher] | None = None  # by generation: how, and what answers name


def within_limit(prompt_set: PromptSet, run: RunOptions) -> PromptSet:
    """The prompts of the target concepts `--limit` keeps; the others join the dropped
    concepts, with the limit as their reason (the concept list and counts stay honest)."""
    import pandas as pd

    from tacit.probes.shared_options import limit_concepts, limit_reason

    prompts, left_out = limit_concepts(prompt_set.prompts, run)
    if not left_out:
        return prompt_set
    reason = pd.DataFrame({"concept": left_out, "reason": limit_reason(run)})
    kept = set(prompts["concept"])
    short = {k: [c for c in v if c in kept] for k, v in prompt_set.short.items()}
    short = {k: v for k, v in short.items() if v}
    dropped = pd.concat([prompt_set.dropped, reason], ignore_index=True)
    return replace(prompt_set, prompts=prompts, dropped=dropped, short=short)


def shots_of(
    norms: Any,
    conditions: list[Any],
    templates: TemplateSet,
    values: RetrieveOptions,
    run: RunOptions,
) -> Demonstrations | None:
    """The run's demonstrations (`--shots`: tacit.ask.shots), or None without."""
    if values.shots == 0:
        return None
    from tacit.probes.retrieve.prompts import demonstrations
    from tacit.probes.retrieve.spans import articles_table

    return demonstrations(
        norms,
        conditions,
        templates,
        k=values.shots,
        max_props=values.max_props,
        seed=run.seed,
        articles=articles_table(values.articles, templates),
    )


def with_shots(
    prompt_set: PromptSet, shots: Demonstrations | None, *, scoring: bool = True
) -> tuple[PromptSet, dict[str, str]]:
    """The prompts with their demonstrations (by scoring, in the text scored), and each
    prompt text's context; as they were without `--shots`."""
    if shots is None:
        return prompt_set, {}
    prompts, contexts = shots.apply(prompt_set.prompts, scoring=scoring)
    return replace(prompt_set, prompts=prompts), contexts


class RetrieveProbe(Probe[RetrieveOptions]):
    name = "retrieve"
    manifest_keys = RankedOrAskedManifest
    model_keys = RankingCounts
    report_class = "tacit.probes.retrieve.report:RetrieveReport"
    description = "Name the concept from its properties: `A <mask> has fur, is big, and has claws.`"
    help = """For every concept that is one whole-word token in every model, prompts grow from 1
    to --max-props of its properties (highest production frequency first); each model ranks the
    concept among the shared vocabulary at `<mask>` (or, with --candidates, among spans of any
    length). Writes manifest.json, vocab.txt (or candidates.txt), prompts.csv, summary.csv and
    dropped.csv to the run directory and prints MRR and mean target probability by number of
    properties."""
    options = RetrieveOptions
    primary = Metric(
        "mrr",
        "MRR",
        True,
        "mrr_ci_low",
        "mrr_ci_high",
        "n_concepts",
        row="reciprocal_rank",
        chance="mrr_chance",
    )
    metrics = (
        Metric("p_at_1", "P@1", True, "p_at_1_ci_low", "p_at_1_ci_high", "n_concepts"),
        Metric("hits_at_10", "hits@10", True, "hits_at_10_ci_low", "hits_at_10_ci_high"),
        Metric(
            "mean_target_prob",
            "mean target probability",
            True,
            "target_prob_ci_low",
            "target_prob_ci_high",
            row="target_prob",
        ),
        Metric("mean_target_prob_shared", "over the shared vocabulary", row="target_prob_shared"),
    )
    keys = ("model", "selection", "order", "category", "n_props")
    limit = "concepts"

    def plan(self, models: Sequence[RunModel], values: RetrieveOptions, run: RunOptions) -> Plan:
        from tacit.ask.suffix_top import refuse_over_spans
        from tacit.ask.words import check_generation_options, refuse_scoring_options
        from tacit.probes.retrieve.fills import retrieval_fills
        from tacit.probes.retrieve.options import ARTICLES, CANDIDATES
        from tacit.probes.retrieve.prompts import check_categories, retrieval_conditions
        from tacit.probes.shared_options import (
            SPAN_PARAMS,
            SUFFIX_TOP,
            chosen_norms,
            norms_record,
            refuse_span_options,
        )
        from tacit.templates import load_templates

        check_generation_options(values, self.name)
        generation = values.by == "generation"
        if generation:
            refuse_scoring_options(
                values, self.name, (CANDIDATES, *SPAN_PARAMS, ARTICLES, SUFFIX_TOP)
            )
        else:
            refuse_span_options(values, values.candidates, (*SPAN_PARAMS, ARTICLES), "concepts")
            refuse_over_spans(values.suffix_top, values.candidates)
        templates = load_templates(values.templates)
        norms = chosen_norms(values)
        conditions = retrieval_conditions(
            values.selection, values.order, values.category, values.ablation
        )
        check_categories(norms, conditions)
        if generation:
            return self._plan_generation(values, run, norms, conditions, templates)
        fills = retrieval_fills(templates, spans=values.candidates != "vocab")
        prompt_set, candidates, targets, needs = self._targets(
            models, norms, conditions, values, run, templates, fills
        )
        work = self._work(prompt_set.prompts, candidates, targets, needs)
        state = State(norms, conditions, prompt_set, candidates, templates)
        known = {"norms": norms_record(norms)}  # in the manifest, and `probe runs` before it
        return Plan(work, values, candidates, manifest=known, state=state)

    def _plan_generation(
        self,
        values: RetrieveOptions,
        run: RunOptions,
        norms: Any,
        conditions: list[Any],
        templates: TemplateSet,
    ) -> Plan:
        """Retrieval by generation (tacit.probes.retrieve.generation): the prompts of
        retrieval over spans (every concept asked, its article in the blank), asked in words;
        the concepts the answers can name, every concept of the norms."""
        from tacit.ask.words import sampling_of
        from tacit.matching import concept_matcher
        from tacit.models.base import Needs
        from tacit.probes.retrieve.fills import retrieval_fills
        from tacit.probes.retrieve.generation import score_generated
        from tacit.probes.retrieve.prompts import build_prompts
        from tacit.probes.shared_options import norms_record

        prompt_set = build_prompts(
            norms,
            None,
            conditions,
            max_props=values.max_props,
            concepts=values.concepts,
            seed=run.seed,
            fills=retrieval_fills(templates, spans=True),
            a_rule=True,
        )
        if prompt_set.prompts.empty:
            raise TacitError("no concept is left to probe")
        prompt_set = within_limit(prompt_set, run)
        shown = shots_of(norms, conditions, templates, values, run)
        prompt_set, _ = with_shots(prompt_set, shown, scoring=False)
        sampling = sampling_of(values, run.seed)
        matcher = concept_matcher(norms.concepts)
        work = Work(
            prompt_set.prompts,
            "prompt",
            lambda scorer, rows, bar: score_generated(
                rows,
                scorer,
                sampling=sampling,
                matcher=matcher,
                values=values,
                progress=bar,
                shots=shown,
            ),
            needs=Needs.of("generate"),
            sampling=sampling,
        )
        state = State(norms, conditions, prompt_set, None, templates, (sampling, matcher))
        known = {"norms": norms_record(norms)}
        return Plan(work, values, None, manifest=known, state=state)

    def _targets(
        self,
        models: Sequence[RunModel],
        norms: Any,
        conditions: list[Any],
        values: RetrieveOptions,
        run: RunOptions,
        templates: TemplateSet,
        fills: Mapping[str, Any],
    ) -> tuple[PromptSet, Candidates, Targets, Needs]:
        """The prompts, and what their targets are ranked among: the shared vocabulary (the
        concepts that are one token in every model), or spans, every concept a target: the
        norms' concepts with their articles (`concepts`) or a FILE's spans (which must hold
        every target). A span some model's tokenizer does not read whole is refused in a FILE,
        and left out (its concept dropped, with the reason) among the norms' concepts."""
        from tacit.ask.candidates import SPAN_NEEDS, Candidates, vocab_needs
        from tacit.probes.retrieve.fills import a_before_blank
        from tacit.probes.retrieve.prompts import build_prompts, eligible_concepts
        from tacit.probes.retrieve.scoring import Targets
        from tacit.probes.retrieve.spans import span_sets
        from tacit.probes.shared_options import nothing_left
        from tacit.ranking import SharedVocabulary

        vocabulary = values.candidates == "vocab"
        needs = vocab_needs(templates.retrieval, "concepts") if vocabulary else SPAN_NEEDS
        candidates = None
        given = values.concepts is not None
        a_rule = a_before_blank(templates, spans=False) if vocabulary else True
        if vocabulary:
            eligible, dropped = eligible_concepts(norms, None, values.concepts, a_rule)
            if not eligible:  # said before any tokenizer or model loads
                raise nothing_left(dropped, "retrieve", given=given)
            candidates = Candidates.shared_vocabulary(models, run, needs, self.name)
        prompt_set = build_prompts(
            norms,
            candidates.vocab if candidates is not None else None,
            conditions,
            max_props=values.max_props,
            concepts=values.concepts,
            seed=run.seed,
            fills=fills,
            a_rule=a_rule,
        )
        if prompt_set.prompts.empty and vocabulary:
            hint = "" if given else "see `probe norms show --model ...`"
            raise nothing_left(prompt_set.dropped, "retrieve", given=given, hint=hint)
        if prompt_set.prompts.empty:
            raise TacitError("no concept is left to probe")
        prompt_set = within_limit(prompt_set, run)
        shots = shots_of(norms, conditions, templates, values, run)
        prompt_set, contexts = with_shots(prompt_set, shots)
        if candidates is not None:
            vocab = candidates.vocab
            position = {t: vocab.index(t) for t in prompt_set.prompts["target"].unique()}
            return (
                prompt_set,
                candidates,
                Targets(SharedVocabulary(vocab, suffix_top=values.suffix_top), position),
                needs,
            )
        concepts = list(prompt_set.prompts["concept"].unique())
        candidates, targets, unread = span_sets(
            models, norms, templates, values, concepts, run, contexts
        )
        if unread:
            prompt_set = prompt_set.without(unread)
        return prompt_set, candidates, targets, needs

    def _work(
        self, prompts: pd.DataFrame, candidates: Candidates, targets: Targets, needs: Needs
    ) -> Work:
        """Every model ranks every prompt's target (tacit.probes.retrieve.scoring): a chunk of
        prompts at a time, an item's templates together; over spans, a prompt text costs a
        sentence per candidate."""
        from tacit.ask.candidates import span_cost
        from tacit.ask.paraphrase import ITEM, paraphrased
        from tacit.probes.retrieve.scoring import score_prompts

        key = ITEM if paraphrased(prompts) else "prompt"
        sizes = {len(s.spans) for s in candidates.sets.values()}  # spans: every set's, one
        return Work(
            prompts,
            key,
            lambda scorer, rows, bar: score_prompts(
                rows, scorer, targets, progress=bar, offset=len(prompts)
            ),
            needs=needs,
            cost=span_cost(key, lambda rows: max(sizes)) if sizes else None,
        )

    def finish(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: RunOptions
    ) -> Outcome:
        from tacit.ask.shots import shots_counts, shots_record
        from tacit.ask.suffix_top import suffix_top_record
        from tacit.ask.tokens import TOKENS_TABLE, token_table
        from tacit.probes.retrieve.prompts import retrieval_counts
        from tacit.probes.retrieve.summary import summarize_retrieval

        state: State = plan.state
        values = plan.values
        candidates = state.candidates
        extra = {"dropped": state.prompt_set.dropped}
        files: dict[str, str] = {}
        added: dict[str, Any] = {}
        if candidates is None:  # by generation: what was said, kept beside the ranks
            from tacit.probes.retrieve.generation import finish_generated

            assert state.asked is not None
            rows, more, files, added["generation"] = finish_generated(rows, *state.asked, values)
            extra.update(more)
            spans = True
        else:
            spans = candidates.vocabulary is None
            if candidates.token_scores:
                rows, extra[TOKENS_TABLE] = token_table(rows, ["prompt"])
            added.update(candidates.record(manifest["models"]))
            files = candidates.files() if spans else {}
        added["options"] = {
            "max_props": values.max_props,
            "selection": values.selection or "top",
            "order": values.order or "decreasing",
            "category": values.category or "all",
            "ablation": values.ablation,
            "conditions": [asdict(c) for c in state.conditions],
            "concepts": values.concepts,
            "bootstrap": {"resamples": 1000, "confidence": 0.95, "unit": "concept"},
            **({"by": values.by} if values.by != "scoring" else {}),
            **({"shots": shots_record(values.shots)} if values.shots else {}),
            **(
                {"suffix_top": suffix_top_record(values.suffix_top)}
                if values.suffix_top and not spans
                else {}
            ),
            **(
                {
                    "candidates": str(values.candidates),
                    "articles": str(values.articles) if values.articles else None,
                }
                if spans and candidates is not None
                else {}
            ),
        }
        added["counts"] = retrieval_counts(state.prompt_set, len(rows))
        added["counts"].update(shots_counts(state.prompt_set.prompts, values.shots))
        added["templates"] = state.templates.record()
        summary = summarize_retrieval(
            rows,
            seed=run.seed,
            n_candidates=None if spans or candidates is None else len(candidates.vocab),
        )
        return Outcome(
            rows,
            summary,
            added,
            extra,
            files,
            vocab=None if candidates is None else candidates.vocabulary,
        )

    def conditions(
        self, summary: pd.DataFrame, manifest: Manifest, *, n_props: int | None = None, **_: Any
    ) -> list[Condition]:
        """At the run's largest number of properties (or the largest up to `n_props`): the
        main condition (an ablation's top/decreasing/all, labelled with the number) first,
        then the others."""
        from tacit.ask.paraphrase import ensemble_rows
        from tacit.probes.retrieve.summary import condition_labels

        summary = ensemble_rows(summary)  # with several templates, their ensemble's
        main, n = _main_condition(summary, n_props)
        at_n = summary[summary["n_props"] == n]
        labels = condition_labels(at_n)
        first = "/".join(main)
        found = [
            (
                f"{counted(n, 'property', 'properties')}, {label}" if label == first else label,
                at_n[labels == label],
            )
            for label in dict.fromkeys(labels)
        ]
        return sorted(found, key=lambda c: not c[0].endswith(first))

    def main_scores(
        self, rows: pd.DataFrame, manifest: Manifest, *, n_props: int | None = None, **_: Any
    ) -> pd.DataFrame | None:
        """Each prompt's reciprocal rank at the main condition (with several templates, their
        ensemble's), the concept its unit."""
        from tacit.ask.paraphrase import ensemble_rows

        rows = ensemble_rows(rows)
        main, n = _main_condition(rows, n_props)
        chosen = rows[
            (rows[["selection", "order", "category"]] == main).all(axis=1) & (rows["n_props"] == n)
        ]
        return chosen.assign(unit=chosen["concept"], value=chosen["reciprocal_rank"])[
            ["model", "unit", "value"]
        ]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        from tacit.probes.run_notes import scored_over

        return scored_over(manifest)

    def estimate(self, values: RetrieveOptions) -> int | None:
        """At most how many prompts: every question once per retrieval template."""
        from tacit.probes.retrieve.prompts import estimated_prompts, retrieval_conditions
        from tacit.probes.shared_options import chosen_norms
        from tacit.templates import load_templates

        conditions = retrieval_conditions(
            values.selection, values.order, values.category, values.ablation
        )
        questions = estimated_prompts(
            chosen_norms(values), conditions, values.max_props, values.concepts
        )
        return questions * len(load_templates(values.templates).retrieval)

    def keeps(self, norms: Any, vocab: Any) -> str | None:
        """The concepts retrieval keeps as targets, and why the rest are dropped."""
        from tacit.probes.retrieve.prompts import eligible_concepts
        from tacit.probes.run_notes import describe_drops, listed

        eligible, dropped = eligible_concepts(norms, vocab)
        lines = [f"retrieval: {describe_drops(dropped, len(eligible))}"]
        for reason, rows in dropped.groupby("reason", sort=False):
            lines.append(f"  {reason}: {listed(list(rows['concept']), 12)}")
        return "\n".join(lines)
