"""Handing a run on, the one entry point of `probe export` and `tacit.export`: to
lm-evaluation-harness's layout (tacit.results.lm_eval) or to an experiment tracker
(tacit.results.tracking)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tacit.core.choices import TRACKERS
from tacit.core.errors import TacitError
from tacit.core.option_names import option

if TYPE_CHECKING:
    from tacit.results.lm_eval import Export
    from tacit.results.result import ProbeResult

TARGETS = ("lm-eval", *TRACKERS)


def export(
    run: str | Path | ProbeResult, to: str = "lm-eval", *, out: str | Path | None = None
) -> Export | str:
    """Hand a run on (a run directory, or a result in memory): `to="lm-eval"` writes it in
    lm-evaluation-harness's layout under `out` (default: RUN/lm-eval) and returns what it
    wrote; `to="wandb"` or `"mlflow"` logs it to that tracker, the run directory's files as an
    artifact, and returns where it went.

    Examples:
        >>> tacit.export("results/retrieve/first", to="lm-eval")  # doctest: +SKIP
    """
    from tacit.core.choices import check_choice
    from tacit.results.reading import load

    check_choice(option("--to"), to, TARGETS)
    if isinstance(run, str | Path):
        run_dir: Path | None = Path(run)
        if to != "lm-eval":
            from tacit.results.tracking import check_tracker

            check_tracker(to)  # before the run is read
        result = load(run)
    else:
        run_dir, result = None, run
    if to != "lm-eval":
        from tacit.results.tracking import log_run

        return log_run(result, to, run_dir)
    from tacit.results.lm_eval import write_lm_eval

    if out is None:
        if run_dir is None:
            raise TacitError(f"give {option('--out')}: a result in memory has no run directory")
        out = run_dir / "lm-eval"
    return write_lm_eval(result, Path(out), run_name=str(run_dir) if run_dir else None)
