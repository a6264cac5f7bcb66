"""ProbeResult: what a probe run produced, how it reads, and how it is saved."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tacit.core import faults
from tacit.core.errors import TacitError
from tacit.core.files import json_text, table_text, write_files
from tacit.results.rundir import (
    PARTIAL,
    check_overwrite,
    prepare_run_dir,
    remove_leftovers,
    remove_stale,
)

if TYPE_CHECKING:
    import pandas as pd

    from tacit.core.manifest import Manifest
    from tacit.vocab.shared import Vocabulary

FigureBytes = Callable[[], bytes]


@dataclass
class ProbeResult:
    """What a probe run produced.

    Attributes:
        prompts: one row per prompt x model (prompts.csv; items.csv for NLI suites, one row
            per item x model x seed; configs.csv for PragmEval).
        summary: the per-condition means (summary.csv).
        vocab: the shared vocabulary scored over (vocab.txt); None where there is none.
        manifest: everything needed to rerun and to trust the numbers (manifest.json).
        extra: further tables by file stem, e.g. `dropped` (concepts left out and why; in
            elicitation, of which relation) or `excluded` (elicitation: features left out of
            the gold answers and why).
        rows_file: the file name of `prompts`.
        text: the summary as printed (the CLI prints it; `print(result)` too).
        notes: what a reader must know about the numbers, one line each starting `note:` or
            `warning:`: what was dropped and why, prompts cut to fit, a batch halved, vocabulary
            warnings (the CLI prints them on stderr).
        figures: file name -> a function that draws that figure and returns the file's bytes
            (drawn only when saved: matplotlib is not imported otherwise).
        files: further files by name (text or bytes), e.g. `candidates.txt` (the spans a run
            ranked); a name with `/` is written in a folder of the run (a matrix's files).
    """

    prompts: pd.DataFrame
    summary: pd.DataFrame
    vocab: Vocabulary | None
    manifest: Manifest
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    rows_file: str = "prompts.csv"
    text: str = ""
    notes: list[str] = field(default_factory=list)
    figures: dict[str, FigureBytes] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)

    @property
    def dropped(self) -> pd.DataFrame:
        """The concepts left out and why: `concept, reason` (retrieval), `concept, relation,
        reason` (elicitation: left out of that relation)."""
        if "dropped" not in self.extra:
            raise AttributeError(f"a {self.manifest.get('probe')} run drops no concepts")
        return self.extra["dropped"]

    def __str__(self) -> str:
        return "\n".join([self.text, *self.notes]).strip()

    def __repr__(self) -> str:
        """One line (probe, models, the primary metric per model, notes), not the tables."""
        from tacit.results.notebook import short_text

        return short_text(self)

    def _repr_html_(self) -> str:
        """What Jupyter shows: the printed summary, the notes and the main figure."""
        from tacit.results.notebook import html_text

        return html_text(self)

    def report(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        """Print the summary to `out` (stdout) and each note to `err` (stderr), as the CLI does."""
        print(self.text, file=out or sys.stdout)
        for note in self.notes:
            print(note, file=err or sys.stderr)

    def save(self, out: str | Path, *, overwrite: bool = False) -> Path:
        """Write the run directory: all of its files (tables, manifest, figures) appear together,
        each whole, or none does; manifest.json comes last, so a directory with it holds a whole
        run. A directory that already holds a run (or other files) is refused unless
        `overwrite`, which replaces the whole directory, stale files included. The run's
        checkpoint (`.partial`) goes only once everything is written: a save that fails (a full
        disk) or is killed leaves the scores to resume from."""
        from tacit.results.record import RESULT_FILE, result_record

        check_overwrite(Path(out), overwrite=overwrite, checkpoint_ours=True)
        out = prepare_run_dir(out)
        remove_leftovers(out)
        files: dict[str, str | bytes] = {}
        if self.vocab is not None:
            files["vocab.txt"] = self.vocab.text()
        files.update({f"{name}.csv": table_text(table) for name, table in self.extra.items()})
        files[self.rows_file] = table_text(self.prompts)
        files["summary.csv"] = table_text(self.summary)
        files.update(self.files)
        files.update({name: draw() for name, draw in self.figures.items()})
        files[RESULT_FILE] = json_text(result_record(self))  # how to read the tables back
        files["manifest.json"] = json_text(self.manifest)  # last: it marks the run complete
        try:
            for folder in {(out / name).parent for name in files} - {out}:
                folder.mkdir(parents=True, exist_ok=True)
            write_files(out, files, point="save")
        except OSError as err:
            raise TacitError(
                f"{out}: cannot write the run's files there ({err.strerror}); nothing of them "
                "was written"
            ) from None
        faults.point("save:written")
        shutil.rmtree(out / PARTIAL, ignore_errors=True)  # the checkpoint is no longer needed
        if overwrite:
            remove_stale(out, {name.split("/")[0] for name in files})
        return out


RetrievalResult = ProbeResult  # the name earlier versions exported
