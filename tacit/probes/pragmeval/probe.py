"""The pragmeval probe (PragmevalProbe): its declaration and how it plans and finishes a run
(tacit.probes.pragmeval says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tacit.core.option_names import option
from tacit.core.options import limit_said, limited
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe
from tacit.probes.pragmeval.options import PragmevalManifest, PragmevalModelRecord, PragmevalOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.probes.pragmeval.run import Pass


@dataclass
class State:
    configs: dict[str, Any]
    skipped: dict[str, str]
    reference: pd.DataFrame | None
    kept: Pass


class PragmevalProbe(Probe[PragmevalOptions]):
    name = "pragmeval"
    manifest_keys = PragmevalManifest
    model_keys = PragmevalModelRecord
    report_class = "tacit.probes.pragmeval.report:PragmevalReport"
    description = (
        "PragmEval's 11 pragmatics tasks on a frozen model: linear probes or zero-shot cloze."
    )
    help = """Linear mode encodes every text once (cached per model and configuration), fits a
    logistic regression with its regularisation chosen on dev, and reports test accuracy
    (macro-F1 for SwitchBoard and MRDA), configurations averaged into tasks as the paper does.
    This is a probe of a frozen model, not the paper's fine-tuning. Writes configs.csv,
    summary.csv, predictions.csv, manifest.json and pragmeval.png."""
    options = PragmevalOptions
    primary = Metric("score", "score", named_by="metric")
    keys = ("model", "task")
    run_options = frozenset({"seed"})
    limit = "configurations"

    def plan(self, models: Sequence[RunModel], values: PragmevalOptions, run: Planning) -> Plan:
        from tacit.core.errors import TacitError
        from tacit.probes.pragmeval.report import read_reference
        from tacit.probes.pragmeval.run import configurations, pragmeval_work

        if values.data is None:
            raise TacitError(f"{option('--data')} is needed: the PragmEval folder")
        if values.verbalizer is not None and values.mode != "cloze":
            raise TacitError(f"{option('--verbalizer')} is for {option('--mode')} cloze")
        reference = read_reference(values.reference) if values.reference else None
        configs, skipped = configurations(
            values.data,
            values.tasks,
            values.mode,
            values.pooling,
            values.template,
            values.verbalizer,
        )
        _, left_out = limited(list(configs), run.limit, run.limit_by, run.seed)
        for name in left_out:  # N configurations, as --limit-by picks them
            skipped[name] = f"left out by the limit (kept {limit_said(run, 'configurations')})"
            del configs[name]
        work, kept = pragmeval_work(configs, values, run.seed, run.progress)
        return Plan(work, values, state=State(configs, skipped, reference, kept))

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        import pandas as pd

        from tacit.core.files import file_sha256
        from tacit.pragmatics.pragmeval import PAPER_BERT_AVERAGE
        from tacit.probes.pragmeval.frozen import C_GRID
        from tacit.probes.pragmeval.report import (
            pragmeval_figure,
            summarize_pragmeval,
        )

        state: State = plan.state
        values, linear = plan.values, plan.values.mode == "linear"
        summary = summarize_pragmeval(rows, state.reference)
        files = [
            {
                "file": f"{c.name}/{split}.tsv",
                "sha256": file_sha256(path),
                "rows": len(c.splits[split]),
            }
            for c in state.configs.values()
            for split, path in c.files.items()
        ]
        added: dict[str, Any] = {
            "data": {"path": str(values.data), "files": files},
            "mode": values.mode,
            "pooling": values.pooling if linear else None,
            "template": values.template,
            "max_train": values.max_train,
            "c_grid": list(C_GRID) if linear else None,
            "skipped_configs": state.skipped,
            "reference": str(values.reference) if values.reference is not None else None,
            "paper_bert_average": PAPER_BERT_AVERAGE,
        }
        models = [record["name"] for record in manifest["models"]]
        predictions = pd.concat(
            [state.kept.predictions[m] for m in models if m in state.kept.predictions]
        )
        return Outcome(
            rows,
            summary,
            added,
            {"predictions": predictions},
            figures={"pragmeval.png": lambda: pragmeval_figure(summary)},
        )

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """The average over the tasks first (where a model has all eleven), then each task."""
        from tacit.probes.pragmeval.report import AVERAGE

        tasks = sorted(dict.fromkeys(summary["task"]), key=lambda t: t != AVERAGE)
        return [(str(task), summary[summary["task"] == task]) for task in tasks]
