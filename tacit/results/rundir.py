"""The run directory: where it goes, and making sure it can be written (see tacit.files for how
its files are written)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path

from tacit.errors import TacitError


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
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
            pass
    except OSError as err:
        raise TacitError(f"--out {out}: cannot write there ({err.strerror})") from None
    return out


@contextmanager
def run_dir(out: str | Path) -> Iterator[Path]:
    """Prepare the run directory; if the run fails, remove it again when we made it and it
    is still empty, so a failed run leaves nothing behind."""
    out = Path(out)
    existed = out.exists()
    path = prepare_run_dir(out)
    try:
        yield path
    except BaseException:
        if not existed:
            with suppress(OSError):
                path.rmdir()  # only succeeds while empty
        raise
