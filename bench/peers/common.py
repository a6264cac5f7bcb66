"""What every runner of bench_peers.py shares: read the job, time the scoring, write the result.

A runner is a small script that imports one tool (tacit or a peer) and nothing of tacit's
bench, so that it runs in that tool's own environment: `python run_X.py JOB.json OUT.json`.
JOB.json (written by bench_peers.py) holds `kind` (causal | masked), `model` (a directory),
`templates` (each with one `<mask>`), `spans`, `sentences` (template-major: every span in every
template's blank), `batch_size` and `threads`. OUT.json gets `scores` (one per sentence,
template-major), `load_s`, `score_s`, `version` and whatever else the runner measured.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

BLANK = "<mask>"


def read_job() -> dict[str, Any]:
    """The job named by the first argument, with torch held to its thread count."""
    import torch

    job = json.loads(Path(sys.argv[1]).read_text())
    torch.set_num_threads(job["threads"])
    return job


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    """work()'s value and its wall-clock seconds."""
    start = time.perf_counter()
    value = work()
    return value, time.perf_counter() - start


def write_result(package: str, scores: list[float], load_s: float, score_s: float, **extra: Any):
    """The result file named by the second argument (scores as plain floats)."""
    record = {
        "version": version(package),
        "scores": [float(s) for s in scores],
        "load_s": load_s,
        "score_s": score_s,
        **extra,
    }
    Path(sys.argv[2]).write_text(json.dumps(record))
