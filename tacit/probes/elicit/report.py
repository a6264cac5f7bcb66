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

from tacit.ask.base import asked_by, yielded
from tacit.ask.paraphrase import format_paraphrases, paraphrased
from tacit.core.display import render
from tacit.core.errors import TacitError
from tacit.core.labels import short_labels
from tacit.core.numbers import counted
from tacit.norms.cslb import PAPER_SHA256
from tacit.probes.elicit.metrics import LISTING_PRIMARY
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
        over=asked_by(manifest).over,
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


def excluded_lines(excluded: pd.DataFrame, manifest: Manifest) -> list[str]:
    """Per relation, how many features answer it and which were left out of the golds, and
    why (excluded.csv)."""
    return [
        f"{row.relation}: {row.features} features answer it; kept {row.kept}, left out "
        f"{row.multi_word} of more than one word and {row.out_of_vocabulary} out of the "
        f"shared vocabulary ({row.alternatives_oov} alternative words out of it)"
        for row in excluded.itertuples()
    ]


def left_out_lines(left_out: pd.DataFrame, manifest: Manifest) -> list[str]:
    """Per relation, how many answers are candidates (answers_left_out.csv), and what they
    were ranked among."""
    lines = []
    for row in left_out.itertuples():
        whole = f", {row.not_read_whole} not read whole" if row.not_read_whole else ""
        lines.append(
            f"{row.relation}: {row.answers} answers (concept, span); {row.kept} among "
            f"the candidates, {row.not_candidates} not{whole}"
        )
    return [*lines, ranked_among(manifest)]


# the lines of each table of what a run left out of its golds, where the run has it
LEFT_OUT = {"excluded": excluded_lines, "answers_left_out": left_out_lines}


def elicitation_report(
    outcome: Outcome, manifest: Manifest, paper_counts: dict[str, int]
) -> tuple[str, list[str]]:
    """Table 1's layout, then per relation the concepts asked and left out, what was left
    out of the golds (LEFT_OUT), and where rho is undefined."""
    summary, extra = outcome.summary, outcome.extra
    lines = [elicitation_text(summary, manifest, paper_counts), ""]
    lines += concepts_asked(manifest, extra["dropped"])
    for name, lines_of in LEFT_OUT.items():
        if name in extra:
            lines += lines_of(extra[name], manifest)
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
    text = "\n".join(lines)
    if paraphrased(outcome.rows):  # with several templates, their ensemble's table too
        text += "\n\n" + format_paraphrases(summary, ["relation", "prefix"], "map_vocab", "mAP")
    return text, notes


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
    outcome: Outcome, manifest: Manifest, paper_counts: dict[str, int]
) -> tuple[str, list[str]]:
    """A run asked in words: its tables, then per relation the concepts asked and left out,
    and how many answers matched nothing."""
    summary, dropped = outcome.summary, outcome.extra["dropped"]
    record = cast("AskedManifest", manifest)["generation"]
    tables = listing_tables(summary, free_listing(manifest))
    lines = [render(tables).rstrip(), "", *concepts_asked(manifest, dropped)]
    lines.append(
        f"answers: {record['answers_by_status'].get('ok', 0)} read, "
        f"{record['answers_unmatched']} matched no feature of the concept and relation "
        "(novel: kept in answers.csv and the prompts' `novel`)"
    )
    if "judge" in record:
        lines.append(judge_said(record["judge"]))
    return "\n".join(lines), run_notes(manifest)


def judge_said(judge: dict[str, Any]) -> str:
    """The line on how often --judge and the lexical matcher agree (tacit.ask.judge), beside
    what a judge of one verdict would agree and Cohen's kappa."""
    share = "–" if judge["agreement"] is None else f"{judge['agreement']:.1%}"
    beside = ""
    if judge.get("constant") is not None:
        kappa = "–" if judge.get("kappa") is None else f"{judge['kappa']:.2f}"
        beside = f" (one verdict for every pair: {judge['constant']:.1%}; Cohen's kappa {kappa})"
    return (
        f"judge {judge['model']}: agrees with the lexical matcher on {share} of {judge['n']} "
        f"pairs read{beside}; {judge['judge_only']} matched by the judge alone, "
        f"{judge['lexical_only']} by the matcher alone, {judge['unreadable']} replies "
        "unreadable (judged.csv)"
    )


# a run's printed report and its figure (title, metric: None for mAP), by what its Ask
# yielded (Ask.yields)
REPORTS = {"ranks": elicitation_report, "answers": listing_report}
FIGURES = {
    "ranks": ("Elicitation: mean average precision by relation", None),
    "answers": (f"Elicitation by generation: {LISTING_PRIMARY.label} by relation", LISTING_PRIMARY),
}


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
        """The report of what the run's Ask yielded (REPORTS: the mAP table over the
        vocabulary or the candidates, or the norming task's asked in words), what was left
        out, and its notes; with several templates, their ensemble's table too."""
        from tacit.probes.elicit.prompts import PAPER_PROMPTS

        return REPORTS[yielded(manifest)](outcome, manifest, PAPER_PROMPTS)

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
        the paper's counts beside ours where the norms are the paper's; asked in words, the
        norming task's tables."""
        from tacit.probes.elicit.prompts import PAPER_PROMPTS
        from tacit.probes.elicit.summary import elicitation_tables

        if yielded(manifest) == "answers":
            return listing_tables(summary, free_listing(manifest))
        paper = PAPER_PROMPTS if manifest is not None and paper_norms(manifest) else None
        asked = asked_by(manifest)
        return elicitation_tables(
            summary,
            paper,
            **({"over": asked.over} if asked is not None else {}),
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

        ways = {yielded(manifest) for _, _, manifest in runs}
        if len(ways) > 1:
            raise TacitError(
                "elicitation runs by scoring and by generation have different metrics (average "
                "precision, recall): plot each kind apart"
            )
        title, metric = FIGURES[ways.pop()]
        return [(title, elicitation_figure(runs, caption, metric))]
