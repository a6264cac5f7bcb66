"""A sweep's cells in its folder: each cell's state, which cells a selection names, and running
cells in this process, each owned by one process at a time.

The sweep folder is the only state processes share: a cell's run directory (complete once its
manifest.json is written; interrupted while it holds a checkpoint), and in `.sweep/` a lock file
per cell (tacit.core.locks: held while a process runs the cell, released by the system however
the process ends) and a record of the last failure of a cell that failed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

import pandas as pd

from tacit.core.errors import TacitError, first_line
from tacit.core.files import RECORD_LIMIT, json_text, read_input, write_atomic
from tacit.core.locks import file_lock, holder
from tacit.core.options import RunOptions
from tacit.probes import registry
from tacit.results.rundir import PARTIAL
from tacit.sweep.spec import Cell, Sweep

STATE_DIR = ".sweep"  # in the sweep folder: NAME.lock and NAME.failed per cell
LOCK_WAIT = 5.0  # seconds a process waits for a cell's lock (a state check holds it briefly)
CELL_COLUMNS = ["index", "cell", "probe", "model", "norms", "step", "state"]
Say = Callable[[str], None]


def default_folder(path: str | Path) -> Path:
    """Where a sweep goes unless told: results/ and the file's name without its suffix."""
    return Path("results") / Path(path).stem


def lock_file(out: Path, cell: Cell) -> Path:
    return out / STATE_DIR / f"{cell.name}.lock"


def failure_file(out: Path, cell: Cell) -> Path:
    return out / STATE_DIR / f"{cell.name}.failed"


def running(out: Path, cell: Cell) -> int | None:
    """The process id of the process running the cell now (0 where it cannot be told), or None
    where no process holds the cell's lock."""
    lock = lock_file(out, cell)
    if not lock.is_file():
        return None
    try:
        with file_lock(lock, "the cell", wait=0):
            return None
    except TacitError:
        return holder(lock) or 0


def failure(out: Path, cell: Cell) -> dict[str, Any] | None:
    """The record of the cell's last failure ({"error", "log"}), or None."""
    try:
        record = json.loads(read_input(failure_file(out, cell), limit=RECORD_LIMIT))
    except (OSError, ValueError, TacitError):
        return None
    return record if isinstance(record, dict) else {"error": "unreadable failure record"}


def record_failure(out: Path, cell: Cell, error: str, log: str | None = None) -> None:
    with suppress(OSError):  # the state table says less; the failure itself was said
        write_atomic(failure_file(out, cell), json_text({"error": error, "log": log}))


def cell_state(out: Path, cell: Cell) -> str:
    """complete, running (process N), failed, interrupted or to run."""
    directory = out / cell.name
    if (directory / "manifest.json").is_file():
        return "complete"
    owner = running(out, cell)
    if owner is not None:
        return f"running (process {owner})" if owner else "running"
    if failure_file(out, cell).is_file():
        return "failed"
    return "interrupted" if (directory / PARTIAL).is_dir() else "to run"


def cells_table(sweep: Sweep, out: Path, indices: Sequence[int]) -> pd.DataFrame:
    """CELL_COLUMNS for the cells at `indices`: what `--list` prints."""
    rows = []
    for index in indices:
        cell = sweep.cells[index]
        step = cell.checkpoint.step if cell.checkpoint else None
        rows.append(
            {
                "index": index,
                "cell": cell.name,
                "probe": cell.probe,
                "model": cell.label,
                "norms": cell.norms or "",
                "step": "" if step is None else step,
                "state": cell_state(out, cell),
            }
        )
    return pd.DataFrame(rows, columns=CELL_COLUMNS)


def select(sweep: Sweep, given: Sequence[str] | str | None) -> list[int]:
    """The cell indices a selection names: `3`, `0-9`, `0,2,5-7` (several allowed); every cell
    when none is given."""
    count = len(sweep.cells)
    if given is None or (not isinstance(given, str) and not given):
        return list(range(count))
    chosen: list[int] = []
    for text in [given] if isinstance(given, str) else given:
        for part in str(text).split(","):
            match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if not match:
                raise TacitError(f"--cell {text}: expected indices such as 3, 0-9 or 0,2,5-7")
            first, last = int(match.group(1)), int(match.group(2) or match.group(1))
            if last < first or last >= count:
                raise TacitError(
                    f"--cell {text}: the sweep has {count} cell(s), 0-{count - 1} (see --list)"
                )
            chosen += range(first, last + 1)
    return list(dict.fromkeys(chosen))


def estimated_prompts(cell: Cell) -> int | None:
    """At most how many prompts the cell scores, as its probe estimates from its inputs alone
    (None where that needs the models)."""
    probe = registry.get(cell.probe)
    return probe.estimate(probe.validate(cell.given(), context="sweep"))


def run_cell(cell: Cell, directory: Path, run: dict[str, Any], record: dict[str, Any]) -> None:
    """Run one cell into its directory, resuming its checkpoint if it was interrupted; the
    manifest records the cell (`sweep`)."""
    from tacit.api import run_probe

    resume = (directory / PARTIAL / "plan.json").is_file()
    revision = cell.checkpoint.revision if cell.checkpoint else None
    extra: dict[str, Any] = {"revision": revision} if revision is not None else {}
    options = RunOptions(**run, **extra, checkpoint=directory / PARTIAL, resume=resume)
    result = run_probe(cell.probe, [cell.model], cell.given(), options, context="sweep")
    result.manifest["sweep"] = record  # type: ignore[typeddict-item]
    result.save(directory, overwrite=True)


def run_one(sweep: Sweep, out: Path, index: int, head: str, say: Say) -> str:
    """Run the cell at `index` unless another process holds it or has completed it: its
    outcome, `complete`, `running` (left to its owner) or `failed` (recorded in the folder)."""
    cell = sweep.cells[index]
    lock = lock_file(out, cell)
    with ExitStack() as held:
        try:
            held.enter_context(file_lock(lock, f"sweep cell {cell.name}", wait=LOCK_WAIT))
        except TacitError:
            say(f"{head}: running in process {holder(lock) or '?'}: left to it")
            return "running"
        directory = out / cell.name
        if (directory / "manifest.json").is_file():
            say(f"{head}: complete (by another process)")
            return "complete"
        resumed = (directory / PARTIAL).is_dir()
        say(f"{head}: {'resuming' if resumed else 'running'}")
        started = time.monotonic()
        try:
            run_cell(cell, directory, sweep.run, cell.record(index, sweep.path))
        except Exception as err:  # noqa: BLE001 - a failed cell must not stop the others
            if isinstance(err, TacitError):
                error = first_line(err)
            else:  # not a user mistake: the whole traceback, for a report
                say(traceback.format_exc().rstrip())
                error = f"{type(err).__name__}: {first_line(err)}"
            record_failure(out, cell, error)
            say(f"{head}: failed: {error}")
            return "failed"
        failure_file(out, cell).unlink(missing_ok=True)
        say(f"{head}: complete in {time.monotonic() - started:.1f} s")
        return "complete"


def prepare_folder(out: Path) -> None:
    try:
        (out / STATE_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None


def run_cells(sweep: Sweep, out: Path, indices: Sequence[int], say: Say) -> dict[int, str]:
    """Run the cells at `indices` one after another in this process, a line for each (its
    index and name, then its progress bar); a cell that fails is recorded and the others go
    on. Each cell's outcome (run_one)."""
    prepare_folder(out)
    outcomes = {}
    for position, index in enumerate(indices, 1):
        head = f"[{position}/{len(indices)}] cell {index} {sweep.cells[index].name}"
        outcomes[index] = run_one(sweep, out, index, head, say)
    return outcomes


def run_job(sweep: Sweep, out: str, index: int) -> str:
    """One cell as a launcher's job (tacit.sweep.launch): its outcome, or an error that fails
    the job when the cell failed."""
    head = f"cell {index} {sweep.cells[index].name}"
    devices = os.environ.get("CUDA_VISIBLE_DEVICES")
    print(
        f"{head}: on {socket.gethostname()}, CUDA_VISIBLE_DEVICES="
        f"{'unset' if devices is None else devices}",
        flush=True,
    )
    outcome = run_one(sweep, Path(out), index, head, lambda line: print(line, flush=True))
    if outcome == "failed":
        raise TacitError((failure(Path(out), sweep.cells[index]) or {}).get("error", "failed"))
    return outcome
