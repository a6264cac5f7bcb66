"""The elicit probe (ElicitProbe): its declaration and how it plans and finishes a run
(tacit.probes.elicit says what the probe is)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.core.errors import TacitError
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe, Work
from tacit.probes.elicit.listing import LISTING_METRICS, LISTING_PRIMARY
from tacit.probes.elicit.options import ElicitOptions
from tacit.probes.elicit.plans import State, asked_prompts, prompt_counts, with_shots
from tacit.probes.manifest_keys import RankedOrAskedManifest, RankingCounts

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import RunOptions
    from tacit.core.params import Context
    from tacit.models.base import Needs, RunModel
    from tacit.probes.elicit.scoring import Golds
    from tacit.ranking.candidates import Candidates
    from tacit.templates import TemplateSet


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
    primary = Metric(
        "map_vocab",
        "mAP",
        True,
        "map_vocab_ci_low",
        "map_vocab_ci_high",
        "n_concepts",
        row="ap_vocab",
        chance="map_vocab_chance",
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "map_sens",
            "mAP (sensitive)",
            True,
            "map_sens_ci_low",
            "map_sens_ci_high",
            row="ap_sens",
        ),
        Metric(
            "spearman_mean", "Spearman", True, "spearman_ci_low", "spearman_ci_high", row="spearman"
        ),
    )
    keys = ("model", "relation", "prefix")
    limit = "concepts"

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
        """A run by generation reports the norming task's metrics (recall weighted by pf
        first), not average precision."""
        from tacit.probes.elicit.listing import by_generation

        return ElicitByGeneration() if by_generation(manifest) else self

    def plan(self, models: Sequence[RunModel], values: ElicitOptions, run: RunOptions) -> Plan:
        from tacit.core.option_names import option
        from tacit.probes.asking import check_generation_options, refuse_scoring_options
        from tacit.probes.elicit.free_listing import FREE_LISTING, check_free_listing
        from tacit.probes.elicit.options import CANDIDATES
        from tacit.probes.elicit.prompts import asking_about, check_prefixes, unasked
        from tacit.probes.shared_options import (
            SPAN_PARAMS,
            SUFFIX_TOP,
            chosen_norms,
            norms_record,
            nothing_left,
            refuse_span_options,
            requested_concepts,
        )
        from tacit.probes.suffix_top import refuse_over_spans
        from tacit.templates import load_templates
        from tacit.templates.questions import QUESTIONS

        check_generation_options(values, self.name)
        if values.by == "generation":
            refuse_scoring_options(values, self.name, (CANDIDATES, *SPAN_PARAMS, SUFFIX_TOP))
            if FREE_LISTING in (values.relations or []):
                from tacit.probes.elicit.free_listing import plan_free_listing

                return plan_free_listing(chosen_norms(values), values, run)
        else:
            if FREE_LISTING in (values.relations or []):
                check_free_listing(values)
            if values.questions != QUESTIONS.default:
                raise TacitError(
                    f"{self.name}: {option(QUESTIONS.flag)} is an option of {option('--by')} "
                    "generation"
                )
            refuse_span_options(values, values.candidates, SPAN_PARAMS, "answers")
            refuse_over_spans(values.suffix_top, values.candidates)
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
        if values.by == "generation":
            from tacit.probes.elicit.generation import plan_generation

            return plan_generation(norms, values, relations, prefixes, run, templates)
        golds_of = self._vocab_golds if values.candidates == "vocab" else self._span_golds
        state, golds, needs = golds_of(models, norms, values, relations, prefixes, run, templates)
        work = self._work(state.prompts, golds, needs)
        known = {"norms": norms_record(norms)}  # in the manifest, and `probe runs` before it
        return Plan(work, values, state.candidates, manifest=known, state=state)

    def _work(self, prompts: pd.DataFrame, golds: Golds, needs: Needs) -> Work:
        """Every model ranks every prompt's gold answers (tacit.probes.elicit.scoring): a chunk
        of prompts at a time, an item's templates together; over spans, a prompt text costs a
        sentence per candidate of its relation."""
        from tacit.probes.candidates import span_cost
        from tacit.probes.elicit.scoring import score_elicitation
        from tacit.probes.paraphrase import ITEM, paraphrased
        from tacit.ranking import SpanCandidates

        key = ITEM if paraphrased(prompts) else "prompt"
        cost = None
        if isinstance(golds.candidates, SpanCandidates):
            sizes = {r: len(s.spans) for r, s in golds.candidates.sets.items()}
            cost = span_cost(key, lambda rows: rows["relation"].map(sizes))
        return Work(
            prompts,
            key,
            lambda scorer, rows, bar: score_elicitation(
                rows, scorer, golds, progress=bar, offset=len(prompts)
            ),
            needs=needs,
            cost=cost,
        )

    def _vocab_golds(
        self,
        models: Sequence[RunModel],
        norms: Any,
        values: ElicitOptions,
        relations: list[str],
        prefixes: list[bool],
        run: RunOptions,
        templates: TemplateSet,
    ) -> tuple[State, Golds, Needs]:
        """Each relation's one-word answers, ranked among the shared vocabulary."""
        import numpy as np

        from tacit.probes.elicit.prompts import (
            NO_WORD_IN_VOCABULARY,
            build_elicitation_prompts,
            gold_answers,
        )
        from tacit.probes.elicit.scoring import Golds
        from tacit.ranking import SharedVocabulary
        from tacit.ranking.candidates import Candidates, vocab_needs

        needs = vocab_needs([t for r in relations for t in templates.for_relation(r)], "answers")
        candidates = Candidates.shared_vocabulary(models, run, needs, self.name)
        vocab = candidates.vocab
        golds = gold_answers(norms, vocab, relations)
        prompts = build_elicitation_prompts(
            golds.answers, relations, prefixes, values.concepts, templates=templates
        )
        prompts, dropped = asked_prompts(prompts, norms, values, run, NO_WORD_IN_VOCABULARY)
        prompts, _, _ = with_shots(prompts, norms, values, prefixes, run, templates)
        answers = golds.answers
        sensible = {
            r: np.array(sorted({vocab.index(w) for w in words}))
            for r in relations
            if len(words := answers.loc[answers.relation == r, "word"])
        }
        state = State(
            norms,
            prefixes,
            prompts,
            candidates,
            golds.excluded,
            templates,
            relations,
            sensible,
            dropped=dropped,
            shots=values.shots,
        )
        return state, Golds(SharedVocabulary(vocab, suffix_top=values.suffix_top), sensible), needs

    def _span_golds(
        self,
        models: Sequence[RunModel],
        norms: Any,
        values: ElicitOptions,
        relations: list[str],
        prefixes: list[bool],
        run: RunOptions,
        templates: TemplateSet,
    ) -> tuple[State, Golds, Needs]:
        """Each relation's answers ranked among spans: every answer people gave to it
        (`answers`) or a FILE's, in the blank of each of the relation's templates. A span some
        model's tokenizer does not read whole is refused in a FILE, and left out (counted) among
        the norms' answers."""
        from tacit.probes.candidates import relation_answers
        from tacit.probes.elicit.options import CANDIDATE_SETS
        from tacit.probes.elicit.prompts import (
            NO_CANDIDATE,
            build_span_prompts,
            concept_free,
            span_golds,
        )
        from tacit.probes.elicit.scoring import Golds
        from tacit.probes.shots import in_context
        from tacit.ranking import SpanCandidates
        from tacit.ranking.candidates import (
            SPAN_NEEDS,
            Candidates,
            read_candidates,
            refuse_unreadable,
            unreadable_spans,
        )

        given = values.candidates
        chosen = None if given == "answers" else read_candidates(given, CANDIDATE_SETS)
        spans = (
            chosen.spans
            if chosen is not None
            else sorted({span for r in relations for span in relation_answers(norms, r)["span"]})
        )
        unread = unreadable_spans(spans, models)
        if chosen is not None:
            refuse_unreadable(chosen, unread)
        sets, gold, left_out = span_golds(norms, relations, chosen, unread)
        prompts = build_span_prompts(gold, relations, prefixes, values.concepts, templates)
        prompts, dropped = asked_prompts(prompts, norms, values, run, NO_CANDIDATE)
        prompts, contexts, _ = with_shots(prompts, norms, values, prefixes, run, templates)
        free = concept_free(prompts, templates) if values.normalize == "pmi" else {}
        ranked = SpanCandidates(
            dict(sets),
            values.span_scoring,
            values.normalize,
            in_context(free.__getitem__, contexts),
            values.token_scores,
        )
        sensible = {}
        for relation in relations:
            index = sets[relation].index()
            answering = set(gold.loc[gold["relation"] == relation, "span"])
            sensible[relation] = [index[s] for s in sets[relation].spans if s in answering]
        candidates = Candidates(spans=ranked)
        state = State(
            norms,
            prefixes,
            prompts,
            candidates,
            left_out,
            templates,
            relations,
            sensible,
            unread=unread,
            dropped=dropped,
            shots=values.shots,
        )
        return state, Golds(ranked, sensible), SPAN_NEEDS

    def finish(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: RunOptions
    ) -> Outcome:
        from tacit.core.manifest import with_keys
        from tacit.probes.elicit.prompts import PAPER_PROMPTS
        from tacit.probes.elicit.report import paper_norms
        from tacit.probes.elicit.summary import summarize_elicitation
        from tacit.probes.shots import shots_record
        from tacit.probes.suffix_top import suffix_top_record
        from tacit.probes.token_rows import TOKENS_TABLE, token_table

        state: State = plan.state
        values, candidates = plan.values, state.candidates
        if candidates is None:
            from tacit.probes.elicit.generation import finish_generation

            return finish_generation(state, values, rows, manifest, run)
        relations, spans = state.relations, candidates.vocabulary is None
        tokens = None
        if candidates.token_scores:
            rows, tokens = token_table(rows, ["prompt"])
        added: dict[str, Any] = dict(candidates.record(manifest["models"]))
        added["options"] = {"relations": relations, "prefix": values.prefix}
        if values.shots:
            added["options"]["shots"] = shots_record(values.shots)
        if values.suffix_top and not spans:
            added["options"]["suffix_top"] = suffix_top_record(values.suffix_top)
        if spans:
            added["options"].update(
                candidates=str(values.candidates),
                span_scoring=values.span_scoring,
                normalize=values.normalize,
            )
        added["options"]["concepts"] = values.concepts
        added["templates"] = state.templates.record()
        added["counts"] = prompt_counts(state)
        if spans:
            added["counts"]["answers_not_candidates"] = state.left_out.to_dict("records")
            added["counts"]["answers_not_read_whole"] = state.unread
        else:
            if paper_norms(with_keys(manifest, added)):
                added["counts"]["paper_prompts_by_relation"] = {
                    r: PAPER_PROMPTS[r] for r in relations if r in PAPER_PROMPTS
                }
            added["counts"].update(
                sensible_vocabulary_by_relation={r: len(v) for r, v in state.sensible.items()},
                features_excluded=state.left_out.to_dict("records"),
            )
        added["counts"]["spearman_undefined"] = int(rows["spearman"].isna().sum())
        summary = summarize_elicitation(
            rows,
            seed=run.seed,
            n_candidates=None if spans else len(candidates.vocab),
            n_sensible={r: len(v) for r, v in state.sensible.items()},
        )
        extra = {"answers_left_out" if spans else "excluded": state.left_out}
        extra["dropped"] = state.dropped
        if tokens is not None:
            extra[TOKENS_TABLE] = tokens
        return Outcome(
            rows,
            summary,
            added,
            extra,
            self._files(values, candidates),
            vocab=candidates.vocabulary,
        )

    @staticmethod
    def _files(values: ElicitOptions, candidates: Candidates) -> dict[str, str]:
        """candidates.txt for a FILE of spans, candidates-<relation>.txt for `answers`."""
        if candidates.vocabulary is not None:
            return {}
        return candidates.files(named=values.candidates == "answers")

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """With the prefix (the paper's main condition), every relation pooled (`all`, or the
        run's one relation), first; then each relation, then the same without the prefix."""
        from tacit.probes.elicit.summary import ALL
        from tacit.probes.paraphrase import ensemble_rows

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
        from tacit.probes.paraphrase import ensemble_rows

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
        from tacit.probes.elicit.listing import by_generation
        from tacit.probes.run_notes import scored_over

        relations = (manifest.get("options") or {}).get("relations") or []
        found = {**scored_over(manifest), "relations": ", ".join(relations)}
        if by_generation(manifest):  # recall, not mAP
            found["metric"] = LISTING_PRIMARY.label
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
    """Elicitation as a run by generation reports it: the norming task's metrics
    (tacit.probes.elicit.generation)."""

    primary = LISTING_PRIMARY
    metrics = LISTING_METRICS
