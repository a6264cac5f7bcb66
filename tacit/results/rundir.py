"""The run directory: every file written whole, to a temporary name and then renamed."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path

import pandas as pd

from tacit.errors import TacitError

FLOAT_FORMAT = "%.8g"  # float32 scores hold about 7 significant digits


def default_run_dir(probe: str, now: datetime | None = None) -> Path:
    """results/<probe>/<timestamp>, relative to the working directory."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return Path("results") / probe / stamp


def prepare_run_dir(out: str | Path) -> Path:
    """Create the run directory (and parents) or say clearly why it cannot be written."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise TacitError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_file = tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-", delete=True)
        probe_file.close()
    except OSError as err:
        raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None
    return out


def write_atomic(path: Path, text: str) -> None:
    """Write text to a temporary file beside `path`, then rename it into place."""
    handle = tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False, encoding="utf-8"
    )
    try:
        with handle:
            handle.write(text)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def write_table(path: Path, table: pd.DataFrame) -> None:
    """A CSV written whole, floats at float32 precision."""
    write_atomic(path, table.to_csv(index=False, float_format=FLOAT_FORMAT, lineterminator="\n"))


def write_json(path: Path, record: dict) -> None:
    """A JSON file written whole."""
    write_atomic(path, json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n")
