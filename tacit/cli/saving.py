"""Running a probe into its run directory: the checks before any work (a directory that holds
a run, another process that owns it), the checkpoint, the save, what is printed, and what an
interruption or a failure says (one line: what was kept, and how to go on)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from tacit.core.errors import TacitError
from tacit.probes.report import report_of
from tacit.results.result import ProbeResult


def kept(checkpoint: Path) -> str | None:
    """What a checkpoint keeps, in words (its scored chunks, its answered requests); None
    where it keeps nothing."""
    from tacit.engine.checkpoint import kept_chunks
    from tacit.models.answered import kept_answers

    chunks, answers = kept_chunks(checkpoint), kept_answers(checkpoint)
    said = [f"{chunks} scored chunk(s)"] if chunks else []
    said += [f"{answers} answered request(s)"] if answers else []
    return " and ".join(said) or None


def resume_hint(checkpoint: Path, out_dir: Path, resumed: bool) -> str | None:
    """What was kept, and how to go on; None when nothing was (the checkpoint then goes, so
    that a rerun starts clean)."""
    held = kept(checkpoint)
    if held is None and not resumed:
        shutil.rmtree(checkpoint, ignore_errors=True)
        return None
    if not checkpoint.is_dir():  # a resumed run refused before it kept anything
        return None
    return (
        f"{held or 'nothing new'} kept in {checkpoint}; to go on where it stopped: the same "
        f"command with --resume --out {out_dir}"
    )


def run_and_save(
    probe: str,
    out: Path | None,
    resume: bool,
    overwrite: bool,
    verbose: bool,
    run: Callable[[dict[str, Any]], ProbeResult],
    *,
    log_to: str | None = None,
) -> ProbeResult:
    """Run a probe into its run directory (default results/<probe>/<timestamp>), save it, and
    print its summary (stdout), its notes (stderr) and where it went.

    `run` gets the checkpoint keywords (`checkpoint`, `resume`) to pass on as run options.
    Scored chunks are kept in RUN_DIR/.partial while the run goes: interrupted, failed after
    scoring something, or failed to save (a full disk), the run can go on with --resume, and
    the one line that ends it says so; failed before scoring anything, it leaves no directory
    behind. One process owns a run directory at a time. An --out that holds a run is refused
    before anything is scored, unless --resume or --overwrite. With `log_to`, the saved run is
    logged to that experiment tracker (tacit.results.tracking).
    """
    from tacit.engine.checkpoint import ResumeRefused
    from tacit.engine.distributed import finish as distributed_finish
    from tacit.engine.distributed import is_main
    from tacit.results.rundir import PARTIAL, check_overwrite, fresh_run_dir, run_dir
    from tacit.results.tracking import check_tracker, log_run

    check_tracker(log_to)  # its package installed, before anything is scored
    if resume and out is None:
        raise TacitError("--resume needs --out DIR: the run directory to continue")
    if resume and overwrite:
        raise TacitError("--resume and --overwrite contradict each other: pick one")
    if resume and out is not None and not out.is_dir():
        raise TacitError(f"--resume: no unfinished run in {out} (no such directory)")
    if not is_main():  # a data-parallel run: the main process checks and writes, alone
        try:
            return run({"checkpoint": None, "resume": False})
        finally:
            distributed_finish()
    with run_dir(out or fresh_run_dir(probe), created=out is None) as out_dir:
        if out is not None:  # once it is ours: what it holds cannot change under us
            check_overwrite(out, resume=resume, overwrite=overwrite)
        checkpoint = out_dir / PARTIAL
        try:
            result = run({"checkpoint": checkpoint, "resume": resume})
            result.save(out_dir, overwrite=True)  # checked above, before the work
        except KeyboardInterrupt as stop:
            hint = resume_hint(checkpoint, out_dir, resume)
            stop.detail = hint or "nothing was scored yet, nothing to resume"  # type: ignore[attr-defined]
            raise
        except TacitError as err:
            # a refused resume says itself what to do instead
            hint = (
                None if isinstance(err, ResumeRefused) else resume_hint(checkpoint, out_dir, resume)
            )
            raise TacitError(f"{err} ({hint})" if hint else str(err)) from None
        except BaseException:
            if not resume and kept(checkpoint) is None:
                shutil.rmtree(checkpoint, ignore_errors=True)
            raise
    from tacit.probes import registry

    full = (
        report_of(registry.get(probe)).verbose(result.summary, result.manifest) if verbose else None
    )
    if full is not None:
        typer.echo(f"full breakdown (summary.csv):\n{full}\n")
    typer.echo(result.text)
    for note in result.notes:
        typer.echo(note, err=True)
    typer.echo(f"written to {out_dir}")
    if log_to is not None:
        typer.echo(f"logged to {log_run(result, log_to, out_dir)}")
    distributed_finish()
    return result
