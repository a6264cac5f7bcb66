"""Property elicitation: ask for a concept's properties and score the answers against people's.

"Everyone knows that a bear has <mask>." is scored against the answers people wrote for bear
(fur, claws, ...), weighted by production frequency: over the shared vocabulary (one-word
answers, the paper's) or over candidate spans (answers of any length). The package: options,
prompts (and gold answers), scoring, summary, report; this module ties them to the Probe
contract (tacit.probes.base).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe, Scored, Work
from tacit.probes.elicit.options import ElicitOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import RunOptions
    from tacit.core.params import Context
    from tacit.models.base import Scorer
    from tacit.probes.candidates import Candidates
    from tacit.templates import TemplateSet


@dataclass
class State:
    norms: Any
    prefixes: list[bool]
    prompts: pd.DataFrame
    candidates: Candidates
    left_out: pd.DataFrame  # features (vocabulary) or answers (spans) left out, per relation
    templates: TemplateSet
    relations: list[str]
    # relation -> positions of the answers to it among the candidates (what ap_sens ranks)
    sensible: dict[str, Any] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)  # answers no model reads whole, why


class ElicitProbe(Probe[ElicitOptions]):
    name = "elicit"
    report_class = "tacit.probes.elicit.report:ElicitReport"
    description = "Ask for a concept's properties: `Everyone knows that a bear has <mask>.`"
    help = """Each concept with at least one one-word answer for a relation (`has fur_hair`
    answers `has` with fur and hair) gets a prompt; the model's distribution at `<mask>` is
    scored against those answers: average precision over the shared vocabulary (ap_vocab) and
    over every answer of that relation (ap_sens), and Spearman's rho between the answers'
    production frequencies and the model's probabilities. Prints the paper's Table 1 layout."""
    options = ElicitOptions
    extra_tables = {
        "excluded.csv": "Features left out of the gold answers, and why",
        "answers_left_out.csv": "Answers that are not candidates, per relation",
        "tokens.csv": "The gold and top candidates' tokens and their log-probabilities",
    }
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
    metrics = (
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
    sample_columns = ("prompt", "gold")
    keys = ("model", "relation", "prefix")
    limit = "concepts"

    def validate(
        self, given: Mapping[str, Any], *, context: Context = "api", where: str = ""
    ) -> ElicitOptions:
        """As declared, and the relations against the template file's (its own names: a
        sweep file is checked whole before any cell runs)."""
        from tacit.probes.elicit.options import RELATIONS_PARAM
        from tacit.templates import load_templates

        values = super().validate(given, context=context, where=where)
        if values.relations is not None:
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

    def plan(self, models: Sequence[str | Scorer], values: ElicitOptions, run: RunOptions) -> Plan:
        from tacit.probes.elicit.prompts import check_prefixes
        from tacit.probes.shared_options import SPAN_PARAMS, load_norms, refuse_span_options
        from tacit.templates import load_templates

        refuse_span_options(values, values.candidates, SPAN_PARAMS, "answers")
        prefix = values.prefix
        prefixes: list[bool] = [True, False] if prefix == "both" else [bool(prefix)]
        templates = load_templates(values.templates)
        relations = templates.chosen_relations(values.relations)
        values = replace(values, relations=relations)
        check_prefixes(templates, relations, prefixes)
        norms = load_norms(values)
        work_of = self._vocab_work if values.candidates == "vocab" else self._span_work
        state, work = work_of(models, norms, values, relations, prefixes, run, templates)
        return Plan(work, values, state.candidates, state=state)

    def _vocab_work(
        self,
        models: Sequence[str | Scorer],
        norms: Any,
        values: ElicitOptions,
        relations: list[str],
        prefixes: list[bool],
        run: RunOptions,
        templates: TemplateSet,
    ) -> tuple[State, Work]:
        import numpy as np

        from tacit.probes.candidates import Candidates, vocab_needs
        from tacit.probes.elicit.prompts import build_elicitation_prompts, gold_answers
        from tacit.probes.elicit.scoring import score_elicitation
        from tacit.probes.paraphrase import ITEM, paraphrased
        from tacit.probes.shared_options import limit_concepts

        needs = vocab_needs([t for r in relations for t in templates.for_relation(r)], "answers")
        candidates = Candidates.shared_vocabulary(models, run, needs, self.name)
        vocab = candidates.vocab
        golds = gold_answers(norms, vocab, relations)
        prompts = build_elicitation_prompts(
            golds.answers, relations, prefixes, values.concepts, templates=templates
        )
        if prompts.empty:
            raise TacitError("no concept has a gold answer in the shared vocabulary")
        prompts = limit_concepts(prompts, run)[0]
        answers = golds.answers
        sensible = {
            r: np.array(sorted({vocab.index(w) for w in words}))
            for r in relations
            if len(words := answers.loc[answers.relation == r, "word"])
        }
        work = Work(
            prompts,
            ITEM if paraphrased(prompts) else "prompt",
            lambda scorer, rows, bar: score_elicitation(
                rows, scorer, vocab, sensible, progress=bar, offset=len(prompts)
            ),
            needs=needs,
        )
        state = State(
            norms, prefixes, prompts, candidates, golds.excluded, templates, relations, sensible
        )
        return state, work

    def _span_work(
        self,
        models: Sequence[str | Scorer],
        norms: Any,
        values: ElicitOptions,
        relations: list[str],
        prefixes: list[bool],
        run: RunOptions,
        templates: TemplateSet,
    ) -> tuple[State, Work]:
        """Each relation's answers ranked among spans: every answer people gave to it
        (`answers`) or a FILE's, in the blank of each of the relation's templates. A span some
        model's tokenizer does not read whole is refused in a FILE, and left out (counted) among
        the norms' answers."""
        import numpy as np

        from tacit.probes.candidates import (
            SPAN_NEEDS,
            Candidates,
            SpanRanker,
            read_candidates,
            refuse_unreadable,
            relation_answers,
            span_cost,
            take_counts,
            unreadable_spans,
        )
        from tacit.probes.elicit.options import CANDIDATE_SETS
        from tacit.probes.elicit.prompts import build_span_prompts, concept_free, span_golds
        from tacit.probes.elicit.scoring import score_span_elicitation
        from tacit.probes.paraphrase import ITEM, paraphrased
        from tacit.probes.shared_options import limit_concepts

        given = values.candidates
        chosen = None if given == "answers" else read_candidates(given, CANDIDATE_SETS)
        spans = (
            chosen.spans
            if chosen is not None
            else sorted({span for r in relations for span in relation_answers(norms, r)["span"]})
        )
        tokenizers, unread = unreadable_spans(spans, models, run)
        if chosen is not None:
            refuse_unreadable(chosen, unread)
        sets, gold, left_out = span_golds(norms, relations, chosen, unread)
        prompts = build_span_prompts(gold, relations, prefixes, values.concepts, templates)
        if prompts.empty:
            raise TacitError(f"no concept has a gold answer among the candidates ({given})")
        prompts = limit_concepts(prompts, run)[0]
        answering = {r: set(gold.loc[gold["relation"] == r, "span"]) for r in relations}
        candidates = Candidates(
            tokenizers=tokenizers,
            sets=dict(sets),
            scoring=values.span_scoring,
            normalize=values.normalize,
            token_scores=values.token_scores,
        )
        free = concept_free(prompts, templates) if candidates.normalize == "pmi" else {}
        rankers = {
            r: SpanRanker(
                sets[r],
                candidates.scoring,
                candidates.normalize,
                free.__getitem__,
                candidates.token_scores,
            )
            for r in relations
        }

        def score(scorer: Scorer, rows: pd.DataFrame, bar: Any) -> Scored:
            table = score_span_elicitation(
                rows, scorer, rankers, answering, bar, offset=len(prompts)
            )
            return Scored(table, take_counts(rankers.values()))

        sizes = {r: len(sets[r].spans) for r in relations}
        key = ITEM if paraphrased(prompts) else "prompt"
        cost = span_cost(key, lambda rows: rows["relation"].map(sizes))
        work = Work(prompts, key, score, SPAN_NEEDS, cost=cost)
        sensible = {
            r: np.flatnonzero([s in answering[r] for s in sets[r].spans]) for r in relations
        }
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
        )
        return state, work

    def finish(
        self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: RunOptions
    ) -> Outcome:
        from tacit.core.manifest import with_keys
        from tacit.probes.elicit.prompts import PAPER_PROMPTS
        from tacit.probes.elicit.report import (
            elicitation_report,
            elicitation_span_report,
            paper_norms,
        )
        from tacit.probes.elicit.summary import summarize_elicitation
        from tacit.probes.paraphrase import format_paraphrases, paraphrased
        from tacit.probes.shared_options import norms_record
        from tacit.probes.token_rows import TOKENS_TABLE, token_table

        state: State = plan.state
        values, candidates = plan.values, state.candidates
        relations, spans = state.relations, candidates.vocabulary is None
        tokens = None
        if candidates.token_scores:
            rows, tokens = token_table(rows, ["prompt"])
        per_model = state.prompts
        questions = per_model.drop_duplicates(["relation", "prefix", "concept"])
        counts = questions[questions.prefix == state.prefixes[0]].groupby("relation").size()
        added: dict[str, Any] = dict(candidates.record(manifest["models"]))
        added["options"] = {"relations": relations, "prefix": values.prefix}
        if spans:
            added["options"].update(
                candidates=str(values.candidates),
                span_scoring=candidates.scoring,
                normalize=candidates.normalize,
            )
        added["options"]["concepts"] = values.concepts
        added["norms"] = norms_record(state.norms)
        added["templates"] = state.templates.record()
        added["counts"] = {
            "prompts_per_model": len(per_model),
            "prompts_by_relation": {r: int(counts.get(r, 0)) for r in relations},
        }
        if spans:
            added["counts"]["answers_not_candidates"] = state.left_out.to_dict("records")
            added["counts"]["answers_not_read_whole"] = state.unread
        else:
            if paper_norms(added):  # type: ignore[arg-type]
                added["counts"]["paper_prompts_by_relation"] = {
                    r: PAPER_PROMPTS[r] for r in relations if r in PAPER_PROMPTS
                }
            added["counts"].update(
                sensible_vocabulary_by_relation={r: len(v) for r, v in state.sensible.items()},
                features_excluded=state.left_out.to_dict("records"),
            )
        added["counts"]["spearman_undefined"] = int(rows["spearman"].isna().sum())
        full = with_keys(manifest, added)
        summary = summarize_elicitation(
            rows,
            seed=run.seed,
            n_candidates=None if spans else len(candidates.vocab),
            n_sensible={r: len(v) for r, v in state.sensible.items()},
        )
        report = elicitation_span_report if spans else elicitation_report
        text, notes = report(summary, state.left_out, full, PAPER_PROMPTS)
        if paraphrased(rows):
            text += "\n\n" + format_paraphrases(summary, ["relation", "prefix"], "map_vocab", "mAP")
        extra = {"answers_left_out" if spans else "excluded": state.left_out}
        if tokens is not None:
            extra[TOKENS_TABLE] = tokens
        return Outcome(
            rows,
            summary,
            text,
            notes,
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
        return chosen.assign(unit=chosen["concept"], value=chosen["ap_vocab"])[
            ["model", "unit", "value"]
        ]

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        """What every norms-based run must share (vocabulary or candidates, norms, concepts,
        templates), and the relations: `all` pools the relations a run asked for, so runs of
        other relations pool other prompts under the same name."""
        from tacit.probes.run_notes import scored_over

        relations = (manifest.get("options") or {}).get("relations") or []
        return {**scored_over(manifest), "relations": ", ".join(relations)}

    def estimate(self, values: ElicitOptions) -> int | None:
        """Concepts with an answer to each relation, per prefix (before the vocabulary)."""
        from tacit.probes.shared_options import load_norms
        from tacit.templates import load_templates

        templates = load_templates(values.templates)
        table = load_norms(values).table
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
