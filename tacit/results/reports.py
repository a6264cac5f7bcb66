"""What a run says about itself after it ends: the summary as text, and the notes a reader must
see beside the numbers (what was dropped and why, batches halved, vocabulary warnings).

The API puts both on the ProbeResult; the CLI prints them (notes on stderr), so the two always
say the same. A note is one line that starts with `note:` or `warning:`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from tacit.results.summary import format_elicitation_table, format_retrieval_summary


def listed(names: Sequence[str], limit: int = 8) -> str:
    """The first `limit` names, comma-separated, with ' ...' when there are more."""
    return ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")


def run_notes(manifest: dict[str, Any]) -> list[str]:
    """Notes every probe shares: vocabulary warnings and batches halved on out of memory."""
    notes = [f"warning: {w}" for w in manifest.get("vocabulary", {}).get("warnings", [])]
    asked = manifest.get("batch_size")
    for record in manifest.get("models", []):
        used = record.get("batch_size_used")
        if used is not None and asked is not None and used < asked:
            notes.append(
                f"note: {record['name']}: ran out of device memory at --batch-size {asked} and "
                f"went on {used} at a time (scores do not depend on it)"
            )
    return notes


def ranked_among(manifest: dict[str, Any]) -> str:
    """What targets were ranked among: the shared vocabulary, or candidate spans (with the
    work their scoring took against the naive count)."""
    if "candidates" not in manifest:
        return f"shared vocabulary: {manifest['vocabulary']['size']} words"
    sizes = ", ".join(f"{s['size']} ({s['source']}" + (f", {name})" if name != "all" else ")")
                      for name, s in manifest["candidates"].items())  # fmt: skip
    work = manifest["span_work"]
    done = [f"{what}: {work[f'span_{what}']:,} (naive {work[f'span_{what}_naive']:,})"
            for what in ("rows", "tokens") if f"span_{what}" in work]  # fmt: skip
    return (
        f"candidates: {sizes}, scored {manifest['span_scoring']}, normalised "
        f"{manifest['normalize']}; " + "; ".join(done)
    )


def describe_drops(dropped: pd.DataFrame, kept: int) -> str:
    """'concepts: 5 kept, 3 dropped (reason: n, ...)'."""
    counts = dropped["reason"].value_counts()
    detail = ", ".join(f"{reason}: {n}" for reason, n in counts.items())
    return f"concepts: {kept} kept, {len(dropped)} dropped" + (f" ({detail})" if detail else "")


def retrieval_report(
    summary: pd.DataFrame, dropped: pd.DataFrame, manifest: dict[str, Any]
) -> tuple[str, list[str]]:
    """The MRR table, what was kept and dropped, and notes on prompts naming their target and
    concepts short of --max-props."""
    counts = manifest["counts"]
    text = "\n".join([
        format_retrieval_summary(summary),
        "",
        describe_drops(dropped, counts["concepts"]),
        f"prompts: {counts['prompts_per_model']} per model ({counts['unique_prompt_texts']} "
        f"distinct texts) x {len(manifest['models'])} model(s); " + ranked_among(manifest),
    ])  # fmt: skip
    notes = run_notes(manifest)
    naming = counts["prompts_naming_their_target"]
    if naming["prompts"]:
        notes.append(
            f"note: {naming['prompts']} prompt(s) name their own target among the properties "
            f"(kept, as in the paper): {listed(naming['concepts'])}"
        )
    max_props = manifest["options"]["max_props"]
    for category, short in counts["concepts_with_fewer_properties_than_max_props"].items():
        notes.append(
            f"note: {len(short)} concept(s) have fewer than {max_props} {category} properties "
            f"and get prompts up to what they have (n_prompts in summary.csv): {listed(short)}"
        )
    return text, notes


def elicitation_report(
    summary: pd.DataFrame, excluded: pd.DataFrame, manifest: dict[str, Any],
    paper_counts: dict[str, int],
) -> tuple[str, list[str]]:  # fmt: skip
    """Table 1's layout, then per relation how many features answer it and what was left out."""
    lines = [format_elicitation_table(summary, paper_counts), ""]
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
    summary: pd.DataFrame, left_out: pd.DataFrame, manifest: dict[str, Any],
    paper_counts: dict[str, int],
) -> tuple[str, list[str]]:  # fmt: skip
    """Table 1's layout over candidate spans, and per relation how many answers are candidates."""
    lines = [format_elicitation_table(summary, paper_counts), ""]
    for row in left_out.itertuples():
        lines.append(f"{row.relation}: {row.answers} answers (concept, span); {row.kept} among "
                     f"the candidates, {row.not_candidates} not")  # fmt: skip
    lines.append(ranked_among(manifest))
    undefined = manifest["counts"]["spearman_undefined"]
    lines.append(
        f"Spearman's rho undefined (fewer than 2 answers, or no variance): {undefined} rows"
    )
    return "\n".join(lines), run_notes(manifest)


def prince_report(prompts: pd.DataFrame, manifest: dict[str, Any]) -> tuple[str, list[str]]:
    """Each model's answer to both of Prince's directions."""
    lines = []
    for row in prompts.itertuples():
        lines.append(f"{row.model} | {row.prompt}")
        if row.direction == "concept":
            lines.append(f"  '{row.target}': rank {row.rank}, probability {row.target_prob:.4g}")
        else:
            lines.append(f"  Prince's properties: AP {row.ap_vocab:.3f}; ranks {row.gold_ranks}")
            if row.not_in_vocab:
                lines.append(f"  not in the shared vocabulary: {row.not_in_vocab}")
        lines.append(f"  top 10: {row.top10}")
    return "\n".join(lines), run_notes(manifest)
