"""The structure probe (StructureProbe): its declaration, its plans (two norm sets; a model
by scoring) and how a run becomes the analyses of tacit.structure."""

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
from tacit.probes.structure.options import AUC_OTHER, RSA, StructureManifest, StructureOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.norms import NormSet
    from tacit.probes.structure.scoring import Features
    from tacit.structure import ConceptFeatureMatrix
    from tacit.templates import TemplateSet

NO_PROMPTS = ["model", "relation", "concept", "template", "prompt", "top"]


@dataclass
class NormsState:
    """Two norm sets compared: `--norms` (a) against the reference `--against` (b)."""

    a: NormSet
    b: NormSet


@dataclass
class GenerationState:
    norms: NormSet


@dataclass
class YesNoState:
    norms: NormSet
    items: pd.DataFrame  # the verification items asked (yes_no_items)
    left_out: dict[str, tuple[str, ...]]  # what verification_items left out
    limited: list[str]  # concepts --limit left out


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
            return self._plan_yes_no(models, values, run, ask)
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
        from tacit.probes.structure.generation import listing_options

        listing = plan_free_listing(self, models, listing_options(values), run)
        listing.values, listing.state = values, GenerationState(listing.state.norms)
        return listing

    def _plan_yes_no(
        self, models: Sequence[RunModel], values: StructureOptions, run: Planning, ask: Any
    ) -> Plan:
        """Each verification item of the (limited) concepts asked yes or no (yes_no.py)."""
        import pandas as pd

        from tacit.matching.verdict import VerdictMatcher
        from tacit.probes.shared_options import (
            chosen_norms,
            limit_concepts,
            norms_record,
            requested_concepts,
        )
        from tacit.probes.structure.yes_no import KEYS, VERDICT_FIELDS, yes_no_items

        if ask.name != "words":
            raise TacitError(
                f"structure: {option('--verification')} yes-no is asked by generation "
                f"({option('--by')} generation); by scoring, the matrix's log-probabilities "
                "verify the features"
            )
        if values.write_norms is not None:
            raise TacitError(
                f"structure: {option('--write-norms')} writes a free listing's norms; "
                f"{option('--verification')} yes-no lists nothing"
            )
        norms = chosen_norms(values)
        reference = _reference(norms, values)
        wanted = set(requested_concepts(norms, values.concepts))
        asked = pd.DataFrame({"concept": [c for c in reference.concepts if c in wanted]})
        asked, limited = limit_concepts(asked, run)
        reference = reference.select(concepts=list(asked["concept"]))
        phrases = dict(zip(norms.table["feature"], norms.table["phrase"]))
        items, left_out = yes_no_items(reference, phrases, run.seed)
        if items.empty:
            raise TacitError(
                "structure: no feature to verify: no concept asked has a category (or domain) "
                "with a feature it lacks"
            )
        ask.prepare(models, ask.needs([], ""), run)
        matcher = VerdictMatcher.of()
        asking = Asking(
            answers=lambda rows: [[f] for f in rows["feature"]],
            asks="verify",
            matchers=lambda rows: matcher,
            keys=lambda rows: KEYS,
        )
        work = ask.work(items, asking, VERDICT_FIELDS)
        state = YesNoState(norms, items, left_out, limited)
        return Plan(work, values, ask=ask, manifest={"norms": norms_record(norms)}, state=state)

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
        if isinstance(plan.state, GenerationState):
            return self._finish_generation(plan, rows, manifest, run)
        if isinstance(plan.state, YesNoState):
            return self._finish_yes_no(plan, rows, manifest, run)
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
            **_draws(values, run),
        )
        made = parts([(name_a, found)], found.b)
        added = {
            "structure": made.record,
            "options": _options_record(values, found.record["options"]["similarity"]),
            "counts": {"left_out": found.record["left_out"], "shape": found.record["shape"]},
        }
        rows = plan.given[0] if plan.given is not None else made.summary.iloc[:0]
        return Outcome(rows, made.summary, added, made.extra, made.files, made.figures)

    def _finish_generation(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning
    ) -> Outcome:
        from tacit.core.files import write_atomic
        from tacit.probes.structure.generation import draw_counts, listing_matrix, model_norms
        from tacit.probes.structure.outcome import parts, slug
        from tacit.structure import compare_matrices

        values: StructureOptions = plan.values
        people: NormSet = plan.state.norms
        done = plan.asked.finish(rows, manifest["models"], keys=["concept"])
        answers = done.extra["answers"]
        reference = _reference(people, values)
        similarity = values.similarity or "cosine"
        name = people.name or people.path.name
        compared, files = [], {}
        written: dict[str, dict[str, object]] = {}
        models = list(dict.fromkeys(done.rows["model"]))
        unmatched: list[str] = []
        for model in models:
            counts = draw_counts(answers[answers["model"] == model])
            if counts.empty:  # nothing to compare (a random-weight control, often): said, kept
                unmatched.append(str(model))
                written[str(model)] = {"left_out": NOTHING_MATCHED}
                continue
            norms, text, record = model_norms(counts, people)
            files[f"norms/{slug(str(model))}.dat"] = text
            if values.write_norms is not None:
                target = Path(values.write_norms)
                if len(models) > 1:
                    target = target.with_name(f"{target.stem}-{slug(str(model))}{target.suffix}")
                try:
                    write_atomic(target, text)
                except OSError as err:
                    raise TacitError(f"{target}: cannot write the norms ({err.strerror})") from None
                record = {**record, "path": str(target)}
            written[str(model)] = record
            asked = done.rows[done.rows["model"] == model]
            matrix = listing_matrix(norms, dict(zip(asked["concept"], asked["n_draws"])))
            found = compare_matrices(
                matrix,
                reference,
                reference_norms=people,
                a_norms=norms,
                names=(str(model), name),
                similarity=similarity,  # type: ignore[arg-type]
                **_draws(values, run),
            )
            compared.append((str(model), found))
        say_left_out(unmatched, NOTHING_MATCHED.replace("the norms", name), bool(compared))
        made = parts(compared, reference)
        if unmatched:  # a row each, with no numbers: n_concepts 0
            import pandas as pd

            rows_of = pd.DataFrame({"model": unmatched, "n_concepts": 0})
            made.summary = pd.concat([made.summary, rows_of], ignore_index=True)
        added: dict[str, Any] = dict(done.record)
        added["structure"] = made.record
        added["options"] = {
            **_options_record(values, similarity),
            **done.options,
            "samples": values.samples,
            "temperature": values.temperature,
        }
        added["counts"] = {"prompts_per_model": len(plan.work.rows) if plan.work else 0}
        added["model_norms"] = written
        return Outcome(
            done.rows,
            made.summary,
            added,
            {**done.extra, **made.extra},
            {**made.files, **files},
            made.figures,
        )

    def _finish_yes_no(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning
    ) -> Outcome:
        from tacit.probes.structure.yes_no import KEYS, NONE_READ, verified

        values: StructureOptions = plan.values
        state: YesNoState = plan.state
        done = plan.asked.finish(rows, manifest["models"], keys=KEYS)
        found = verified(done.rows, _draws(values, run))
        say_left_out(found.unreadable, NONE_READ, found.any_left)
        added: dict[str, Any] = dict(done.record)
        added["options"] = {**_options_record(values, None), **done.options}
        added["options"].update(samples=values.samples, temperature=values.temperature)
        added["counts"] = {
            "items": len(state.items),
            "items_by_kind": {
                str(k): int(n) for k, n in state.items["negatives"].value_counts().items()
            },
            "concepts_left_out_by_limit": len(state.limited),
        }
        added["yes_no"] = {
            "left_out": {k: list(v) for k, v in state.left_out.items()},
            "left_out_by_model": found.left_out,
        }
        return Outcome(
            done.rows,
            found.summary,
            added,
            {**done.extra, **found.tables},
            done.files,
            found.figures,
        )

    def _finish_scoring(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning
    ) -> Outcome:
        from tacit.probes.structure.outcome import parts
        from tacit.probes.structure.scoring import SCORES, scored_matrix
        from tacit.structure import compare_matrices

        values: StructureOptions = plan.values
        state: ScoringState = plan.state
        done = plan.asked.finish(rows, manifest["models"])
        reference = _reference(state.norms, values)
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
                **_draws(values, run),
            )
            compared.append((str(model), found))
        made = parts(compared, reference)
        added: dict[str, Any] = dict(done.record)
        added["structure"] = made.record
        added["options"] = {**_options_record(values, similarity), **done.options}
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


def _reference(norms: NormSet, values: StructureOptions) -> ConceptFeatureMatrix:
    """People's matrix: proportions where the norms' participant lists count the people, else
    production frequencies."""
    from tacit.structure import from_norms

    if norms.participants is not None:
        return from_norms(norms, value="proportion", categories=values.categories)
    return from_norms(norms, value="pf", categories=values.categories)


def _draws(values: StructureOptions, run: Planning) -> dict[str, Any]:
    return {
        "seed": run.seed,
        "n_resamples": values.resamples,
        "n_permutations": values.permutations,
        "n_splits": values.splits,
    }


def _options_record(values: StructureOptions, similarity: str | None) -> dict[str, Any]:
    return {
        "verification": values.verification,
        "similarity": similarity,
        "resamples": values.resamples,
        "permutations": values.permutations,
        "splits": values.splits,
        "categories": None if values.categories is None else str(values.categories),
        "participants": values.participants,
        "relations": list(values.relations) if values.relations else None,
        "concepts": list(values.concepts) if values.concepts else None,
    }


NOTHING_MATCHED = "no answer matched a feature of the norms: no matrix to compare"


def say_left_out(models: list[str], said: str, others: bool) -> None:
    """Models with nothing to analyse (`said`: why) are left out with a warning (their
    answers stay in answers.csv); where no model is left, the run stops."""
    if not models:
        return
    if not others:
        raise TacitError(f"{', '.join(models)}: {said}")
    import warnings

    from tacit.core.errors import TacitWarning

    for model in models:
        warnings.warn(
            f"{model}: {said}: left out of the analyses "
            "(a summary row with n_concepts 0; its answers are in answers.csv)",
            TacitWarning,
            stacklevel=3,
        )
