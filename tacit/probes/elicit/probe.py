"""The elicit probe (ElicitProbe): its declaration, its questions and how it finishes a run
(tacit.probes.elicit says what the probe is)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.ask.base import Asking, AskSpec, choose, yielded
from tacit.core.errors import TacitError
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe
from tacit.probes.elicit.metrics import (
    LISTING_METRICS,
    LISTING_PRIMARY,
    MAP_SENS,
    MAP_VOCAB,
    SPEARMAN,
)
from tacit.probes.elicit.options import ElicitOptions
from tacit.probes.manifest_keys import RankedOrAskedManifest, RankingCounts

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.core.params import Context
    from tacit.models.base import RunModel
    from tacit.probes.elicit.plans import State


class ElicitProbe(Probe[ElicitOptions]):
    name = "elicit"
    manifest_keys = RankedOrAskedManifest
    model_keys = RankingCounts
    report_class = "tacit.probes.elicit.report:ElicitReport"
    description = "Ask for a concept's properties: `Everyone knows that a bear has <mask>.`"
    help = """Each concept with at least one one-word answer for a relation (`has fur_hair`
    answers `has` with fur and hair) gets a prompt; the model's distribution at `<mask>` is
    scored against those answers: average precision over the shared vocabulary (ap_vocab) and
    over every answer of that relation (ap_sens), and Spearman's rho between the answers'
    production frequencies and the model's probabilities. Prints the paper's Table 1 layout."""
    options = ElicitOptions
    primary = MAP_VOCAB
    metrics: ClassVar[tuple[Metric, ...]] = (MAP_SENS, SPEARMAN)
    keys = ("model", "relation", "prefix")
    limit = "concepts"
    asks = (
        AskSpec("vocabulary"),
        AskSpec(
            "spans",
            recorded=("candidates", "span_scoring", "normalize"),
            own=("answers",),
            files="named",
        ),
        AskSpec("words"),
    )

    def validate(
        self, given: Mapping[str, Any], *, context: Context = "api", where: str = ""
    ) -> ElicitOptions:
        """As declared, and the relations against the template file's (its own names: a
        sweep file is checked whole before any cell runs)."""
        from tacit.probes.elicit.free_listing import FREE_LISTING
        from tacit.probes.elicit.options import RELATIONS_PARAM
        from tacit.templates import load_templates

        values = super().validate(given, context=context, where=where)
        if values.relations is not None and FREE_LISTING not in values.relations:
            templates = load_templates(values.templates)
            label = where + RELATIONS_PARAM.label(context)
            for relation in values.relations:
                if relation not in templates.relations:
                    raise TacitError(
                        f"{label} {relation!r}: expected one of "
                        f"{', '.join(templates.relations) or 'none'} (the relations of "
                        f"--templates {templates.source})"
                    )
        return values

    def as_run(self, manifest: Manifest) -> ElicitProbe:
        """The probe as the run reports: by what its Ask yielded (Ask.yields), ranks' average
        precision, or the norming task's metrics of answers in words."""
        chosen = DECLARED[yielded(manifest)]
        return self if type(self) is chosen else _declared(chosen)

    def plan(self, models: Sequence[RunModel], values: ElicitOptions, run: Planning) -> Plan:
        from tacit.ask.shots import in_context
        from tacit.probes.elicit.free_listing import FREE_LISTING, plan_free_listing
        from tacit.probes.elicit.plans import GOLDS, State, asked_prompts, elicitation_columns
        from tacit.probes.elicit.prompts import (
            asking_about,
            check_prefixes,
            concept_free,
            feature_matchers,
            prompt_keys,
            unasked,
        )
        from tacit.probes.shared_options import (
            chosen_norms,
            norms_record,
            nothing_left,
            requested_concepts,
        )
        from tacit.templates import load_templates

        if FREE_LISTING in (values.relations or []):  # its own questions: every property
            return plan_free_listing(self, models, values, run)
        ask = choose(values, self.asks, self.name)
        prefix = values.prefix
        prefixes: list[bool] = [True, False] if prefix == "both" else [bool(prefix)]
        templates = load_templates(values.templates)
        relations = templates.chosen_relations(values.relations)
        values = replace(values, relations=relations)
        check_prefixes(templates, relations, prefixes)
        norms = chosen_norms(values)
        concepts = requested_concepts(norms, values.concepts)
        unanswered = unasked(norms, relations, concepts)
        if len(unanswered) == len(concepts) * len(relations):  # before anything loads
            raise nothing_left(
                unanswered, asking_about(relations), given=values.concepts is not None
            )
        needs = ask.needs([t for r in relations for t in templates.for_relation(r)], "answers")
        ask.prepare(models, needs, run)
        golds = GOLDS[ask.form](norms, ask, relations, prefixes, values, templates)
        prompts, dropped = asked_prompts(golds.prompts, norms, values, run, golds.why)
        prompts, contexts = ask.shown(prompts, self._shots(norms, values, prefixes, run, templates))
        free = cache(lambda: concept_free(prompts, templates))  # --normalize pmi's baseline
        matchers = cache(lambda: feature_matchers(norms, prompts))  # what answers in words name
        asking = Asking(
            answers=lambda rows: [[a for a, _ in golds.parse(g)] for g in rows["gold"]],
            sets=lambda rows: list(rows["relation"]),
            subsets=golds.sensible,
            subset_of=lambda rows: list(rows["relation"]),
            asks="answers",
            matchers=lambda rows: [
                matchers()[pair] for pair in zip(rows["concept"], rows["relation"])
            ],
            keys=prompt_keys,
        )
        columns = elicitation_columns(golds.parse, norms.table)
        baseline = in_context(lambda prompt: free()[prompt], contexts)
        work = ask.work(prompts, asking, columns, baseline=baseline)
        state = State(norms, prefixes, prompts, golds, templates, relations, dropped, values.shots)
        known = {"norms": norms_record(norms)}  # in the manifest, and `probe runs` before it
        return Plan(work, values, ask=ask, manifest=known, state=state)

    @staticmethod
    def _shots(
        norms: Any, values: ElicitOptions, prefixes: list[bool], run: Planning, templates: Any
    ) -> Any:
        """The run's demonstrations (`--shots`: tacit.ask.shots), or None without."""
        if values.shots == 0:
            return None
        from tacit.probes.elicit.prompts import demonstrations

        return demonstrations(
            norms, values.relations or [], prefixes, templates, k=values.shots, seed=run.seed
        )

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        import pandas as pd

        from tacit.ask.shots import shots_record
        from tacit.core.manifest import with_keys
        from tacit.probes.elicit.generated import LISTING_SUMMARY
        from tacit.probes.elicit.plans import answered, prompt_counts
        from tacit.probes.elicit.summary import SUMMARY
        from tacit.probes.summary import summarise

        SUMMARIES = {"ranks": SUMMARY, "answers": LISTING_SUMMARY}  # by what the Ask yields

        state: State = plan.state
        values, ask = plan.values, plan.asked
        done = ask.finish(rows, manifest["models"], keys=["prompt"])
        rows, dropped = answered(done.rows, state.dropped)
        state = replace(state, dropped=dropped)
        added: dict[str, Any] = dict(done.record)
        added["options"] = {
            "relations": state.relations,
            "prefix": values.prefix,
            **({"shots": shots_record(values.shots)} if values.shots else {}),
            **done.options,
            "concepts": values.concepts,
        }
        added["templates"] = state.templates.record()
        added["counts"] = prompt_counts(state)
        added["counts"].update(state.golds.counts(with_keys(manifest, added)))
        added["counts"]["spearman_undefined"] = int(rows["spearman"].isna().sum())
        context = {
            "n_candidates": ask.candidate_count(),
            "n_sensible": {r: len(v) for r, v in state.golds.sensible.items()},
        }
        further = state.golds.further(rows, done.extra)  # a free listing's, per relation
        scored = pd.concat([rows, *further.values()], ignore_index=True) if further else rows
        summary = summarise(scored, SUMMARIES[ask.yields], seed=run.seed, context=context)
        extra = {**state.golds.extra, "dropped": state.dropped, **done.extra, **further}
        return Outcome(rows, summary, added, extra, done.files, vocab=ask.vocabulary)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """With the prefix (the paper's main condition), every relation pooled (`all`, or the
        run's one relation), first; then each relation, then the same without the prefix."""
        from tacit.ask.paraphrase import ensemble_rows
        from tacit.probes.elicit.options import ALL

        summary = ensemble_rows(summary)  # with several templates, their ensemble's

        prefixed = summary["prefix"].astype(str) == "True"
        found = []
        for prefix in (True, False):
            rows = summary[prefixed == prefix]
            for relation in sorted(dict.fromkeys(rows["relation"]), key=lambda r: r != ALL):
                label = (
                    ("with" if prefix else "without")
                    + " prefix, "
                    + ("all relations" if relation == ALL else relation)
                )
                found.append((label, rows[rows["relation"] == relation]))
        return found

    def main_scores(self, rows: pd.DataFrame, manifest: Manifest, **_: Any) -> pd.DataFrame | None:
        """Each prompt's average precision in the main condition (with the prefix, every
        relation; with several templates, their ensemble's), the concept its unit."""
        from tacit.ask.paraphrase import ensemble_rows

        rows = ensemble_rows(rows)
        prefixed = rows["prefix"].astype(str) == "True"
        chosen = rows[prefixed] if prefixed.any() else rows
        return chosen.assign(unit=chosen["concept"], value=chosen[self.primary.row])[
            ["model", "unit", "value"]
        ]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        """What every norms-based run must share (vocabulary or candidates, norms, concepts,
        templates), and the relations: `all` pools the relations a run asked for, so runs of
        other relations pool other prompts under the same name; a run by generation reports
        another metric, so it never stands beside a run by scoring."""
        from tacit.probes.run_notes import scored_over

        relations = (manifest.get("options") or {}).get("relations") or []
        found = {**scored_over(manifest), "relations": ", ".join(relations)}
        primary = self.as_run(manifest).primary
        if primary != MAP_VOCAB:  # another metric than mAP: never beside a run of mAP
            found["metric"] = primary.label
        return found

    def estimate(self, values: ElicitOptions) -> int | None:
        """Concepts with an answer to each relation, per prefix (before the vocabulary)."""
        from tacit.probes.shared_options import chosen_norms
        from tacit.templates import load_templates

        templates = load_templates(values.templates)
        table = chosen_norms(values).table
        if values.concepts is not None:
            table = table[table["concept"].isin(values.concepts)]
        relations = templates.chosen_relations(values.relations)
        pairs = table[table["relation"].isin(relations)]
        pairs = pairs.drop_duplicates(["concept", "relation"])
        per_pair = pairs["relation"].map({r: len(templates.for_relation(r)) for r in relations})
        return int(per_pair.sum()) * (2 if values.prefix == "both" else 1)

    def keeps(self, norms: Any, vocab: Any) -> str | None:
        """Elicitation's prompts per relation, and the features left out and why."""
        from tacit.core.choices import RELATIONS
        from tacit.probes.elicit.prompts import build_elicitation_prompts, gold_answers

        golds = gold_answers(norms, vocab, RELATIONS)
        built = build_elicitation_prompts(golds.answers, RELATIONS, [True])
        prompts = built.groupby("relation").size()
        lines = [
            "elicitation prompts: " + ", ".join(f"{r} {int(prompts.get(r, 0))}" for r in RELATIONS)
        ]
        for row in golds.excluded.itertuples():
            lines.append(
                f"  {row.relation}: {row.features} features answer it, {row.kept} kept; left out "
                f"{row.multi_word} of more than one word, {row.out_of_vocabulary} out of the "
                "shared vocabulary"
            )
        return "\n".join(lines)


class ElicitByGeneration(ElicitProbe):
    """Elicitation as a run asked in words reports it: the norming task's metrics
    (tacit.probes.elicit.generated)."""

    primary = LISTING_PRIMARY
    metrics = LISTING_METRICS


# elicitation as a run reports it, by what its Ask yields
DECLARED: dict[str, type[ElicitProbe]] = {"ranks": ElicitProbe, "answers": ElicitByGeneration}


@cache
def _declared(probe: type[ElicitProbe]) -> ElicitProbe:
    """One instance of each (probes are stateless)."""
    return probe()
