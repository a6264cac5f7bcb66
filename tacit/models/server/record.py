"""What a served model's manifest record holds beyond every model's: a light declaration (the
family's, tacit.models.server, reads it without the scorer's numpy)."""

from __future__ import annotations

from typing import Any

from tacit.core.manifest import ModelRecord


class ServerRecord(ModelRecord, total=False):
    """What a served model's record adds (tacit.models.server.scorer)."""

    # the base URL (no secrets), the served model as /v1/models lists it, the engine and
    # version it reports, concurrency, timeout, retries allowed and made; for scoring, the
    # start token and who adds it, the consistency check's result, prompts per request, and
    # the tokenizer it plans with
    server: dict[str, Any]
