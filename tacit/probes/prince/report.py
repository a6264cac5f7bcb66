"""How a prince run is shown: each model's answer to both of Prince's directions, prompt by
prompt (a run has a handful)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tacit.probes.report import Report
from tacit.probes.run_notes import run_notes
from tacit.templates import ENSEMBLE

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.probes.base import Outcome


class PrinceReport(Report):
    """How prince runs are shown."""

    def printed(self, outcome: Outcome, manifest: Manifest) -> tuple[str, list[str]]:
        return prince_report(outcome.rows, manifest)


def prince_report(prompts: pd.DataFrame, manifest: Manifest) -> tuple[str, list[str]]:
    """Each model's answer to both of Prince's directions."""
    lines = []
    for row in prompts.itertuples():
        template = getattr(row, "template", None)
        if template == ENSEMBLE:
            lines.append(f"{row.model} | the ensemble of its {row.direction} templates")
        else:
            lines.append(f"{row.model} | {row.prompt}" + (f" ({template})" if template else ""))
        if row.direction == "concept":
            lines.append(f"  '{row.target}': rank {row.rank}, probability {row.target_prob:.4g}")
        else:
            lines.append(f"  Prince's properties: AP {row.ap_vocab:.3f}; ranks {row.gold_ranks}")
            if row.not_in_vocab:
                lines.append(f"  not in the shared vocabulary: {row.not_in_vocab}")
        lines.append(f"  top 10: {row.top10}")
    return "\n".join(lines), run_notes(manifest)
