"""The structure probe (StructureProbe): its declaration, its plans (two norm sets; a model
by scoring; by generation, generation.py's listing and yes_no.py's verification) and how a
run becomes the analyses of tacit.structure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tacit.ask.base import Asking, AskSpec, choose
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.probes.base import Metric, Outcome, Plan, Probe, Whole
from tacit.probes.manifest_keys import RankingCounts
from tacit.probes.structure.common import draws, options_record, reference_matrix
from tacit.probes.structure.options import AUC_OTHER, RSA, StructureManifest, StructureOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.norms import NormSet
    from tacit.probes.structure.scoring import Features
    from tacit.templates import TemplateSet

NO_PROMPTS = ["model", "relation", "concept", "template", "prompt", "top"]


@dataclass
class NormsState:
    """Two norm sets compared: `--norms` (a) against the reference `--against` (b)."""

    a: NormSet
    b: NormSet


@dataclass
class ScoringState:
    norms: NormSet
    features: Features
    templates: TemplateSet
    relations: list[str]
    limited: list[str]  # concepts --limit left out


class StructureProbe(Probe[StructureOptions]):
    name = "structure"
    description = "Concept structure: a model's concept x feature matrix against people's"
    help = """Makes a concept x feature matrix of each model (by scoring: every one-word
    feature's log-probability at elicitation's blank, one pass per prompt, or with
    --candidates answers every feature's as exact spans; by generation: how many draws of
    the norming task named it) or of a second norm set (--against, no model),
    and compares it with the norms': representational similarity with a Mantel test, the
    people's split-half ceiling, feature verification, category structure and MDS maps, the
    answer-space prior; intervals over concepts, chance by permuting them."""
    options = StructureOptions
    primary = RSA
    metrics: ClassVar[tuple[Metric, ...]] = ()
    keys = ("model",)
    limit = "concepts"
    models_required = False
    manifest_keys = StructureManifest
    model_keys = RankingCounts
    report_class = "tacit.probes.structure.report:StructureReport"
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

    def as_run(self, manifest: Manifest) -> StructureProbe:
        """A yes/no run (`--verification yes-no`) has no matrix: its primary metric is the
        AUC against other categories' features, not RSA."""
        options: Any = manifest.get("options") or {}
        return _yes_no() if options.get("verification") == "yes-no" else self

    def plan(self, models: Sequence[RunModel], values: StructureOptions, run: Planning) -> Plan:
        from tacit.probes.shared_options import chosen_norms, norms_record

        if values.against is not None:
            return self._plan_norms(models, values, run)
        if not models:
            raise TacitError(
                f"structure: give {option('--model')} (a model's structure against "
                f"{option('--norms')}) or {option('--against')} FILE (two norm sets, no model)"
            )
        if values.participants is not None:
            raise TacitError(
                f"structure: {option('--participants')} is for two norm sets "
                f"({option('--against')})"
            )
        ask = choose(values, self.asks, self.name)
        if values.verification == "yes-no":
            from tacit.probes.structure.yes_no import plan_yes_no

            return plan_yes_no(models, values, run, ask)
        if ask.name == "words":
            return self._plan_generation(models, values, run)
        if values.write_norms is not None:
            raise TacitError(
                f"structure: {option('--write-norms')} is for {option('--by')} generation"
            )
        return self._plan_scoring(models, values, run, ask, chosen_norms(values), norms_record)

    def _plan_generation(
        self, models: Sequence[RunModel], values: StructureOptions, run: Planning
    ) -> Plan:
        """Elicitation's free listing (the norming task), each draw a participant."""
        from tacit.probes.elicit.free_listing import plan_free_listing
        from tacit.probes.structure.generation import GenerationState, listing_options

        listing = plan_free_listing(self, models, listing_options(values), run)
        listing.values, listing.state = values, GenerationState(listing.state.norms)
        return listing

    def _plan_norms(
        self, models: Sequence[RunModel], values: StructureOptions, run: Planning
    ) -> Plan:
        """Two norm sets, no model: nothing to score."""
        from tacit.norms import NormSet, load_norms
        from tacit.probes.shared_options import chosen_norms, norms_record

        if values.verification == "yes-no":
            raise TacitError(
                f"structure: {option('--verification')} yes-no asks a model; "
                f"{option('--against')} compares two norm sets"
            )
        if models:
            raise TacitError(
                f"structure: {option('--against')} compares two norm sets: give no "
                f"{option('--model')}"
            )
        if values.concepts is not None or run.limit is not None:
            flag = option("--concepts") if values.concepts is not None else option("--limit")
            raise TacitError(
                f"structure: {flag} is for a model's run; {option('--against')} compares every "
                "concept the two norm sets share"
            )
        a = chosen_norms(values)
        against = values.against
        b = against if isinstance(against, NormSet) else load_norms(against)
        import pandas as pd

        known = {"norms": norms_record(a), "against": norms_record(b)}
        empty = pd.DataFrame(columns=NO_PROMPTS)
        return Plan(None, values, manifest=known, state=NormsState(a, b), given=(empty, []))

    def _plan_scoring(
        self,
        models: Sequence[RunModel],
        values: StructureOptions,
        run: Planning,
        ask: Any,
        norms: NormSet,
        norms_record: Any,
    ) -> Plan:
        """Every concept asked about every relation with a feature kept, once per template:
        the whole vocabulary's distribution read at each blank (its one-word features), or
        with candidate spans every feature's texts scored in it."""
        from tacit.probes.shared_options import limit_concepts, requested_concepts
        from tacit.probes.structure.scoring import (
            asked_words,
            relation_sets,
            score_columns,
            scored_features,
            scoring_prompts,
            span_features,
        )
        from tacit.templates import load_templates

        templates = load_templates(values.templates)
        relations = templates.chosen_relations(values.relations)
        concepts = requested_concepts(norms, values.concepts)
        needs = ask.needs([t for r in relations for t in templates.for_relation(r)], "answers")
        ask.prepare(models, needs, run)
        spans = ask.name == "spans"
        features = (span_features if spans else scored_features)(norms, relations, ask)
        if not features.words:
            kept = "a text the models read" if spans else "a word in the shared vocabulary"
            raise TacitError(f"structure: no feature of {', '.join(relations)} has {kept}")
        prompts = scoring_prompts(concepts, features, templates)
        prompts, limited = limit_concepts(prompts, run)
        asking = Asking(
            answers=asked_words(features), top_k=1, sets=relation_sets if spans else None
        )
        work = ask.work(prompts, asking, score_columns(features))
        state = ScoringState(norms, features, templates, relations, limited)
        per_feature = int(prompts["relation"].map(lambda r: len(features.words[r])).sum())
        usual = ("one prompt per feature word (each word scored in its own pass)", per_feature)
        return Plan(
            work,
            values,
            ask=ask,
            manifest={"norms": norms_record(norms)},
            state=state,
            usual=None if spans else usual,  # spans: a pass per prompt and candidate already
        )

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        """The reference norms, the similarity and the concepts (paired.comparable); a yes/no
        run reports another metric, so it never stands beside a run of RSA."""
        from tacit.probes.structure import paired

        found = paired.comparable(manifest)
        if self.primary is not RSA:
            found["metric"] = self.primary.label
        return found

    def whole(self, directory: Path, manifest: Manifest, model: str) -> Whole | None:
        """A model's matrix and the reference, read from the run (paired.whole)."""
        from tacit.probes.structure import paired

        return paired.whole(directory, manifest, model)

    def compare_wholes(
        self, a: Whole, b: Whole, *, seed: int, n_resamples: int, confidence: float
    ) -> dict[str, Any]:
        """The RSA difference of two models and its paired bootstrap over concepts."""
        from tacit.probes.structure import paired

        return paired.compare_wholes(
            a, b, seed=seed, n_resamples=n_resamples, confidence=confidence
        )

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        if isinstance(plan.state, NormsState):
            return self._finish_norms(plan, run)
        from tacit.probes.structure.generation import GenerationState, finish_listing
        from tacit.probes.structure.yes_no import YesNoState, finish_yes_no

        if isinstance(plan.state, GenerationState):
            return finish_listing(plan, rows, manifest, run)
        if isinstance(plan.state, YesNoState):
            return finish_yes_no(plan, rows, manifest, run)
        return self._finish_scoring(plan, rows, manifest, run)

    def _finish_norms(self, plan: Plan, run: Planning) -> Outcome:
        from tacit.probes.structure.outcome import parts
        from tacit.structure import compare_norms
        from tacit.structure.concepts import other_names

        values: StructureOptions = plan.values
        state: NormsState = plan.state
        name_a = state.a.name or state.a.path.name
        name_b = state.b.name or state.b.path.name
        if name_a == name_b:
            name_a, name_b = f"{name_a} (--norms)", f"{name_b} (--against)"
        found = compare_norms(
            state.a,
            state.b,
            categories=values.categories,
            concept_map=other_names(values.categories) if values.categories else None,
            n_participants_a=values.participants,
            names=(name_a, name_b),
            similarity=values.similarity or "cosine",  # type: ignore[arg-type]
            **draws(values, run),
        )
        made = parts([(name_a, found)], found.b)
        added = {
            "structure": made.record,
            "options": options_record(values, found.record["options"]["similarity"]),
            "counts": {"left_out": found.record["left_out"], "shape": found.record["shape"]},
        }
        rows = plan.given[0] if plan.given is not None else made.summary.iloc[:0]
        return Outcome(rows, made.summary, added, made.extra, made.files, made.figures)

    def _finish_scoring(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning
    ) -> Outcome:
        from tacit.probes.structure.outcome import parts
        from tacit.probes.structure.scoring import SCORES, scored_matrix
        from tacit.structure import compare_matrices

        values: StructureOptions = plan.values
        state: ScoringState = plan.state
        done = plan.asked.finish(rows, manifest["models"])
        reference = reference_matrix(state.norms, values)
        similarity = values.similarity or "correlation"
        name = state.norms.name or state.norms.path.name
        compared = []
        spans = plan.asked.name == "spans"
        options: dict[str, Any] = {
            "value": "log-probability",
            "relations": state.relations,
            "by": "scoring",
        }
        if spans:  # the provenance says how the spans were scored
            options.update(done.options)
        for model, group in done.rows.groupby("model", sort=False):
            matrix = scored_matrix(group, state.features, reference, options)
            found = compare_matrices(
                matrix,
                reference,
                reference_norms=state.norms,
                names=(str(model), name),
                similarity=similarity,  # type: ignore[arg-type]
                space="log",
                **draws(values, run),
            )
            compared.append((str(model), found))
        made = parts(compared, reference)
        added: dict[str, Any] = dict(done.record)
        added["structure"] = made.record
        added["options"] = {**options_record(values, similarity), **done.options}
        added["templates"] = state.templates.record()
        asked = plan.work.rows if plan.work is not None else None
        per_relation = {r: len(w) for r, w in state.features.words.items()}
        added["counts"] = {
            "prompts_per_model": int(len(asked)) if asked is not None else 0,
            ("spans_per_relation" if spans else "words_per_relation"): per_relation,
            "features_scored": len(state.features.of_feature),
            "features_left_out_by_reason": {r: len(f) for r, f in state.features.left_out.items()},
            "concepts_left_out_by_limit": len(state.limited),
        }
        if spans:  # every candidate of its relation's set in each prompt's blank, once
            added["counts"]["span_scorings_per_model"] = (
                int(asked["relation"].map(per_relation).sum()) if asked is not None else 0
            )
            added["counts"]["spans_not_read_whole"] = state.features.unread
        shown = done.rows.drop(columns=[SCORES])  # the matrix files hold every score
        files = {**made.files, **done.files}  # by spans, each relation's candidates too
        return Outcome(
            shown, made.summary, added, made.extra, files, made.figures, plan.asked.vocabulary
        )


class StructureYesNo(StructureProbe):
    """A structure run that asked its verification items yes or no."""

    primary = AUC_OTHER

    def whole(self, directory: Path, manifest: Manifest, model: str) -> Whole | None:
        """A model's answers to the primary metric's items (yes_no.whole)."""
        from tacit.probes.structure import yes_no

        return yes_no.whole(directory, model)

    def compare_wholes(
        self, a: Whole, b: Whole, *, seed: int, n_resamples: int, confidence: float
    ) -> dict[str, Any]:
        """Two models' AUC on the items both answered, by a paired bootstrap over concepts."""
        from tacit.probes.structure import yes_no

        return yes_no.compare_wholes(
            a, b, seed=seed, n_resamples=n_resamples, confidence=confidence
        )


@cache
def _yes_no() -> StructureYesNo:
    return StructureYesNo()
