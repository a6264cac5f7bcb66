"""Under CI, a test that skips for want of something CI provides fails the run.

CI (`.ci/run`, which sets TACIT_CI=1) installs everything the tests can use: the dev and docs
extras, Chromium for the report's browser test, and ../shared's data beside the clone. A test
that skips there has checked nothing while the run reports success, so under TACIT_CI a skip
fails the run, listed with its reason, unless the reason is one CI cannot change
(SKIPS_CI_ALLOWS). Elsewhere a skip stays a skip that says why. tests/conftest.py registers
this plugin; tests/test_ci_skips.py shows it failing a run.
"""

from __future__ import annotations

import os

import pytest

SKIPS_CI_ALLOWS = (
    "running as root: a read-only directory can still be written",
    "before the interruption",  # the start-up test: the run ended before its signal came
    "sweep files need Python 3.11",  # tomllib, on Python 3.10
    "all tests skipped by +SKIP option",  # doctests that show a real model or a real run
    # Peers and trackers CI leaves out on purpose (heavy, and their own pins): the recorded
    # minicons and lm-evaluation-harness runs in tests/ are checked in their place.
    "minicons is not installed",
    "lm-evaluation-harness is not installed",
    "wandb is not installed",
    "mlflow is not installed",
    "llama-cpp-python is not installed",  # it builds from source: slow (tests/real)
    "(or all) runs it",  # real checkpoints beyond SmolLM2: CI's time budget (tests/real)
)
_unexpected: list[str] = []


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # (path, line, "Skipped: why")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _record(report: pytest.TestReport | pytest.CollectReport) -> None:
    if os.environ.get("TACIT_CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = _reason(report)
        if not any(allowed in reason for allowed in SKIPS_CI_ALLOWS):
            _unexpected.append(f"{report.nodeid}: {reason}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _record(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _unexpected and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter) -> None:
    if _unexpected:
        terminalreporter.section("skipped under CI, which provides what they need", red=True)
        for line in _unexpected:
            terminalreporter.line(line)
        terminalreporter.line(
            f"{len(_unexpected)} skip(s) fail this run: TACIT_CI is set (tests/ci_skips.py)"
        )
