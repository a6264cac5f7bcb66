"""`probe surprisal FILE`: every token's (or word's) surprisal in your texts
(tacit.probes.surprisal), its options as the probe declares them."""

from __future__ import annotations

from tacit.cli.probe_command import probe_command

command = probe_command("surprisal")
