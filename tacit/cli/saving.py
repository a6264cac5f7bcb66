"""Running a probe into its run directory: the checks before any work (a directory that holds
a run), the checkpoint, the save, what is printed, and what an interruption says."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from tacit.core.errors import TacitError
from tacit.results.result import ProbeResult


def interrupted_hint(checkpoint: Path, out_dir: Path, resumed: bool) -> str:
    """After Ctrl-C: what was saved, and how to go on. With nothing saved, the checkpoint goes
    (and the run directory with it, where the run made it), so that a rerun starts clean."""
    chunks = len(list(checkpoint.glob("*.pkl"))) if checkpoint.is_dir() else 0
    if not chunks and not resumed:
        shutil.rmtree(checkpoint, ignore_errors=True)
        return "interrupted before any scored chunk was saved: nothing to resume"
    return (f"interrupted: {chunks} scored chunk(s) saved in {checkpoint}; to continue where "
            f"it stopped: the same command with --resume --out {out_dir}")  # fmt: skip


def run_and_save(
    probe: str,
    out: Path | None,
    resume: bool,
    overwrite: bool,
    verbose: bool,
    run: Callable[[dict[str, Any]], ProbeResult],
) -> ProbeResult:
    """Run a probe into its run directory (default results/<probe>/<timestamp>), save it, and
    print its summary (stdout), its notes (stderr) and where it went.

    `run` gets the checkpoint keywords (`checkpoint`, `resume`) to pass on as run options.
    Scored chunks are kept in RUN_DIR/.partial while the run goes: interrupted, the run can go
    on with --resume; failed otherwise, it leaves no directory behind. An --out that holds a
    run is refused before anything is scored, unless --resume or --overwrite.
    """
    from tacit.engine.distributed import finish as distributed_finish
    from tacit.engine.distributed import is_main
    from tacit.results.rundir import PARTIAL, check_overwrite, fresh_run_dir, run_dir

    if resume and out is None:
        raise TacitError("--resume needs --out DIR: the run directory to continue")
    if resume and overwrite:
        raise TacitError("--resume and --overwrite contradict each other: pick one")
    if not is_main():  # a data-parallel run: the main process checks and writes, alone
        try:
            return run({"checkpoint": None, "resume": False})
        finally:
            distributed_finish()
    if out is not None:
        check_overwrite(out, resume=resume, overwrite=overwrite)
    with run_dir(out or fresh_run_dir(probe), created=out is None) as out_dir:
        try:
            result = run({"checkpoint": out_dir / PARTIAL, "resume": resume})
            result.save(out_dir, overwrite=True)  # checked above, before the work
        except KeyboardInterrupt:
            typer.echo(interrupted_hint(out_dir / PARTIAL, out_dir, resume), err=True)
            raise
        except BaseException:
            if not resume:
                shutil.rmtree(out_dir / PARTIAL, ignore_errors=True)
            raise
    from tacit.probes import registry

    full = registry.get(probe).verbose(result.summary, result.manifest) if verbose else None
    if full is not None:
        typer.echo(f"full breakdown (summary.csv):\n{full}\n")
    typer.echo(result.text)
    for note in result.notes:
        typer.echo(note, err=True)
    typer.echo(f"written to {out_dir}")
    distributed_finish()
    return result
