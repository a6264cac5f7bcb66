"""The nli probe (NLIProbe): its declaration and how it plans and finishes a run
(tacit.probes.nli says what the probe is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.core.options import limited
from tacit.probes.base import Condition, Metric, Outcome, Plan, Probe
from tacit.probes.nli.options import NLIManifest, NLIModelRecord, NLIOptions

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.models.base import RunModel
    from tacit.probes.nli.predict import ClozeSetup


@dataclass
class State:
    items: pd.DataFrame
    loaded: pd.DataFrame  # every item read, before --max-items
    cloze: ClozeSetup


class NLIProbe(Probe[NLIOptions]):
    name = "nli"
    manifest_keys = NLIManifest
    model_keys = NLIModelRecord
    report_class = "tacit.probes.nli.report:NLIReport"
    description = (
        "Pragmatic inference suites (IMPPRES, NOPE, IMPLI) as NLI: `--suite nope --data DIR`."
    )
    help = """Cloze mode asks a masked LM `{premise}? <mask>, {hypothesis}` and reads Yes / Maybe
    / No at the mask (a causal LM scores the sentence with each word in place); classifier mode
    runs an NLI classifier; `--predictions` reads released prediction files. Writes items.csv
    (one row per item x model x seed), summary.csv (each paper's breakdowns, mean and sd over
    seeds), summary_by_seed.csv and manifest.json, and prints the summary (beside the paper's
    numbers for NOPE predictions)."""
    options = NLIOptions
    primary = Metric("value", "accuracy", count="n", named_by="metric")
    keys = ("model", "section", "breakdown", "group", "metric")
    run_options = frozenset({"seed", "resume"})
    limit = "items"
    models_required = False
    models_help = (
        "A masked or causal LM (cloze mode) or an NLI sequence classifier (classifier "
        "mode): hub name or local directory. Repeat for several."
    )

    def plan(self, models: Sequence[RunModel], values: NLIOptions, run: Planning) -> Plan:
        import numpy as np

        from tacit.pragmatics import SUITES
        from tacit.probes.nli.items import nli_work, released_predictions

        if values.suite is None or values.data is None:
            raise TacitError(f"{option('--suite')} and {option('--data')} are both needed")
        predictions = values.predictions
        if bool(models) == (predictions is not None):
            raise TacitError(
                f"give either {option('--model')} (one or more) or {option('--predictions')}, not "
                "both or neither"
            )
        cloze = self._cloze(values)
        loaded = SUITES[values.suite].load(Path(values.data))
        if run.limit is not None:  # N items, as --limit-by picks them (in the suite's order)
            kept, _ = limited(list(loaded["uid"].astype(str)), run.limit, run.limit_by, run.seed)
            loaded = loaded[loaded["uid"].astype(str).isin(kept)].reset_index(drop=True)
        items, max_items = loaded, values.max_items
        if max_items is not None and max_items < len(loaded):
            keep = np.random.default_rng(run.seed).choice(
                len(loaded), size=max_items, replace=False
            )
            items = items.iloc[np.sort(keep)].reset_index(drop=True)
        state = State(items, loaded, cloze)
        if predictions is not None:
            given = released_predictions(predictions, values.suite, items)
            return Plan(None, values, state=state, given=given)
        if values.mode != "classifier":
            cloze.check()
        work = nli_work(items, values.mode, cloze, values.label_names)
        return Plan(work, values, resume_key={"suite": values.suite, "cloze": cloze}, state=state)

    @staticmethod
    def _cloze(values: NLIOptions) -> ClozeSetup:
        """The cloze setup: the API's ClozeSetup, or the template, verbalizer and calibrate
        options (not both)."""
        from tacit.probes.nli.predict import ClozeSetup

        parts = {
            key: getattr(values, key)
            for key in ("template", "verbalizer")
            if getattr(values, key) is not None
        }
        if values.calibrate:
            parts["calibrate"] = True
        if values.cloze is not None:
            if parts:
                raise TacitError(f"cloze= and {', '.join(parts)}= say the same: give one")
            return values.cloze
        return ClozeSetup(**parts)

    def finish(self, plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
        from tacit.probes.nli.figures import nli_figure, nli_panels
        from tacit.probes.nli.items import data_files_record, items_with_predictions, nli_summary

        state: State = plan.state
        values, predicted = plan.values, plan.values.predictions is not None
        if not predicted:
            rows["seed"] = ""
        data = Path(values.data)
        scored, dropped = items_with_predictions(state.items, rows)
        if scored.empty:
            raise TacitError(f"no item of {data} got a prediction: nothing to report")
        summary, by_seed, paper = nli_summary(scored, values.suite, predicted)
        cloze = state.cloze
        added: dict[str, Any] = {
            "suite": values.suite,
            **paper,
            "data": {
                "path": str(data),
                "files": data_files_record(data, state.loaded, scored),
                "items_loaded": len(state.loaded),
                "items_sampled": len(state.items) if values.max_items is not None else None,
            },
            "mode": values.mode if not predicted else "predictions",
            "cloze": {
                "template": cloze.template,
                "verbalizer": cloze.verbalizer,
                "calibrate": cloze.calibrate,
            },
            "dropped": {
                "not_sampled": len(state.loaded) - len(state.items),
                "without_prediction": dropped.to_dict("records"),
            },
        }
        source = f"diamonds: the paper ({paper['paper_column']})" if paper["paper_column"] else ""
        figures = {"nli.png": lambda: nli_figure(summary, source)} if nli_panels(summary)[0] else {}
        return Outcome(scored, summary, added, {"summary_by_seed": by_seed}, figures=figures)

    def conditions(self, summary: pd.DataFrame, manifest: Manifest, **_: Any) -> list[Condition]:
        """Every breakdown group of the summary; first the accuracy over the most items (the
        suite's main split)."""
        keys = ["section", "group", "metric"]
        groups = summary.groupby(keys, sort=False)
        found = [
            (f"{section}: {group} ({metric})", rows) for (section, group, metric), rows in groups
        ]

        def main_first(condition: Condition) -> tuple[bool, float]:
            rows = condition[1]
            accuracy = ((rows["section"] == "accuracy") & (rows["metric"] == "accuracy")).all()
            return (not accuracy, -float(rows["n"].max()))

        return sorted(found, key=main_first)

    def comparable(self, manifest: Manifest) -> dict[str, str]:
        data = cast(NLIManifest, manifest).get("data") or {}
        files = ", ".join(
            f"{f.get('file')} ({str(f.get('sha256'))[:8]})" for f in data.get("files", [])
        )
        return {
            "suite": str(manifest.get("suite")),
            "data": files,
            "cloze": str(manifest.get("cloze") or ""),
        }
