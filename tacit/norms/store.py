"""Remember an installed norms file, and find the norms file a run should use."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tacit.errors import TacitError
from tacit.files import file_sha256, write_atomic
from tacit.norms.reader import NormSet, read_norms
from tacit.paths import config_dir

NORMS_ENV = "TACIT_NORMS"

HOW_TO_GET_NORMS = (
    "the CSLB norms are handed out by the Centre for Speech, Language and the Brain (Cambridge) "
    "after registration; download norms.dat, then run `probe norms install PATH/TO/norms.dat` "
    f"once, or pass --norms PATH, or set {NORMS_ENV}=PATH"
)


def _config_file() -> Path:
    return config_dir() / "norms.json"


def install_norms(path: str | Path) -> NormSet:
    """Validate a norms file and remember its absolute path and sha256 for later runs."""
    norms = read_norms(path)
    target = _config_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        record = {"path": str(Path(path).resolve()), "sha256": norms.sha256}
        write_atomic(target, json.dumps(record, indent=2) + "\n")
    except OSError as err:
        raise TacitError(
            f"{target}: cannot remember the norms file there ({err.strerror})"
        ) from None
    return norms


def installed_norms_path() -> Path | None:
    """The installed norms file, checked to be unchanged since installation; None if none."""
    target = _config_file()
    if not target.is_file():
        return None
    try:
        record = json.loads(target.read_text())
        path = Path(record["path"])
        sha = record["sha256"]
    except (ValueError, KeyError, TypeError):
        raise TacitError(f"{target}: unreadable; run `probe norms install PATH` again") from None
    if not path.is_file():
        raise TacitError(
            f"the installed norms file {path} is gone; run `probe norms install PATH` again"
        )
    if file_sha256(path) != sha:
        raise TacitError(
            f"the installed norms file {path} changed since it was installed; run "
            "`probe norms install PATH` again to validate it"
        )
    return path


def resolve_norms_path(option: str | Path | None) -> Path:
    """--norms if given, else the installed norms, else $TACIT_NORMS, else a clear error."""
    if option:
        return Path(option)
    installed = installed_norms_path()
    if installed is not None:
        return installed
    if os.environ.get(NORMS_ENV):
        return Path(os.environ[NORMS_ENV])
    raise TacitError(f"no norms file: {HOW_TO_GET_NORMS}")


def load_norms(option: str | Path | None = None) -> NormSet:
    """Read the norms a run should use (see resolve_norms_path)."""
    return read_norms(resolve_norms_path(option))
