"""Data-parallel runs under `accelerate launch` or `torchrun`.

Those launchers start N copies of the command with WORLD_SIZE, RANK and LOCAL_RANK (and
MASTER_ADDR/PORT) in the environment; we run on them rather than on a scheduler of our own.
Each process scores a deterministic shard of the distinct work keys of every chunk
(tacit.engine.runner); the shards are gathered to every process, and only the main one (rank 0)
writes the run directory. The process group starts lazily (gloo on CPU, nccl on CUDA) with a
timeout, so that a process that dies makes the others fail with one line instead of waiting
forever.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from tacit.core.errors import TacitError

TIMEOUT_ENV = "TACIT_DIST_TIMEOUT"  # seconds a process waits for the others (default 1800)
EXIT_ENV = "TACIT_DIST_TEST_EXIT_RANK"  # tests: RANK[@N]: this rank exits at its N-th gather


@dataclass(frozen=True)
class World:
    """This process's place in the run: rank (0 is the main process) of size processes."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1


def world() -> World:
    """The launch this process is part of (a single process when not launched)."""
    size = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if size <= 1:
        return World()
    rank = int(os.environ.get("RANK", "0"))
    return World(rank, size, int(os.environ.get("LOCAL_RANK", str(rank))))


def launch_problem() -> str | None:
    """A launcher that meant several processes but started this one alone (it set MASTER_ADDR,
    which only a multi-process launch needs, and no WORLD_SIZE): `accelerate launch --cpu
    --num_processes 2` does this with accelerate 1.15. The run is then one process; say so."""
    if world().distributed or "MASTER_ADDR" not in os.environ:
        return None
    return (
        "a launcher set MASTER_ADDR but no WORLD_SIZE: this run is one process, not "
        "data-parallel (accelerate launch --cpu starts one; on CPUs use torchrun "
        "--nproc_per_node N -m tacit.cli ...)"
    )


def is_main() -> bool:
    """Whether this process writes the run's files (always, without a launcher)."""
    return world().main


def _group() -> Any:
    """torch.distributed, its process group started on first use."""
    import torch
    import torch.distributed as dist

    if not dist.is_initialized():
        here = world()
        cuda = torch.cuda.is_available()
        if cuda:
            torch.cuda.set_device(here.local_rank)  # "cuda" then means this process's GPU
        seconds = float(os.environ.get(TIMEOUT_ENV, "1800"))
        try:
            dist.init_process_group(
                "nccl" if cuda else "gloo",
                rank=here.rank,
                world_size=here.size,
                timeout=timedelta(seconds=seconds),
            )
        except Exception as err:  # noqa: BLE001 - any failure to meet is the user's to see
            raise TacitError(f"process {here.rank} of {here.size}: {_first_line(err)}") from None
    return dist


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def gather(value: Any) -> list[Any]:
    """Every process's `value`, in rank order, on every process. A process that stopped (or
    does not answer within TACIT_DIST_TIMEOUT seconds) ends the run with one line."""
    here = world()
    if not here.distributed:
        return [value]
    dist = _group()
    values: list[Any] = [None] * here.size
    try:
        dist.all_gather_object(values, value)
    except Exception as err:  # noqa: BLE001 - a peer gone shows as any backend error
        raise TacitError(
            f"data-parallel run failed: process {here.rank} of {here.size} lost the others "
            f"({_first_line(err)}); a process stopped or ran out of memory, see its output"
        ) from None
    return values


_gathers = [0]


def test_exit() -> None:
    """For the tests of a process that dies mid-run: exit abruptly where EXIT_ENV says so
    (`1`: rank 1 at its first gather; `1@2`: at its second)."""
    rank, _, nth = os.environ.get(EXIT_ENV, "").partition("@")
    if rank == str(world().rank) and world().distributed:
        _gathers[0] += 1
        if _gathers[0] >= int(nth or 1):
            os._exit(3)


def broadcast(value: Any) -> Any:
    """The main process's `value`, on every process."""
    return gather(value)[0]


def shard(keys: list[Any]) -> set[Any]:
    """This process's share of distinct `keys` (in a fixed order): every size-th one."""
    here = world()
    return set(keys[here.rank :: here.size])


def finish() -> None:
    """Leave the process group (at the end of a command)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
