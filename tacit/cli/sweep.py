"""`probe sweep`: a grid of runs (models x probes x norm sets x options x checkpoints) into one
folder, in this process, as separate jobs (`--cell`), or through a launcher (`--launcher`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tacit.cli.common import choice, user_errors

LAUNCHERS = ("local", "slurm")  # tacit.sweep.launch.LAUNCHERS (not imported: --help stays light)


def _shown(table: Any) -> str:
    """The cells' table: numbers to the right, text to the left (names read from the start)."""
    rows = [[str(c) for c in table.columns]]
    rows += [["" if v is None else str(v) for v in row] for row in table.itertuples(index=False)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(table.columns))]
    right = [table[c].dtype.kind in "iuf" for c in table.columns]
    return "\n".join(
        "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(row, widths, right)).rstrip()
        for row in rows
    )


@user_errors
def command(
    file: Annotated[Path, typer.Argument(help="The sweep file (TOML; see docs/scaling.md).")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The sweep's folder (default: `results/` and the file's "
            "name without `.toml`, e.g. `results/grid`).",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="List the cells, their state and at most how many "
            "prompts each scores; run nothing.",
        ),
    ] = False,
    list_cells: Annotated[
        bool,
        typer.Option(
            "--list", help="List the cells with their index, name and state; run nothing."
        ),
    ] = False,
    cell: Annotated[
        list[str] | None,
        typer.Option(
            "--cell",
            help="Only these cells, by index (`--list`): 3, 0-9 or 0,2,5-7; "
            "repeatable. One cell per job of a Slurm array: "
            "`--cell $SLURM_ARRAY_TASK_ID`.",
        ),
    ] = None,
    launcher: Annotated[
        str | None,
        choice(
            "--launcher",
            choices=LAUNCHERS,
            help="Run the cells as jobs through submitit "
            "(`pip install 'tacit-probe[cluster]'`): `slurm`, a job array; `local`, processes on "
            "this machine, one cell per GPU at a time. Waits for them.",
        ),
    ] = None,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel",
            help="With --launcher: cells at once (default: local, one per GPU; slurm, every cell).",
        ),
    ] = None,
    gpus_per_cell: Annotated[
        int | None,
        typer.Option(
            "--gpus-per-cell",
            help="With --launcher: GPUs per cell (default 1 on "
            "Slurm; local: 1 where there are GPUs, else 0).",
        ),
    ] = None,
    partition: Annotated[
        str | None, typer.Option("--partition", help="With --launcher slurm: the partition.")
    ] = None,
    time_min: Annotated[
        int, typer.Option("--time", help="With --launcher: each cell's time limit, minutes.")
    ] = 24 * 60,
    launcher_option: Annotated[
        list[str] | None,
        typer.Option(
            "--launcher-option",
            help="With --launcher: a further submitit parameter "
            "KEY=VALUE (slurm_account=..., mem_gb=32, cpus_per_task=8); "
            "repeatable.",
        ),
    ] = None,
) -> None:
    """Run a grid (models x probes x norm sets x options x checkpoints), one run directory per
    cell.

    Cells already complete are skipped and an interrupted cell resumes, so running the same
    sweep again goes on where it stopped (and, with --launcher, submits only the cells that
    failed or never ran). A cell is run by one process at a time: jobs that share the folder
    skip a cell another one is running or has completed.
    """
    from tacit.core.errors import TacitError
    from tacit.sweep import Launch, default_folder, failures, read_sweep, run_sweep, sweep_cells
    from tacit.sweep.launch import parse_options

    folder = out or default_folder(file)
    with_launcher = parallel, gpus_per_cell, partition, launcher_option
    if launcher is None and any(v is not None for v in with_launcher):
        raise TacitError(
            "--parallel, --gpus-per-cell, --partition and --launcher-option go with --launcher"
        )
    sweep = read_sweep(file)
    if dry_run or list_cells:
        table = sweep_cells(sweep, folder, cell, estimate=dry_run)
        typer.echo(_shown(table))
        done = int((table["state"] == "complete").sum())
        typer.echo(f"{len(table)} cell(s), {done} complete, {len(table) - done} to run in {folder}")
        return
    how = None
    if launcher is not None:
        how = Launch(
            launcher,
            parallel,
            gpus_per_cell,
            partition,
            time_min,
            parse_options(launcher_option or []),
        )
    before = sweep_cells(sweep, folder, cell)
    table = run_sweep(sweep, folder, cells=cell, launch_with=how)
    typer.echo(_shown(table))
    done_before = int((before["state"] == "complete").sum())
    now = table["state"].value_counts()
    failed = failures(sweep, folder, table)
    typer.echo(
        f"{len(table)} cell(s) in {folder}: {int(now.get('complete', 0)) - done_before} "
        f"run now, {done_before} already complete, {len(failed)} failed"
    )
    if failed:
        for line in failed:
            typer.echo(line, err=True)
        raise TacitError(
            f"{len(failed)} cell(s) failed (above); run the same command again to retry them"
        )
