"""`python -m tacit.cli ...` (and `accelerate launch -m tacit.cli ...`) runs the command line."""

from tacit.console import run

run()
