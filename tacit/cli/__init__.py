"""The `probe` command line (its app: tacit.cli.commands, one module per command).

The package itself imports nothing, so that `python -m tacit.cli` reaches tacit.console's
handlers before any import that a Ctrl-C or SIGTERM could interrupt; `app` is loaded when first
asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tacit.cli.commands import app as app


def __getattr__(name: str) -> Any:
    if name == "app":
        from tacit.cli.commands import app

        return app
    raise AttributeError(f"module 'tacit.cli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return ["app"]
