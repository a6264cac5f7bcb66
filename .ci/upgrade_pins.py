"""The pinned toolchain: constraints/dev.txt holds the exact version of everything CI and the test
command install beside tacit's own runtime requirements (which stay ranges in pyproject.toml, as
a library's should): ruff, mypy, pytest, the docs toolchain, the dev extra's accelerate, peft
and submitit, all that they pull in, and pip and setuptools, which install and build tacit.

    python .ci/upgrade_pins.py          # the newest versions, resolved in a fresh environment
    python .ci/upgrade_pins.py --check  # this environment installed nothing unpinned (CI)

An upgrade rewrites the file; commit it on its own, once CI passes with it (docs/development.md).
The pins are resolved for the Python that runs this script (CI's python3).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import re
import subprocess
import sys
import tempfile
import venv
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PINS = REPO / "constraints" / "dev.txt"
EXTRAS = "dev,docs"
ALWAYS = ("pip", "setuptools")  # they install and build tacit, whoever else requires them
HEADER = """\
# The exact versions of everything CI and the test command install beside tacit's own runtime
# requirements (those stay ranges, in pyproject.toml). Used by .ci/run and the README's set-up:
#   pip install -c constraints/dev.txt -e ".[dev,docs]"
# Written by `python .ci/upgrade_pins.py` (the newest versions, resolved in a fresh virtual
# environment); an upgrade is a commit of its own that passes CI (docs/development.md).
"""


def canonical(name: str) -> str:
    """A distribution's name as pip compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(project: str = "tacit-probe", extras: tuple[str, ...] = ()) -> set[str]:
    """The project and everything its requirements pull in here, with those extras of it."""
    from packaging.requirements import Requirement

    seen: set[tuple[str, str]] = set()
    todo = [(project, extra) for extra in ("", *extras)]
    while todo:
        name, extra = todo.pop()
        if (canonical(name), extra) in seen:
            continue
        seen.add((canonical(name), extra))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # a requirement whose marker this platform does not meet
        for text in requires:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
                todo += [(requirement.name, e) for e in ("", *requirement.extras)]
    return {name for name, _ in seen}


def environment_pins() -> dict[str, str]:
    """What `pip install -e ".[dev,docs]"` installed here beside tacit's runtime requirements
    and theirs (other packages of the environment are not CI's): name -> version."""
    beside = closure(extras=tuple(EXTRAS.split(","))) - closure() | set(ALWAYS)
    installed = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}
    return {name: installed[name] for name in sorted(beside) if name in installed}


def read_pins(path: Path = PINS) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonical(name)] = version
    return pins


def check() -> int:
    """0 when this environment holds exactly the pinned versions beside the runtime closure;
    else 1, naming each package unpinned, at another version, or pinned and not installed."""
    want, have = read_pins(), environment_pins()
    problems = [f"{n}=={v} is installed and not pinned" for n, v in have.items() if n not in want]
    problems += [
        f"{n} is pinned at {v} and installed at {have[n]}"
        for n, v in want.items()
        if n in have and have[n] != v
    ]
    problems += [f"{n}=={v} is pinned and not installed" for n, v in want.items() if n not in have]
    for problem in problems:
        print(f"error: {PINS.relative_to(REPO)}: {problem}", file=sys.stderr)
    if problems:
        print("run `python .ci/upgrade_pins.py` and commit the file on its own", file=sys.stderr)
        return 1
    print(f"{PINS.relative_to(REPO)}: the {len(want)} pinned versions are the ones installed")
    return 0


def torch_requirement() -> str:
    """The torch CI installs first (the CPU build), as .ci/run says it."""
    found = re.search(r"torch==[\w.+]+", (REPO / ".ci" / "run").read_text())
    if found is None:
        raise SystemExit("error: .ci/run names no torch==VERSION")
    return found.group(0)


def upgrade() -> int:
    """Resolve the newest versions in a fresh virtual environment, as CI installs them without
    pins, and rewrite the pins."""
    with tempfile.TemporaryDirectory(prefix="tacit-pins-") as folder:
        venv.create(folder, with_pip=True)
        python = str(Path(folder) / "bin" / "python")

        def pip(*args: str) -> None:
            print("pip install", " ".join(args), flush=True)
            subprocess.run([python, "-m", "pip", "install", "--quiet", *args], check=True)

        pip("--upgrade", *ALWAYS)
        pip(torch_requirement())
        pip("-e", f"{REPO}[{EXTRAS}]")
        listed = subprocess.run(
            [python, __file__, "--list"], check=True, capture_output=True, text=True
        ).stdout
    resolved = (
        f"# Resolved {datetime.date.today().isoformat()} with Python {platform.python_version()}"
        f" on {platform.system()} {platform.machine()}.\n"
    )
    PINS.parent.mkdir(exist_ok=True)
    PINS.write_text(HEADER + resolved + listed)
    print(f"{PINS.relative_to(REPO)}: {len(listed.splitlines())} pins; git diff shows the moves")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare this environment with the pins")
    mode.add_argument("--list", action="store_true", help="print this environment's pins")
    args = parser.parse_args()
    if args.check:
        return check()
    if args.list:
        print(
            "".join(f"{name}=={version}\n" for name, version in environment_pins().items()), end=""
        )
        return 0
    return upgrade()


if __name__ == "__main__":
    sys.exit(main())
