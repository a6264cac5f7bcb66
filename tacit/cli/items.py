"""`probe items FILE`: your own cloze items (tacit.probes.items), its options as the probe
declares them."""

from __future__ import annotations

from tacit.cli.probe_command import probe_command

command = probe_command("items")
