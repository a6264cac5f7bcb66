"""The retrieve probe (RetrieveProbe): its declaration, its questions and how it finishes a run
(tacit.probes.retrieve says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from tacit.ask.base import Asking, AskSpec, choose
from tacit.core.errors import TacitError
from tacit.core.numbers import counted
from tacit.core.option_names import option
from tacit.probes.base import Condition, Outcome, Plan, Probe
from tacit.probes.manifest_keys import RankedOrAskedManifest, RankingCounts
from tacit.probes.retrieve.metrics import HITS_AT_10, MRR, P_AT_1, TARGET_PROB, TARGET_PROB_SHARED
from tacit.probes.retrieve.options import RetrieveOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.ask.base import Ask
    from tacit.ask.shots import Demonstrations
    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.probes.retrieve.prompts import PromptSet
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
    templates: TemplateSet


def prompt_keys(rows: pd.DataFrame) -> list[str]:
    """The columns that tell a model's prompts apart (the template too, where there are
    several)."""
    from tacit.probes.retrieve.prompts import PROMPT_COLUMNS

    keys = [c for c in PROMPT_COLUMNS if c != "target"]
    return [*keys, "template"] if "template" in rows else keys


def within_limit(prompt_set: PromptSet, run: Planning) -> PromptSet:
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
    norms: Any, conditions: list[Any], templates: TemplateSet, values: RetrieveOptions, seed: int
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
        seed=seed,
        articles=articles_table(values.articles, templates),
    )


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
    asks = (
        AskSpec("vocabulary"),
        AskSpec(
            "spans", extra=("articles",), recorded=("candidates", "articles"), own=("concepts",)
        ),
        AskSpec("words"),
    )
    primary = MRR
    metrics = (P_AT_1, HITS_AT_10, TARGET_PROB, TARGET_PROB_SHARED)
    keys = ("model", "selection", "order", "category", "n_props")
    limit = "concepts"

    def plan(self, models: Sequence[RunModel], values: RetrieveOptions, run: Planning) -> Plan:
        from tacit.ask.paraphrase import TEMPLATE
        from tacit.ask.shots import in_context
        from tacit.matching import concept_matcher
        from tacit.probes.retrieve.fills import a_before_blank, retrieval_fills
        from tacit.probes.retrieve.prompts import (
            COLUMNS,
            asked_concepts,
            build_prompts,
            check_categories,
            name_problem,
            retrieval_conditions,
        )
        from tacit.probes.retrieve.spans import ConceptPhrases, articles_table
        from tacit.probes.shared_options import chosen_norms, norms_record, nothing_left
        from tacit.ranking.spans import span_alone
        from tacit.templates import load_templates

        ask = choose(values, self.asks, self.name)
        templates = load_templates(values.templates)
        norms = chosen_norms(values)
        conditions = retrieval_conditions(
            values.selection, values.order, values.category, values.ablation
        )
        check_categories(norms, conditions)
        fills = retrieval_fills(templates, spans=ask.form == "phrase")
        needs = ask.needs(templates.retrieval, "concepts")
        given = values.concepts is not None
        as_word = partial(name_problem, a_rule=a_before_blank(templates, spans=False))
        eligible, dropped = asked_concepts(
            norms, values.concepts, partial(ask.cannot, as_word=as_word)
        )
        if not eligible:  # said before any tokenizer or model loads
            raise nothing_left(dropped, "retrieve", given=given)
        ask.prepare(models, needs, run)
        eligible, dropped = asked_concepts(
            norms, values.concepts, partial(ask.cannot, as_word=as_word)
        )
        prompt_set = build_prompts(
            norms,
            eligible,
            conditions,
            dropped=dropped,
            max_props=values.max_props,
            seed=run.seed,
            fills=fills,
        )
        if prompt_set.prompts.empty:
            hint = "see `probe norms show --model ...`" if len(dropped) and not given else ""
            raise nothing_left(prompt_set.dropped, "retrieve", given=given, hint=hint)
        prompt_set = within_limit(prompt_set, run)
        shots = shots_of(norms, conditions, templates, values, run.seed)
        prompts, contexts = ask.shown(prompt_set.prompts, shots)
        prompt_set = replace(prompt_set, prompts=prompts)
        phrases = ConceptPhrases(norms, templates, articles_table(values.articles, templates))
        prompt_set = self._candidates(ask, phrases, prompt_set)
        set_of = phrases.set_of()
        prompts = prompt_set.prompts
        matcher = cache(lambda: concept_matcher(norms.concepts))  # what answers in words name
        asking = Asking(
            answers=lambda rows: [[target] for target in rows["target"]],
            sets=(lambda rows: [set_of[t] for t in rows[TEMPLATE]]) if set_of else None,
            texts=phrases.text,
            labels=next(iter(phrases.names.values())),
            shares=True,
            asks="concept",
            matchers=lambda rows: matcher(),
            keys=prompt_keys,
        )
        work = ask.work(prompts, asking, COLUMNS, baseline=in_context(span_alone, contexts))
        state = State(norms, conditions, prompt_set, templates)
        known = {"norms": norms_record(norms)}  # in the manifest, and `probe runs` before it
        return Plan(work, values, ask=ask, manifest=known, state=state)

    @staticmethod
    def _candidates(ask: Ask, phrases: Any, prompt_set: PromptSet) -> PromptSet:
        """What the targets are ranked among, where the Ask ranks spans: every concept's phrase
        (`concepts`) or a FILE's spans, which must hold every target. A phrase some model's
        tokenizer does not read whole is refused in a FILE, and left out (its concept dropped,
        with the reason) among the norms' concepts."""
        targets = list(prompt_set.prompts["concept"].unique())
        sets, unread = ask.candidate_sets(
            phrases.sets, one=phrases.one_file(), without=phrases.sets
        )
        left_out = phrases.unread_concepts(targets, unread)
        targets = [c for c in targets if c not in left_out]
        if not targets:
            raise TacitError("no concept is left to probe: no model reads any whole")
        for name in sets:
            missing = sorted({phrases.text(name, c) for c in targets} - set(sets[name].spans))
            if missing:
                raise TacitError(
                    f"{option('--candidates')} {ask.value('candidates')}: every target must be a "
                    f"candidate; {len(missing)} are not (e.g. "
                    f"{', '.join(repr(m) for m in missing[:3])})"
                )
        return prompt_set.without(left_out) if left_out else prompt_set

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        from tacit.ask.shots import shots_counts, shots_record
        from tacit.probes.retrieve.prompts import retrieval_counts
        from tacit.probes.retrieve.summary import summarize_retrieval

        state: State = plan.state
        values, ask = plan.values, plan.asked
        done = ask.finish(rows, manifest["models"], keys=["prompt"])
        rows = done.rows
        added: dict[str, Any] = dict(done.record)
        added["options"] = {
            "max_props": values.max_props,
            "selection": values.selection or "top",
            "order": values.order or "decreasing",
            "category": values.category or "all",
            "ablation": values.ablation,
            "conditions": [asdict(c) for c in state.conditions],
            "concepts": values.concepts,
            "bootstrap": {"resamples": 1000, "confidence": 0.95, "unit": "concept"},
            **({"shots": shots_record(values.shots)} if values.shots else {}),
            **done.options,
        }
        added["counts"] = retrieval_counts(state.prompt_set, len(rows))
        added["counts"].update(shots_counts(state.prompt_set.prompts, values.shots))
        added["templates"] = state.templates.record()
        summary = summarize_retrieval(rows, seed=run.seed, n_candidates=ask.candidate_count())
        extra = {"dropped": state.prompt_set.dropped, **done.extra}
        return Outcome(rows, summary, added, extra, done.files, vocab=ask.vocabulary)

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
