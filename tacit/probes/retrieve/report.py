"""What a retrieval run says about itself: the MRR table, what was kept and dropped, and the
notes a reader must see (prompts naming their own target, concepts short of --max-props)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest


import pandas as pd

from tacit.core.display import render
from tacit.probes.retrieve.summary import retrieval_tables
from tacit.probes.run_notes import describe_drops, listed, ranked_among, run_notes


def retrieval_report(
    summary: pd.DataFrame, dropped: pd.DataFrame, manifest: Manifest
) -> tuple[str, list[str]]:
    """The MRR table, what was kept and dropped, and notes on prompts naming their target and
    concepts short of --max-props."""
    counts = manifest["counts"]
    text = "\n".join(
        [
            render(retrieval_tables(summary)).rstrip(),
            "",
            describe_drops(dropped, counts["concepts"]),
            f"prompts: {counts['prompts_per_model']} per model ({counts['unique_prompt_texts']} "
            f"distinct texts) x {len(manifest['models'])} model(s); " + ranked_among(manifest),
        ]
    )
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
