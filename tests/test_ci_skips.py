"""Under TACIT_CI a skip for want of something CI provides fails the run; a skip CI cannot
avoid, and every skip elsewhere, does not (tests/ci_skips.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SKIPS = """
import pytest


def test_runs():
    pass


def test_as_root():
    pytest.skip("running as root: a read-only directory can still be written")


def test_against_a_peer():
    pytest.skip("minicons is not installed (pip install minicons)")


@pytest.mark.skipif(True, reason="Chromium is not installed")
def test_in_a_browser():
    pass
"""


def run_pytest(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_planted.py").write_text(SKIPS)
    env = {k: v for k, v in os.environ.items() if k != "TACIT_CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    if ci:
        env["TACIT_CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_skips", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_under_ci_a_skip_for_want_of_what_ci_provides_fails_the_run(tmp_path):
    done = run_pytest(tmp_path, ci=True)
    assert done.returncode == 1, done.stdout
    assert "test_planted.py::test_in_a_browser: Chromium is not installed" in done.stdout
    assert "1 skip(s) fail this run" in done.stdout
    listed = done.stdout.split("skipped under CI")[1]
    assert "test_as_root" not in listed and "test_against_a_peer" not in listed


def test_elsewhere_a_skip_is_a_skip(tmp_path):
    done = run_pytest(tmp_path, ci=False)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 3 skipped" in done.stdout
