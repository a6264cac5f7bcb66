"""`python -m tacit.cli ...` (and `accelerate launch -m tacit.cli ...`) runs the command line.

Only as the main module: importing this file (a tool that walks every module of tacit) must not
run `probe`, whose exit leaves Ctrl-C and SIGTERM ignored in that process."""

from tacit.console import run

if __name__ == "__main__":
    run()
