"""`probe pragmeval`: PragmEval on frozen models (tacit.probes.pragmeval), its options as the
probe declares them."""

from __future__ import annotations

from tacit.cli.probe_command import probe_command

command = probe_command("pragmeval")
