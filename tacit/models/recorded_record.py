"""What a recorded model's manifest record holds beyond every model's: a light declaration
(the family's, tacit.models.recorded, reads it without the scorer's numpy)."""

from __future__ import annotations

from typing import Any

from tacit.core.manifest import ModelRecord


class RecordedRecord(ModelRecord, total=False):
    """What a recorded model's record adds (tacit.models.recorded_answers.RecordedScorer)."""

    # the file (path, sha256, layout), what was read of it (rows, lines repaired, completions,
    # finish reasons inferred) and what was asked of it (requests answered, requests it had
    # no completion for, with examples)
    recorded: dict[str, Any]
