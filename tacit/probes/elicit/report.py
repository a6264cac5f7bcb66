"""What an elicitation run says about itself: the paper's Table 1 layout, and per relation how
many features (or answers) answer it and what was left out and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from tacit.probes.report import Report

if TYPE_CHECKING:
    from tacit.core.display import Table
    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome
    from tacit.probes.manifest_keys import AskedManifest


import pandas as pd

from tacit.core.display import render
from tacit.core.errors import TacitError
from tacit.core.labels import short_labels
from tacit.core.numbers import counted
from tacit.norms.cslb import PAPER_SHA256
from tacit.probes.elicit.summary import elicitation_tables
from tacit.probes.run_notes import ranked_among, run_notes


def paper_norms(manifest: Manifest) -> bool:
    """Were the norms the paper's (CSLB's norms.dat, by its sha256) and the templates the
    paper's (a run from before template files used them)? Only then are the paper's counts put
    beside ours."""
    templates: dict[str, Any] = dict(manifest).get("templates") or {}  # type: ignore[assignment]
    return (manifest.get("norms") or {}).get("sha256") == PAPER_SHA256 and templates.get(
        "source", "paper"
    ) == "paper"


def prefixes(manifest: Manifest | None) -> list[str] | None:
    """The optional prefixes of the run's templates for its relations, each once, as its
    manifest records the templates (the paper's where a run predates template files); None
    without a manifest."""
    from tacit.templates import PREFIX, load_templates

    if manifest is None:
        return None
    record: dict[str, Any] = dict(manifest).get("templates") or load_templates().record()  # type: ignore[assignment]
    asked = (manifest.get("options") or {}).get("relations")
    found = [
        match.group(1).strip()
        for template in record.get("templates", [])
        if template.get("relation") and (asked is None or template["relation"] in asked)
        for match in [PREFIX.match(str(template.get("template", "")))]
        if match
    ]
    return list(dict.fromkeys(found))


def answers_are_candidates(manifest: Manifest | None) -> bool:
    """Were the candidates every answer to each relation (`--candidates answers`)? Then mAP
    over them and mAP sens (over the relation's answers) are one number."""
    options: dict[str, Any] = dict(manifest or {}).get("options") or {}  # type: ignore[assignment]
    return options.get("candidates") == "answers"


def elicitation_text(
    summary: pd.DataFrame, manifest: Manifest, paper_counts: dict[str, int]
) -> str:
    """The summary as printed: Table 1's layout, models by their short labels."""
    labelled = summary.assign(model=summary["model"].map(short_labels(summary["model"])))
    counts = paper_counts if paper_norms(manifest) else None
    tables = elicitation_tables(
        labelled,
        counts,
        spans="candidates" in manifest,
        prefixes=prefixes(manifest),
        answers=answers_are_candidates(manifest),
    )
    return render(tables).rstrip()


def concepts_asked(manifest: Manifest, dropped: pd.DataFrame) -> list[str]:
    """Per relation, how many concepts were asked about and how many were left out and why:
    `has: 2 concepts asked, 2 left out (no answer to the relation in the norms: 2)`."""
    lines = []
    for relation, asked in manifest["counts"]["prompts_by_relation"].items():
        reasons = dropped.loc[dropped["relation"] == relation, "reason"].value_counts(sort=False)
        said = ", ".join(f"{reason}: {n}" for reason, n in reasons.items())
        left = f"{int(reasons.sum())} left out ({said})" if said else "none left out"
        lines.append(f"{relation}: {counted(asked, 'concept', 'concepts')} asked, {left}")
    return lines


def elicitation_report(
    summary: pd.DataFrame,
    excluded: pd.DataFrame,
    manifest: Manifest,
    paper_counts: dict[str, int],
    dropped: pd.DataFrame,
) -> tuple[str, list[str]]:
    """Table 1's layout, then per relation the concepts asked and left out, how many features
    answer it and what was left out."""
    lines = [elicitation_text(summary, manifest, paper_counts), ""]
    lines += concepts_asked(manifest, dropped)
    for row in excluded.itertuples():
        lines.append(
            f"{row.relation}: {row.features} features answer it; kept {row.kept}, left out "
            f"{row.multi_word} of more than one word and {row.out_of_vocabulary} out of the "
            f"shared vocabulary ({row.alternatives_oov} alternative words out of it)"
        )
    undefined = manifest["counts"]["spearman_undefined"]
    lines.append(
        f"Spearman's rho undefined (fewer than 2 answers, or no variance): {undefined} rows"
    )
    return "\n".join(lines), run_notes(manifest)


def elicitation_span_report(
    summary: pd.DataFrame,
    left_out: pd.DataFrame,
    manifest: Manifest,
    paper_counts: dict[str, int],
    dropped: pd.DataFrame,
) -> tuple[str, list[str]]:
    """Table 1's layout over candidate spans, and per relation the concepts asked and left out
    and how many answers are candidates."""
    lines = [elicitation_text(summary, manifest, paper_counts), ""]
    lines += concepts_asked(manifest, dropped)
    for row in left_out.itertuples():
        whole = f", {row.not_read_whole} not read whole" if row.not_read_whole else ""
        lines.append(
            f"{row.relation}: {row.answers} answers (concept, span); {row.kept} among "
            f"the candidates, {row.not_candidates} not{whole}"
        )
    lines.append(ranked_among(manifest))
    undefined = manifest["counts"]["spearman_undefined"]
    lines.append(
        f"Spearman's rho undefined (fewer than 2 answers, or no variance): {undefined} rows"
    )
    notes = run_notes(manifest)
    unread: dict[str, str] = manifest["counts"].get("answers_not_read_whole") or {}
    if unread:
        span, why = next(iter(unread.items()))
        others = " and others" if len(unread) > 1 else ""
        notes.append(
            f"note: {len(unread)} answer(s) left out of the candidates, {why} for "
            f"{span!r}{others} (manifest: counts)"
        )
    return "\n".join(lines), notes


def free_listing(manifest: Manifest | None) -> bool:
    """Was the run a free listing (`--relation all`: every property at once)?"""
    options = dict(manifest or {}).get("options") or {}
    return isinstance(options, Mapping) and options.get("relations") == ["all"]


def listing_tables(summary: pd.DataFrame, free: bool = False) -> list[Any]:
    """Recall (weighted by pf, with its interval), recall, precision and rho by model and
    relation, one table per prefix (`free`: a free listing's one table, overall and per
    relation); the draws that gave no answer, and the novel answers."""
    from tacit.core.display import Table

    labelled = summary.assign(model=summary["model"].map(short_labels(summary["model"])))
    columns = [
        "model",
        "relation",
        "n_prompts",
        "recall_pf",
        "recall_pf_ci_low",
        "recall_pf_ci_high",
        "recall",
        "precision",
        "spearman_mean",
        "n_draws",
        "n_refusal",
        "n_empty",
        "n_truncated",
        "n_novel",
    ]
    tables = []
    prefixed = labelled["prefix"].astype(str) == "True"
    for prefix, rows in labelled.groupby(prefixed, sort=False):
        title = "with the prefix" if prefix else "without the prefix"
        if free:
            title = "as a free listing (all: every feature; a relation: its features)"
        tables.append(
            Table(
                rows[columns].reset_index(drop=True),
                f"Elicitation by generation {title} (recall: of the people's features, "
                "weighted by how many people listed each (pf) and not; precision: of the "
                "model's distinct answers; rho: Spearman's, between how many draws listed a "
                "feature and its pf, chance 0; novel: answers no person gave)",
                intervals={"recall_pf": ("recall_pf_ci_low", "recall_pf_ci_high")},
                headers={
                    "n_prompts": "prompts",
                    "recall_pf": "recall pf [95% CI]",
                    "spearman_mean": "rho",
                    "n_draws": "draws",
                    "n_refusal": "refused",
                    "n_empty": "empty",
                    "n_truncated": "cut",
                    "n_novel": "novel",
                },
            )
        )
    return tables


def listing_report(
    summary: pd.DataFrame, manifest: Manifest, dropped: pd.DataFrame
) -> tuple[str, list[str]]:
    """A run by generation: its tables, then per relation the concepts asked and left out,
    and how many answers matched nothing."""
    record = cast("AskedManifest", manifest)["generation"]
    tables = listing_tables(summary, free_listing(manifest))
    lines = [render(tables).rstrip(), "", *concepts_asked(manifest, dropped)]
    lines.append(
        f"answers: {record['answers_by_status'].get('ok', 0)} read, "
        f"{record['answers_unmatched']} matched no feature of the concept and relation "
        "(novel: kept in answers.csv and the prompts' `novel`)"
    )
    return "\n".join(lines), run_notes(manifest)


class ElicitReport(Report):
    """How elicit runs are shown."""

    extra_tables = {
        "dropped.csv": "Concepts left out of a relation, and why",
        "excluded.csv": "Features left out of the gold answers, and why",
        "answers_left_out.csv": "Answers that are not candidates, per relation",
        "tokens.csv": "The gold and top candidates' tokens and their log-probabilities",
        "by_relation.csv": "A free listing scored per relation of the features, per concept",
    }
    sample_columns = ("prompt", "gold")

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        """By generation, the norming task's tables (listing_report); else the mAP table
        over the vocabulary or the candidate spans, what was left out, and its notes; with
        several templates, their ensemble's table too."""
        from tacit.probes.elicit.prompts import PAPER_PROMPTS
        from tacit.probes.paraphrase import format_paraphrases, paraphrased

        summary, extra = outcome.summary, outcome.extra
        if "generation" in manifest:
            return listing_report(summary, manifest, extra["dropped"])
        spans = "answers_left_out" in extra
        report = elicitation_span_report if spans else elicitation_report
        left_out = extra["answers_left_out" if spans else "excluded"]
        text, notes = report(summary, left_out, manifest, PAPER_PROMPTS, extra["dropped"])
        if paraphrased(outcome.rows):
            text += "\n\n" + format_paraphrases(summary, ["relation", "prefix"], "map_vocab", "mAP")
        return text, notes

    def brief(self, manifest: Manifest) -> list[tuple[str, str]]:
        from tacit.probes.run_notes import norms_brief

        return norms_brief(manifest)

    def left_out(self, manifest: Manifest) -> list[str]:
        from tacit.probes.run_notes import counts_listed

        return counts_listed(manifest, "concepts_dropped_by_reason", "prompts_by_relation")

    def table(
        self, summary: pd.DataFrame, manifest: Manifest | None = None, **_: Any
    ) -> list[Table]:
        """The paper's Table 1 (and Table 2's changes, for runs with and without the prefix),
        the paper's counts beside ours where the norms are the paper's."""
        from tacit.probes.elicit.listing import by_generation
        from tacit.probes.elicit.prompts import PAPER_PROMPTS
        from tacit.probes.elicit.summary import elicitation_tables

        if by_generation(manifest):
            return listing_tables(summary, free_listing(manifest))
        paper = PAPER_PROMPTS if manifest is not None and paper_norms(manifest) else None
        spans = bool(manifest and "candidates" in manifest)
        return elicitation_tables(
            summary,
            paper,
            spans=spans,
            prefixes=prefixes(manifest),
            answers=answers_are_candidates(manifest),
        )

    def figures(
        self,
        runs: Sequence[tuple[str, pd.DataFrame, Manifest]],
        *,
        kind: str = "auto",
        caption: str = "",
    ) -> list[tuple[str, Any]]:
        from tacit.probes.elicit.figures import elicitation_figure
        from tacit.probes.elicit.listing import LISTING_PRIMARY as PRIMARY
        from tacit.probes.elicit.listing import by_generation

        ways = {by_generation(manifest) for _, _, manifest in runs}
        if ways == {True}:
            title = f"Elicitation by generation: {PRIMARY.label} by relation"
            return [(title, elicitation_figure(runs, caption, PRIMARY))]
        if len(ways) > 1:
            raise TacitError(
                "elicitation runs by scoring and by generation have different metrics (average "
                "precision, recall): plot each kind apart"
            )
        title = "Elicitation: mean average precision by relation"
        return [(title, elicitation_figure(runs, caption))]
