"""The benchmark scripts import what they use from tacit (CI's smoke run found one that did not).

They are not run here (CI runs one --quick); ``--help`` imports every module a script names.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(path for path in BENCH.glob("bench_*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.name for path in SCRIPTS])
def test_a_benchmark_script_imports_and_says_its_options(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--quick" in done.stdout
