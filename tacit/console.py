"""The `probe` console script. It sits outside tacit.cli so that an interruption while the
command line itself is being imported also ends with the one-line message, not a traceback."""

from __future__ import annotations


def run() -> None:
    """Run `probe`; Ctrl-C at any moment exits 130 (SIGTERM 143) with one line on stderr."""
    try:
        from tacit.cli import app

        app(prog_name="probe")
    except KeyboardInterrupt as stop:
        from tacit.cli.common import interrupted

        raise SystemExit(interrupted(stop).exit_code) from None


if __name__ == "__main__":
    run()
