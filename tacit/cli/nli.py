"""`probe nli`: the NLI suites IMPPRES, NOPE and IMPLI (tacit.probes.nli), its options as the
probe declares them."""

from __future__ import annotations

from tacit.cli.probe_command import probe_command

command = probe_command("nli")
