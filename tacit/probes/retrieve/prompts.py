"""Retrieval's prompts: name the concept from a growing list of its properties.

"A <mask> has fur.", "A <mask> has fur and is big.", "A <mask> has fur, is big, and has claws."
The target is the concept: one token of the shared vocabulary (the paper's; concepts that are
not one whole-word token in every model are dropped, and why is counted), or a span with its
article ("A bear") among candidate spans (every concept is a target; the span brings its own
article). Conditions say which properties and in which order; an ablation runs a grid of them.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tacit.ask.base import Answered, Column
from tacit.ask.paraphrase import TOP1, paraphrased, with_items
from tacit.ask.tokens import TOKENS_COLUMN
from tacit.ask.vocabulary import BOUNDED, word_problem
from tacit.core.blank import MASK
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.lexicon import noun_phrase, sentence_start
from tacit.probes.retrieve.fills import Fill, retrieval_fills
from tacit.probes.retrieve.options import MAX_PROPS
from tacit.probes.shared_options import requested_concepts
from tacit.ranking import CandidateSet
from tacit.templates import join_phrases, load_templates

if TYPE_CHECKING:
    from tacit.ask.shots import Demonstrations
    from tacit.norms import NormSet
    from tacit.templates import TemplateSet
    from tacit.vocab.shared import Vocabulary

# the CSLB feature type of each --category (None: all of them)
CATEGORY_TYPES = {
    "all": None,
    "visual": "visual perceptual",
    "functional": "functional",
    "encyclopaedic": "encyclopaedic",
}
PROMPT_COLUMNS = [
    "concept",
    "n_props",
    "selection",
    "order",
    "category",
    "sample",
    "prompt",
    "target",
]


def _reciprocal(answered: Answered) -> np.ndarray:
    """1 / rank, 0 where the target has no rank (asked in words, never named)."""
    rank = np.asarray(answered["rank"], dtype=float)
    return np.where(np.isnan(rank), 0.0, 1.0 / rank)


# prompts.csv after the prompt's columns: each written where the run's Ask answers it
COLUMNS = (
    Column.field("target_span", "span"),
    Column.field("rank", "rank"),
    Column("reciprocal_rank", ("rank",), _reciprocal),
    Column.field("target_score", "score"),
    Column.field("target_prob", "prob"),
    Column.field("target_prob_shared", "share"),
    Column.field("n_candidates", "n_candidates"),
    Column.field("target_answer", "answer"),
    Column.field("target_rule", "rule"),
    Column.field("top5", "listed"),
    *(
        Column.field(name, name)
        for name in ("status", "n_draws", "n_answers", "n_refusal", "n_empty", "n_truncated")
    ),
    Column.field(BOUNDED, BOUNDED),
    Column.field(TOP1, "top", when=paraphrased),
    Column.field(TOKENS_COLUMN, "tokens"),
)

# Why a concept cannot be a retrieval target over the shared vocabulary, in the order checked
# (the vocabulary's own reasons after these: tacit.ask.vocabulary.word_problem).
REASON_SENSE_LABEL = "sense label"
REASON_MULTI_WORD = "more than one word"
REASON_VOWEL = "vowel-initial (a/an)"


def english_list(phrases: Sequence[str]) -> str:
    """Join phrases as an English list with a serial comma (the paper's templates).

    Examples:
        >>> english_list(["has fur"]), english_list(["has fur", "is big"])
        ('has fur', 'has fur and is big')
        >>> english_list(["has fur", "is big", "has claws"])
        'has fur, is big, and has claws'
    """
    return join_phrases(phrases)


def names_target(prompt: str, target: str) -> bool:
    """Whether the prompt's properties contain the target word itself ("... and is a brush").

    Examples:
        >>> names_target("A <mask> has a brush.", "brush")
        True
        >>> names_target("A <mask> brushes.", "brush")
        False
    """
    return (
        re.search(rf"\b{re.escape(target)}\b", prompt.replace(MASK, ""), re.IGNORECASE) is not None
    )


def name_problem(concept: str, a_rule: bool = True) -> str | None:
    """Why a concept's name cannot be one word in the blank (see DESIGN.md): a sense label,
    more than one word, or a vowel first where a template writes "a" before the blank
    (`a_rule`); None where it can."""
    if "(" in concept:
        return REASON_SENSE_LABEL
    if "_" in concept or " " in concept:
        return REASON_MULTI_WORD
    if a_rule and concept[0].lower() in "aeiou":
        return REASON_VOWEL
    return None


def asked_concepts(
    norms: NormSet, requested: Sequence[str] | None, why: Callable[[str], str | None]
) -> tuple[list[str], pd.DataFrame]:
    """The concepts asked about (every one of the norms, or those `requested`: naming one the
    norms do not hold is an error), and a `concept, reason` table of those left out (`why`:
    a concept -> why it cannot be a target, None where it can)."""
    reasons = [(c, why(c)) for c in requested_concepts(norms, requested)]
    eligible = [c for c, reason in reasons if reason is None]
    dropped = pd.DataFrame(
        [(c, reason) for c, reason in reasons if reason], columns=["concept", "reason"]
    )
    return eligible, dropped


def eligible_concepts(
    norms: NormSet, vocab: Vocabulary, requested: Sequence[str] | None = None, a_rule: bool = True
) -> tuple[list[str], pd.DataFrame]:
    """The concepts that can be targets over the shared vocabulary `vocab`, and a `concept,
    reason` table of those left out (`probe norms show --model`)."""
    return asked_concepts(
        norms, requested, lambda c: name_problem(c, a_rule) or word_problem(c, vocab)
    )


def concept_properties(norms: NormSet, concept: str, category: str = "all") -> pd.DataFrame:
    """A concept's distinct property phrases with their pf, highest pf first.

    Two features can read the same once phrased (`does carry`, `does carry_transport`): the
    phrase keeps the higher pf. Ties in pf are broken alphabetically by phrase, so the order
    does not depend on the order of the norms file.
    """
    rows = norms.features_of(concept)
    feature_type = CATEGORY_TYPES[category]
    if feature_type is not None:
        rows = rows[rows["feature_type"] == feature_type]
    rows = rows.sort_values(["pf", "phrase"], ascending=[False, True], kind="stable")
    return rows.drop_duplicates("phrase")[["phrase", "pf", "feature_type"]].reset_index(drop=True)


@dataclass(frozen=True)
class Condition:
    """Which properties a prompt series uses and in which order.

    With random selection or order, `sets` random property sets are drawn per concept and
    each is put in `orders` random orders: sets x orders series per concept, numbered by the
    `sample` column.
    """

    selection: str = "top"
    order: str = "decreasing"
    category: str = "all"
    sets: int = 1
    orders: int = 1

    def check(self) -> None:
        from tacit.probes.retrieve.options import CATEGORY, ORDER, SELECTION

        for param, value in (
            (SELECTION, self.selection),
            (ORDER, self.order),
            (CATEGORY, self.category),
        ):
            param.validate(value, "cli")


def _series_rng(seed: int, concept: str, condition: Condition) -> np.random.Generator:
    """A generator per concept and condition: its draws do not depend on which other concepts
    or conditions are in the run (a 1 x 1 random run draws the first sample of a 5 x 5 one)."""
    key = f"{condition.selection}/{condition.order}/{condition.category}"
    return np.random.default_rng([seed, zlib.crc32(concept.encode()), zlib.crc32(key.encode())])


# The paper's random baseline (footnote 7): 5 random permutations of 5 random property sets.
RANDOM_BASELINE = Condition("random", "random", sets=5, orders=5)
ABLATION_GRIDS = {
    "ordering": [
        Condition("top", "decreasing"),
        Condition("top", "increasing"),
        Condition("bottom", "decreasing"),
        Condition("bottom", "increasing"),
        RANDOM_BASELINE,
    ],
    "category": [Condition(category=c) for c in CATEGORY_TYPES],
}


def phrase_series(
    properties: pd.DataFrame, condition: Condition, *, max_props: int, rng: np.random.Generator
) -> list[list[str]]:
    """The ordered property phrases of each sample of a condition for one concept."""
    series = []
    for _ in range(condition.sets):
        chosen = select_properties(properties, condition.selection, max_props, rng)
        for _ in range(condition.orders):
            series.append(order_phrases(chosen, condition.order, rng))
    return series


def select_properties(
    properties: pd.DataFrame, selection: str, max_props: int, rng: np.random.Generator
) -> pd.DataFrame:
    """Up to max_props properties: the highest-pf, the lowest-pf, or a random set."""
    n = min(max_props, len(properties))
    if selection == "top":
        return properties.iloc[:n]
    if selection == "bottom":
        return properties.iloc[len(properties) - n :]
    return properties.iloc[np.sort(rng.choice(len(properties), size=n, replace=False))]


def order_phrases(chosen: pd.DataFrame, order: str, rng: np.random.Generator) -> list[str]:
    """Phrases by decreasing or increasing pf (input is sorted by decreasing pf), or shuffled."""
    phrases = list(chosen["phrase"])
    if order == "random":
        return [phrases[i] for i in rng.permutation(len(phrases))]
    return phrases if order == "decreasing" else phrases[::-1]


@dataclass(frozen=True)
class PromptSet:
    """Retrieval prompts and what was left out building them.

    short: category -> concepts with fewer properties of that category than max_props (they
        get prompts up to what they have; with none, no prompts).
    """

    prompts: pd.DataFrame
    dropped: pd.DataFrame
    short: dict[str, list[str]] = field(default_factory=dict)
    duplicate_phrases: int = 0

    def without(self, reasons: Mapping[str, str]) -> PromptSet:
        """The set with these concepts' prompts left out, each counted as dropped with its
        reason."""
        kept = self.prompts[~self.prompts["concept"].isin(list(reasons))].reset_index(drop=True)
        more = pd.DataFrame(list(reasons.items()), columns=["concept", "reason"])
        dropped = pd.concat([self.dropped, more], ignore_index=True) if len(more) else self.dropped
        short = {k: [c for c in v if c not in reasons] for k, v in self.short.items()}
        return PromptSet(kept, dropped, short, self.duplicate_phrases)


def build_prompts(
    norms: NormSet,
    targets: Sequence[str],
    conditions: Sequence[Condition] = (Condition(),),
    *,
    dropped: pd.DataFrame | None = None,
    max_props: int = 10,
    seed: int = 0,
    fills: Mapping[str, Fill] | None = None,
) -> PromptSet:
    """Prompts for each target concept, condition, sample, number of properties and template
    (`fills`: id -> properties -> prompt; the paper's by default), with the concepts left out
    (`dropped`: `concept, reason`). With several templates, each question (concept,
    condition, sample, number of properties) is asked once per template: `item` numbers the
    questions, `template` names the template."""
    if fills is None:
        fills = retrieval_fills(load_templates(), spans=False)
    MAX_PROPS.validate(max_props, "cli")
    for condition in conditions:
        condition.check()
    if dropped is None:
        dropped = pd.DataFrame(columns=["concept", "reason"])
    records: list[tuple[Any, ...]] = []
    short: dict[str, list[str]] = {}
    duplicates = 0
    for concept in targets:
        all_properties = concept_properties(norms, concept)
        duplicates += len(norms.features_of(concept)) - len(all_properties)
        for condition in conditions:
            properties = all_properties
            if CATEGORY_TYPES[condition.category] is not None:
                wanted = CATEGORY_TYPES[condition.category]
                properties = properties[properties["feature_type"] == wanted]
            if len(properties) < max_props:
                short.setdefault(condition.category, [])
                if concept not in short[condition.category]:
                    short[condition.category].append(concept)
            for sample, phrases in enumerate(
                phrase_series(
                    properties,
                    condition,
                    max_props=max_props,
                    rng=_series_rng(seed, concept, condition),
                )
            ):
                for n in range(1, len(phrases) + 1):
                    item = (
                        concept,
                        n,
                        condition.selection,
                        condition.order,
                        condition.category,
                        sample,
                    )
                    records.extend(
                        (*item, t, fill(phrases[:n]), concept) for t, fill in fills.items()
                    )
    columns = [*PROMPT_COLUMNS[:-2], "template", *PROMPT_COLUMNS[-2:]]
    prompts = pd.DataFrame.from_records(records, columns=columns)
    return PromptSet(with_items(prompts, PROMPT_COLUMNS[:-2]), dropped, short, duplicates)


RETRIEVAL_DEFAULTS = {"--select": "top", "--order": "decreasing", "--category": "all"}


def retrieval_conditions(
    selection: str | None, order: str | None, category: str | None, ablation: str | None
) -> list[Condition]:
    """The conditions of a run: one from --select/--order/--category (None: not given, the
    default), or an ablation's grid, which overrides all three: giving any of them with an
    ablation is refused, whatever its value, so that no option is silently ignored."""
    given = {"--select": selection, "--order": order, "--category": category}
    if ablation is None:
        chosen = {name: value or RETRIEVAL_DEFAULTS[name] for name, value in given.items()}
        return [Condition(chosen["--select"], chosen["--order"], chosen["--category"])]
    overridden = [name for name, value in given.items() if value is not None]
    if overridden:
        raise TacitError(
            f"{option('--ablation')} {ablation} runs its own grid of conditions, which sets "
            f"{' and '.join(option(name) for name in overridden)}: "
            f"drop {'it' if len(overridden) == 1 else 'them'}"
        )
    return list(ABLATION_GRIDS[ablation])


def check_categories(norms: NormSet, conditions: Sequence[Condition]) -> None:
    """A category condition needs feature types: a generic table without them has none."""
    typed = [c.category for c in conditions if c.category != "all"]
    if typed and not norms.feature_types:
        raise TacitError(
            f"{option('--category')} {typed[0]}: {norms.path} gives no feature types (no "
            f"feature_type column): add one, or run without {option('--category')} / "
            f"{option('--ablation')} category"
        )


def retrieval_counts(prompt_set: PromptSet, prompt_rows: int) -> dict[str, Any]:
    """What the manifest counts of a retrieval run: prompts, and everything left out and why."""
    dropped, per_model = prompt_set.dropped, prompt_set.prompts
    naming = [names_target(p, t) for p, t in zip(per_model["prompt"], per_model["target"])]
    return {
        "concepts": int(per_model["concept"].nunique()),
        "prompts_per_model": len(per_model),
        "unique_prompt_texts": int(per_model["prompt"].nunique()),
        "prompt_rows": prompt_rows,
        "concepts_dropped": len(dropped),
        "concepts_dropped_by_reason": dropped["reason"].value_counts().to_dict(),
        "concepts_with_fewer_properties_than_max_props": prompt_set.short,
        "duplicate_property_phrases_merged": prompt_set.duplicate_phrases,
        # prompts whose properties contain the target word: kept (as in the paper), counted
        "prompts_naming_their_target": {
            "prompts": int(sum(naming)),
            "concepts": sorted(set(per_model.loc[naming, "concept"])),
        },
    }


def estimated_prompts(
    norms: NormSet,
    conditions: Sequence[Condition],
    max_props: int,
    concepts: Sequence[str] | None,
) -> int:
    """At most how many prompts a run scores per model, before the vocabulary's eligibility
    rules: each concept's distinct properties (of each condition's category) up to max_props,
    for every sample of every condition."""
    table = norms.table.drop_duplicates(["concept", "phrase"])
    if concepts is not None:
        table = table[table["concept"].isin(requested_concepts(norms, concepts))]
    total = 0
    for condition in conditions:
        wanted = CATEGORY_TYPES[condition.category]
        rows = table if wanted is None else table[table["feature_type"] == wanted]
        per_concept = rows.groupby("concept").size().clip(upper=max_props)
        total += int(per_concept.sum()) * condition.sets * condition.orders
    return total


def demonstrations(
    norms: NormSet,
    conditions: Sequence[Any],
    templates: TemplateSet,
    *,
    k: int,
    max_props: int,
    seed: int,
    articles: Mapping[str, str] | None = None,
) -> Demonstrations:
    """Retrieval's pool: the prompt every concept of the norms gets of each kind (template,
    number of properties, condition, sample), filled with the concept as the blank takes it,
    answered (by generation) with its name."""
    from tacit import lexicon
    from tacit.ask.shots import Demonstrations, Shot, categories

    fills = retrieval_fills(templates, spans=True)  # the blank holds the whole phrase
    built = build_prompts(
        norms, list(norms.concepts), conditions, max_props=max_props, seed=seed, fills=fills
    ).prompts
    blanks = {t.id: t.blank for t in templates.retrieval}
    only = next(iter(blanks))

    def kind_of(row: Any) -> tuple[Any, ...]:
        """A retrieval prompt's kind: its template, number of properties, condition, sample."""
        template = str(getattr(row, "template", None) or only)
        return (template, int(row.n_props), row.selection, row.order, row.category, int(row.sample))

    pool: dict[Hashable, list[Shot]] = {}
    for row in built.itertuples():
        kind = kind_of(row)
        phrase = templates.blank_phrase(row.concept, blanks[kind[0]], articles)
        shot = Shot(row.concept, row.prompt, (phrase,), (lexicon.concept_text(row.concept),))
        pool.setdefault(kind, []).append(shot)
    return Demonstrations(k, seed, pool, categories(norms), kind_of)


def concept_candidates(
    norms: NormSet, concepts: Sequence[str], articles: Mapping[str, str] | None = None
) -> tuple[CandidateSet, dict[str, str]]:
    """Every concept of the norms as a sentence-initial span ("A bear"), and each given
    concept's span. Two senses with one name read the same: one candidate, the target of
    both concepts' prompts."""
    span_of = {c: sentence_start(noun_phrase(c, articles)) for c in norms.concepts}
    spans = list(dict.fromkeys(span_of.values()))
    return CandidateSet("concepts", spans), {c: span_of[c] for c in concepts}
