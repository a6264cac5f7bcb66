"""Cells as jobs through submitit (the launcher Hydra uses), not a scheduler of our own: a Slurm
job array (`slurm`), or processes on this machine (`local`), one cell per GPU at a time.

Each job runs one cell (tacit.sweep.cells.run_job) and takes the cell's lock there, so a cell
is never run twice at once, whoever started it. The launcher waits for the jobs, says how each
ended and where a failed one's log is, and records the failure in the sweep folder; a rerun
submits only the cells that are not complete (failed, interrupted, never run).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, first_line
from tacit.sweep.cells import Say, failure, failure_file, prepare_folder, record_failure, run_job
from tacit.sweep.spec import Sweep

LAUNCHERS = ("local", "slurm")
LOGS = "logs"  # in the sweep folder: each job's stdout and stderr (submitit's files)
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Launch:
    """How cells are launched.

    launcher: `slurm` (a job array) or `local` (processes on this machine).
    parallel: cells at once (Slurm: the array's parallelism; local: default one per GPU
        group, else 1).
    gpus_per_cell: GPUs each cell gets (default: 1 on Slurm; local: 1 where this machine has
        GPUs, else 0).
    partition: the Slurm partition.
    time_min: each cell's time limit in minutes.
    options: further submitit parameters as its AutoExecutor names them (`slurm_account`,
        `mem_gb`, `cpus_per_task`, `slurm_qos`, ...).
    """

    launcher: str
    parallel: int | None = None
    gpus_per_cell: int | None = None
    partition: str | None = None
    time_min: int = 24 * 60
    options: Mapping[str, Any] = field(default_factory=dict)


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs as submitit parameters (numbers as numbers)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise TacitError(
                f"--launcher-option {pair!r}: expected KEY=VALUE, e.g. slurm_account=myproject"
            )
        text = value.strip()
        number: Any = text
        for kind in (int, float):
            try:
                number = kind(text)
                break
            except ValueError:
                continue
        options[key.strip()] = number
    return options


def _submitit() -> Any:
    try:
        import submitit
    except ImportError:
        raise TacitError(
            "--launcher needs submitit: pip install 'tacit-probe[cluster]' (or run cells as "
            "separate jobs with --cell)"
        ) from None
    return submitit


def visible_gpus() -> list[int]:
    """This machine's GPUs as CUDA numbers them for a child process."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        items = [item.strip() for item in listed.split(",") if item.strip()]
        if all(item.isdigit() for item in items):
            return [int(item) for item in items]
    import torch

    return list(range(torch.cuda.device_count()))


def _executor(submitit: Any, folder: Path, cluster: str, parameters: Mapping[str, Any]) -> Any:
    """submitit's AutoExecutor with these parameters; a parameter it does not know, or Slurm
    missing, is one line."""
    try:
        executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
        executor.update_parameters(**{k: v for k, v in parameters.items() if v is not None})
    except (NameError, ValueError, AssertionError, TypeError) as err:
        raise TacitError(f"--launcher {cluster}: {first_line(err)}") from None
    except RuntimeError as err:  # submitit: no srun on this machine
        raise TacitError(f"--launcher {cluster}: {first_line(err)}") from None
    return executor


def launch(sweep: Sweep, out: Path, indices: Sequence[int], how: Launch, say: Say) -> None:
    """Run the cells at `indices` as jobs and wait for them (see the module docstring)."""
    if how.launcher not in LAUNCHERS:
        raise TacitError(f"--launcher {how.launcher}: expected one of {', '.join(LAUNCHERS)}")
    if how.parallel is not None and how.parallel < 1:
        raise TacitError(f"--parallel {how.parallel}: must be at least 1")
    submitit = _submitit()
    prepare_folder(out)
    for index in indices:  # a job killed before it says why must not show an older error
        failure_file(out, sweep.cells[index]).unlink(missing_ok=True)
    if not indices:
        return
    if how.launcher == "slurm":
        jobs = _slurm(submitit, sweep, out, indices, how)
        for index, job in jobs.items():
            say(f"cell {index} {sweep.cells[index].name}: submitted as Slurm job {job.job_id}")
        _wait(sweep, out, jobs, say)
    else:
        _local(submitit, sweep, out, indices, how, say)


def _slurm(
    submitit: Any, sweep: Sweep, out: Path, indices: Sequence[int], how: Launch
) -> dict[int, Any]:
    if shutil.which("sbatch") is None or shutil.which("srun") is None:
        raise TacitError(
            "--launcher slurm: Slurm's sbatch and srun are not on this machine's "
            "PATH; submit from the cluster's login node"
        )
    gpus = 1 if how.gpus_per_cell is None else how.gpus_per_cell
    executor = _executor(
        submitit,
        out / LOGS,
        "slurm",
        {
            "name": f"tacit-{sweep.path.stem}",
            "timeout_min": how.time_min,
            "nodes": 1,
            "tasks_per_node": 1,
            "gpus_per_node": gpus or None,
            "slurm_partition": how.partition,
            "slurm_array_parallelism": how.parallel or len(indices),
            **how.options,
        },
    )
    try:
        with executor.batch():
            jobs = [executor.submit(run_job, sweep, str(out), index) for index in indices]
    except Exception as err:  # noqa: BLE001 - sbatch refused: say its words in one line
        raise TacitError(f"--launcher slurm: sbatch refused the jobs: {first_line(err)}") from None
    return dict(zip(indices, jobs))


def _local(
    submitit: Any, sweep: Sweep, out: Path, indices: Sequence[int], how: Launch, say: Say
) -> None:
    """Processes on this machine, `parallel` at a time, each with its own GPUs (CUDA_VISIBLE_
    DEVICES): a slot per group of GPUs, a cell in each free slot."""
    gpus = visible_gpus() if how.gpus_per_cell is None or how.gpus_per_cell > 0 else []
    per_cell = (1 if gpus else 0) if how.gpus_per_cell is None else how.gpus_per_cell
    parallel = how.parallel or (len(gpus) // per_cell if per_cell and gpus else 1)
    if per_cell * parallel > len(gpus):
        raise TacitError(
            f"--launcher local: {parallel} cell(s) at once with {per_cell} GPU(s) "
            f"each need {per_cell * parallel} GPUs; this machine shows "
            f"{len(gpus)}"
        )
    slots = []
    for slot in range(parallel):
        parameters = {"timeout_min": how.time_min, "gpus_per_node": per_cell, **how.options}
        if per_cell:  # the slot's own GPUs, set before the job's process starts
            own = ",".join(map(str, gpus[slot * per_cell : (slot + 1) * per_cell]))
            given = how.options.get("local_setup", [])
            given = [given] if isinstance(given, str) else list(given)
            parameters["local_setup"] = [f"export CUDA_VISIBLE_DEVICES={own}", *given]
        slots.append(_executor(submitit, out / LOGS, "local", parameters))
    waiting, busy = list(indices), dict[int, tuple[int, Any]]()
    try:
        while waiting or busy:
            for slot, executor in enumerate(slots):
                if slot not in busy and waiting:
                    index = waiting.pop(0)
                    busy[slot] = (index, executor.submit(run_job, sweep, str(out), index))
                    say(
                        f"cell {index} {sweep.cells[index].name}: started (process "
                        f"{busy[slot][1].job_id}, slot {slot})"
                    )
            for slot, (index, job) in list(busy.items()):
                if job.done():
                    _report(sweep, out, index, job, say)
                    del busy[slot]
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        for _, job in busy.values():
            job.cancel()  # SIGINT: each cell keeps its checkpoint for the next run
        raise


def _wait(sweep: Sweep, out: Path, jobs: dict[int, Any], say: Say) -> None:
    """Wait for every job, saying how each ended as it ends."""
    left = dict(jobs)
    try:
        while left:
            for index, job in list(left.items()):
                if job.done():
                    _report(sweep, out, index, job, say)
                    del left[index]
            if left:
                time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        ids = ", ".join(str(job.job_id) for job in left.values())
        say(
            f"stopped waiting: the jobs go on ({ids}); run the same command again to see the "
            "cells' states (complete cells are skipped)"
        )
        raise


def _report(sweep: Sweep, out: Path, index: int, job: Any, say: Say) -> None:
    """One line for a finished job; a failed one's error (as the job recorded it, else the
    last line of what submitit says) and log, recorded in the folder."""
    cell = sweep.cells[index]
    error = job.exception()
    if error is None:
        say(f"cell {index} {cell.name}: {job.result()}")
        return
    message = (failure(out, cell) or {}).get("error") or _last_error(str(error))
    log = str(job.paths.stderr)
    record_failure(out, cell, message, log)
    say(f"cell {index} {cell.name}: failed: {message} (log: {log})")


def _last_error(text: str) -> str:
    """The exception line of a traceback (`module.Name: message`), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        head, colon, message = line.partition(": ")
        if colon and re.fullmatch(r"[\w.]+", head):
            return message if head.endswith("TacitError") else line
    return lines[-1] if lines else "failed"
