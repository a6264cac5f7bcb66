"""`probe retrieve`: concept retrieval (tacit.probes.retrieve), its options as the probe
declares them."""

from __future__ import annotations

from tacit.cli.probe_command import probe_command

command = probe_command("retrieve")
